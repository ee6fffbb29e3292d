"""Where evalgate is released, and the references a consumer repository pins (docs/github.md).

One version names one tag, one action (`REPOSITORY@vVERSION`, whose action.yml pins the image by
digest), one image on the registry and one package of the same version. Everything `init` writes
and every link a report or comment prints comes from here, so no placeholder is ever written and
a consumer's links point to the docs of the release it runs, not to paths in its own repository.
Pure: constants and string formatting only.
"""

from __future__ import annotations

# The package version (pyproject.toml says the same; the package re-exports it as __version__).
VERSION = "0.1.0"
REPOSITORY = "evalgate/evalgate"
IMAGE = "ghcr.io/evalgate/evalgate"


def tag(version: str = VERSION) -> str:
    """The release tag of `version`: `vX.Y.Z`."""
    return f"v{version}"


def action_ref(version: str = VERSION) -> str:
    """What a consumer workflow's `uses:` names for this release: `OWNER/NAME@vX.Y.Z`."""
    return f"{REPOSITORY}@{tag(version)}"


def docs_url(page: str, ref: str | None = None) -> str:
    """A page of evalgate's docs (`docs/gate.md#verdict`) as the release `ref` has it."""
    return f"https://github.com/{REPOSITORY}/blob/{ref or tag()}/{page}"


__all__ = ["IMAGE", "REPOSITORY", "VERSION", "action_ref", "docs_url", "tag"]
