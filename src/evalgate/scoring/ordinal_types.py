"""results.json's "ordinal" object as types (docs/ordinal.md names every key).

scoring/ordinal.py builds it and gate/document.py types the whole results document with it; it
sits here, below both, so that scoring never imports the gate (tests/project/test_import_layers.py).
The keys follow `schemas/results.schema.json` as gate/document.py describes. Written without
`from __future__ import annotations`: Python 3.11 reads `NotRequired` only from evaluated
annotations.
"""

from typing import NotRequired, TypedDict

__all__ = ["Ordinal", "OrdinalItem", "OrdinalPoint", "OrdinalSummary"]


class OrdinalSummary(TypedDict):
    n: int
    n_ambiguous: NotRequired[int]
    n_unscored: NotRequired[int]
    mae: float | None
    mae_argmin: NotRequired[float | None]
    mean_entropy: NotRequired[float | None]
    mean_entropy_norm: float | None
    n_review: NotRequired[int]


class OrdinalPoint(TypedDict):
    text: str
    x: float
    surprisal: float
    p: float


class OrdinalItem(TypedDict):
    id: str
    group: str
    points: list[OrdinalPoint]
    argmin: str
    argmin_value: NotRequired[float]
    expectation: float
    expected: NotRequired[str | None]
    target: NotRequired[float | None]
    abs_error: NotRequired[float | None]
    argmin_error: NotRequired[float | None]
    entropy: float
    entropy_norm: float
    review: bool
    # not in the schema: copied from the probe entry, which may lack a label
    status: NotRequired[str | None]
    label: NotRequired[str | None]


class Ordinal(TypedDict):
    """Present only when the run has ordinal probes (docs/ordinal.md names every key)."""

    review_entropy: float
    overall: OrdinalSummary
    groups: dict[str, OrdinalSummary]
    items: list[OrdinalItem]
    review: list[str]
