"""Shared fixtures. Tests are offline: nothing here reaches beyond 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.paths import REPO


@pytest.fixture
def repo_root() -> Path:
    return REPO
