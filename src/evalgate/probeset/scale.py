"""What an ordinal probe's scale is (docs/ordinal.md): its kind's name, and when candidates form one.

Validating a probe set decides whether an ordinal probe's candidates are a scale (at least three
points, all numbers increasing strictly or all labels); scoring/ordinal.py reads the same points
as a curve. The rule sits with the probe set, below scoring, so that the probe set never imports
the scorer's side (tests/project/test_import_layers.py ranks probe set -> scoring).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

KIND = "ordinal"
MIN_POINTS = 3
# Plain decimal numbers only: float() would also take "nan", "inf" and "1_000" as scale points.
NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")


def scale_problem(candidates: Sequence[str]) -> str | None:
    """Why `candidates` is not a scale (validation of ordinal probes), or None when it is one."""
    if len(candidates) < MIN_POINTS:
        return (
            f"an ordinal scale needs at least {MIN_POINTS} points, this one has {len(candidates)}"
            " (two points are a minimal pair: write it as a form probe)"
        )
    numeric = [bool(NUMBER.match(c.strip())) for c in candidates]
    if any(numeric) and not all(numeric):
        shown = ", ".join(c for c, n in zip(candidates, numeric, strict=True) if not n)
        return f"the scale mixes numbers and labels ({shown} is not a number)"
    if all(numeric):
        values = [float(c) for c in candidates]
        for i in range(1, len(values)):
            if values[i] <= values[i - 1]:
                return (
                    f"the scale must increase strictly, low to high: {candidates[i]!r} comes after"
                    f" {candidates[i - 1]!r}"
                )
    return None
