"""The curation campaign, built once per session in the session's Label Studio."""

from __future__ import annotations

from typing import Any

import pytest

from goldloop.kb import KB
from tests.studio.campaign_data import Campaign, build


@pytest.fixture(scope="session")
def campaign(label_studio: Any, kb: KB) -> Campaign:
    return build(label_studio, kb)
