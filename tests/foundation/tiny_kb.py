"""A tiny pairs KB: one converse pair, symmetric relations, one plain relation."""

HEADER = (
    "entity_id,label,description,inverse_entity_id,inverse_label,inverse_source,"
    "needs_review,is_symmetric,is_canonical,canonical_entity_id,example\n"
)
ROWS = [
    "R1,regulates,controls,R2,regulated by,passive_by,False,False,True,R1,",
    "R2,regulated by,,R1,regulates,ro,False,False,False,R1,",
    "S1,interacts with,,,,,False,True,True,S1,",
    "P1,has part,,,,,False,False,True,P1,",
    "E1,associates,,,,,False,True,True,E1,",
    "E2,associated with,,,,,False,True,True,E2,",
    "E3,linked with,,,,,False,True,True,E3,",
]
