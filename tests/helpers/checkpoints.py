"""Asserting that a checkpoint is refused: the one shape every loader test expects of a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalgate.errors import EXIT_REFUSED, CheckpointError
from evalgate.scorers.loaders import load_scorer


def refused(
    path: Path, match: str, loader: str | None = None, root: Path | None = None, **kw
) -> CheckpointError:
    """The CheckpointError `load_scorer` raises: exit 2, one line, naming `match`.

    `root` defaults to the checkpoint folder for a plugin (its module is imported from there) and
    to the folder holding the checkpoint otherwise.
    """
    with pytest.raises(CheckpointError) as info:
        load_scorer(path, loader, root=root or (path if loader else path.parent), **kw)
    err = info.value
    assert err.exit_code == EXIT_REFUSED
    assert "\n" not in err.message, err.message  # one line
    assert match in err.message, err.message
    return err
