"""Tests mirror the code: every module of ``src/goldloop`` has its test file, found by one rule.

- ``goldloop/a/b.py`` → ``tests/a/test_b.py``, or a folder ``tests/a/b/`` holding ``test_*.py``
  files (for a module with many test files, as ``tests/kb/derive/``);
- ``goldloop/a/__init__.py`` → ``tests/a/test_init.py`` (or ``tests/a/init/``);
- a module with no code (only a docstring, imports, ``__all__`` and classes with only a
  docstring: an empty ``__init__``, a re-export, an error type) needs none.

The rest is :data:`EXCEPTIONS`, each with the reason it has no test file of its own. The check
fails on a module that has neither, and on an exception that no longer holds (the module is
gone, has no code, or has its test file now), so the list stays short and true.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "goldloop"
TESTS = REPO / "tests"

# module (dotted, under goldloop) → why it has no test file of its name
EXCEPTIONS: dict[str, str] = {
    # The version string and nothing else (tests/cli/test_init.py checks `--version`).
    "__init__": "only __version__, checked through `goldloop --version`",
    # Thin CLI doors: options and wording, tested through the tests of their command's workflow.
    "cli.backend": "thin door for `goldloop backend`; tests/backend/test_serve.py runs it",
    "cli.baselines": "thin door; tests/scoring/test_baselines.py runs `goldloop baselines`",
    "cli.curate": "thin door; tests/studio/test_curate.py runs `goldloop curate`",
    "cli.demo": "thin door; test_recorded_outputs.py runs `goldloop demo`",
    "cli.effect": "thin door; tests/studio/test_campaign_effect.py runs `goldloop effect`",
    "cli.gold": "thin door for `goldloop gold`; test_recorded_outputs.py runs it",
    "cli.interchange": "thin door; tests/interchange/ run `goldloop export/import`",
    "cli.kb": "thin door; tests/kb/derive/test_cli.py runs `goldloop kb derive`",
    "cli.llm_options": "the LLM commands' shared options; tests/cli/test_annotate.py runs them",
    "cli.loop": "thin doors of push/pull/sync; tests/studio/test_loop.py, test_sync.py run them",
    "cli.pool": "thin door; tests/scoring/test_pooled.py runs `goldloop pool`",
    "cli.precision": "thin door; tests/precision/ and tests/studio/test_precision_project.py run it",
    "cli.sample": "thin door; tests/text/test_parse_cache.py, test_recorded_outputs.py run it",
    "cli.sheet": "thin door; tests/sheets/test_review_sheet.py runs `goldloop sheet`",
    "cli.studio": "thin door; tests/studio/test_webhooks.py, tests/stack/ run `goldloop studio`",
    # One interface, three wire formats: tested together against the fake provider server.
    "llm.anthropic": "a provider; tests/llm/test_providers.py runs every provider's wire format",
    "llm.gemini": "a provider; tests/llm/test_providers.py runs every provider's wire format",
    "llm.openai": "a provider; tests/llm/test_providers.py runs every provider's wire format",
    "llm.base": "the Provider base; tests/llm/test_providers.py tests it through each provider",
}


def has_code(path: Path) -> bool:
    """False for a module of only a docstring, imports and ``__all__`` (nothing to test)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.ClassDef) and all(
            isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in node.body
        ):
            continue  # an error type: a class with only its docstring
        if isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            continue
        return True
    return False


def dotted(path: Path, src: Path) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def places_for(path: Path, src: Path, tests: Path) -> list[Path]:
    """Where the rule looks for ``path``'s tests: a test file, or a folder of them."""
    relative = path.relative_to(src)
    name = "init" if relative.stem == "__init__" else relative.stem
    folder = tests / relative.parent
    return [folder / f"test_{name}.py", folder / name]


def has_tests(place: Path) -> bool:
    return place.is_file() or (place.is_dir() and any(place.glob("test_*.py")))


def modules_with_code(src: Path) -> dict[str, Path]:
    return {dotted(p, src): p for p in sorted(src.rglob("*.py")) if has_code(p)}


def missing_tests(src: Path, tests: Path, exceptions: dict[str, str]) -> list[str]:
    """Modules with code, no test file by the rule and no exception."""
    return [
        name
        for name, path in modules_with_code(src).items()
        if name not in exceptions and not any(map(has_tests, places_for(path, src, tests)))
    ]


def stale_exceptions(src: Path, tests: Path, exceptions: dict[str, str]) -> list[str]:
    """Exceptions for a module that is gone, has no code, or has its test file now."""
    modules = modules_with_code(src)
    return [
        name
        for name in exceptions
        if name not in modules or any(map(has_tests, places_for(modules[name], src, tests)))
    ]


def test_every_module_has_its_test_file() -> None:
    missing = missing_tests(SRC, TESTS, EXCEPTIONS)
    assert not missing, (
        "modules without a test file (goldloop/a/b.py → tests/a/test_b.py; a package's "
        f"__init__.py → tests/a/test_init.py), or add an exception with its reason: {missing}"
    )


def test_every_exception_still_holds() -> None:
    assert not stale_exceptions(SRC, TESTS, EXCEPTIONS)


def test_every_test_folder_is_a_package() -> None:
    # pytest's default import mode needs unique basenames otherwise.
    folders = {p.parent for p in TESTS.rglob("*.py")}
    missing = [
        str(f.relative_to(REPO)) for f in sorted(folders) if not (f / "__init__.py").exists()
    ]
    assert not missing


def test_the_check_finds_a_new_module_without_tests(tmp_path: Path) -> None:
    src, tests = tmp_path / "src", tmp_path / "tests"
    for name, text in {
        "__init__.py": '"""Nothing."""\nfrom .a import f\n__all__ = ["f"]\n',
        "a.py": "def f():\n    return 1\n",
        "pkg/__init__.py": "X = 1\n",
        "pkg/b.py": "def g():\n    return 2\n",
        "pkg/c.py": "def h():\n    return 3\n",
        "pkg/d.py": "def k():\n    return 4\n",
    }.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    (tests / "pkg" / "c").mkdir(parents=True)
    (tests / "pkg" / "c" / "test_one.py").write_text("")
    (tests / "test_a.py").write_text("")
    assert missing_tests(src, tests, {"pkg.d": "why"}) == ["pkg", "pkg.b"]
    (tests / "pkg" / "test_init.py").write_text("")
    (tests / "pkg" / "test_b.py").write_text("")
    assert missing_tests(src, tests, {"pkg.d": "why"}) == []
    assert stale_exceptions(src, tests, {"pkg.d": "why", "pkg.gone": "why"}) == ["pkg.gone"]
    (tests / "pkg" / "test_d.py").write_text("")
    assert stale_exceptions(src, tests, {"pkg.d": "why"}) == ["pkg.d"]
