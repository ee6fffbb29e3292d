"""Fixtures of the hostile-PR suite: one origin template per session, a fresh repository per test."""

from __future__ import annotations

import shutil

import pytest
from helpers.hostile_pr import GitHubRepo, make_origin_template


@pytest.fixture(scope="session")
def origin_template(tmp_path_factory):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    return make_origin_template(tmp_path_factory.mktemp("evalgate-origin"))


@pytest.fixture
def github_repo(tmp_path, origin_template):
    repo = GitHubRepo(tmp_path / "gh", origin_template)
    yield repo
    repo.close()
