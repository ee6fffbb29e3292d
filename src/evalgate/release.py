"""Where evalgate is released, and the references a consumer repository pins (docs/github.md).

One version names one tag (`vVERSION`), one action (`REPOSITORY@action-vVERSION`, whose
action.yml pins the image by digest), one image on the registry and one package of the same
version (docs/release.md). Everything `init` writes and every link a report or comment prints
comes from here, so no placeholder is ever written and a consumer's links point to the docs of the
release it runs, not to paths in its own repository. Pure: constants and string formatting only.
"""

from __future__ import annotations

# The package version (pyproject.toml says the same; the package re-exports it as __version__).
VERSION = "0.1.0"
REPOSITORY = "evalgate/evalgate"
IMAGE = "ghcr.io/evalgate/evalgate"


def tag(version: str = VERSION) -> str:
    """The release tag of `version`: `vX.Y.Z`."""
    return f"v{version}"


def action_tag(version: str = VERSION) -> str:
    """The tag of the released action of `version`: `action-vX.Y.Z`. The tag `vX.Y.Z` names the
    reviewed source, whose action.yml builds the image; the release workflow commits on top of it
    the action.yml that pulls the published image by digest and tags that (docs/release.md)."""
    return f"action-{tag(version)}"


def action_ref(version: str = VERSION) -> str:
    """What a consumer workflow's `uses:` names for this release: `OWNER/NAME@action-vX.Y.Z`."""
    return f"{REPOSITORY}@{action_tag(version)}"


def docs_url(page: str, ref: str | None = None) -> str:
    """A page of evalgate's docs (`docs/gate.md#verdict`) as the release `ref` has it."""
    return f"https://github.com/{REPOSITORY}/blob/{ref or tag()}/{page}"


__all__ = ["IMAGE", "REPOSITORY", "VERSION", "action_ref", "action_tag", "docs_url", "tag"]
