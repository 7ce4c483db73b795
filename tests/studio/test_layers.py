"""At run time, the pure Label Studio code (a Label Studio export read as data, review
predictions, curation, the campaign figures) loads without the network client, so scoring and the
documents reader read an export without the HTTP side; every documented name stays importable.

The import contracts themselves (layers, who may import the SDK and httpx) are import-linter's,
in ``make lint``; this checks what a static graph cannot: nothing loads the client on import.
"""

from __future__ import annotations

import json
import subprocess
import sys

PURE = (
    "goldloop.formats.labelstudio.controls",
    "goldloop.formats.labelstudio.studio_error",
    "goldloop.formats.labelstudio.offsets",
    "goldloop.formats.labelstudio.tasks",
    "goldloop.formats.labelstudio.verdicts",
    "goldloop.formats.labelstudio.verify",
    "goldloop.formats.labelstudio.versions",
    "goldloop.studio.review",
    "goldloop.studio.curation",
    "goldloop.studio.campaign_agreement",
    "goldloop.studio.effort",
    "goldloop.studio.campaign",
    "goldloop.studio.status",
    "goldloop.studio.campaign_effect",
    "goldloop.scoring.effect",
    "goldloop.studio.label_config",
    "goldloop.formats.documents",
    "goldloop.scoring.inputs",
)
NETWORK = ("label_studio_sdk", "httpx", "tenacity", "goldloop.studio.connection")


def test_pure_modules_import_without_the_network_client() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {PURE!r}: importlib.import_module(name)\n"
        f"print(json.dumps([m for m in {NETWORK!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_documented_names_stay_importable() -> None:
    from goldloop.formats.labelstudio import offsets
    from goldloop.studio import pull, review

    assert callable(offsets.to_label_studio) and callable(offsets.from_label_studio)
    assert callable(pull.pull) and callable(pull.write_campaign)
    assert callable(review.build_review_prediction) and callable(review.review_tag)
