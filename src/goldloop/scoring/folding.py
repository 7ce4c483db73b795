"""Folding both sides of a comparison through the KB, and direction agreement.

Before ids are compared, gold and predicted ids go through the same folding: a converse member
becomes its canonical id with the direction flipped (tier 0), then equivalence chains are followed
(tier 1). A system that answers "regulated by" is thus scored on the relation it picked.
"""

from __future__ import annotations

from goldloop.kb import KB


def fold_answer(
    kb: KB | None, entity_id: str | None, direction: str | None
) -> tuple[str | None, str | None]:
    """``(id, direction)`` after tiers 0 and 1; the id is ``kb.fold_id(entity_id)``.

    Each step through an equivalence folds the target, so a converse target flips the direction.
    Ids not in the KB pass unchanged; without a KB nothing changes.
    """
    if kb is None or entity_id is None:
        return entity_id, direction
    folded = kb.fold(entity_id, direction)
    while folded.entity_id in kb.equivalences:
        folded = kb.fold(kb.equivalences[folded.entity_id], folded.direction)
    return folded.entity_id, folded.direction


def direction_agrees(
    kb: KB | None, entity_id: str, gold: str | None, predicted: str | None
) -> bool | None:
    """Whether a predicted direction agrees with gold on a relation both sides agree on.

    None when not comparable: gold has no determinable direction (absent or ``na``) or the system
    gave none. On a symmetric relation every direction agrees.
    """
    if gold in (None, "na") or predicted is None:
        return None
    relation = kb.get(entity_id) if kb is not None else None
    if relation is not None and relation.is_symmetric:
        return True
    return gold == predicted
