"""Shared fixtures. Tests are offline: nothing here reaches beyond 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    return REPO
