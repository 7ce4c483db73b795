"""The package is pure file code: importing it loads no Label Studio, LLM or network module."""

from __future__ import annotations

import json
import subprocess
import sys

ABOVE = (
    "goldloop.studio",
    "goldloop.llm",
    "goldloop.backend",
    "label_studio_sdk",
    "openai",
    "anthropic",
)
# httpx is not listed: spaCy itself imports it.


def test_importing_interchange_loads_nothing_from_the_layers_above() -> None:
    code = (
        "import json, sys\n"
        "import goldloop.interchange\n"
        f"print(json.dumps(sorted({{m.split('.')[0] if not m.startswith('goldloop') else '.'.join(m.split('.')[:2]) for m in sys.modules}} & set({ABOVE!r}))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
