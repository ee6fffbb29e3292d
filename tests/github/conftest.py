"""The GitHub stand-in the comment tests share (a module may define its own `gh` to seed it)."""

from __future__ import annotations

import pytest
from helpers.github_standin import FakeGitHub


@pytest.fixture
def gh(monkeypatch):
    """A fresh FakeGitHub on 127.0.0.1, reached directly (no proxy), no author override."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.delenv("EVALGATE_COMMENT_AUTHOR", raising=False)
    server = FakeGitHub().start()
    yield server
    server.stop()
