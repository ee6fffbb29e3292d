"""Ordinal probes (docs/ordinal.md): a surprisal curve over an ordered scale instead of a verb-form choice.

An ordinal probe (`"kind": "ordinal"`) lists the points of a scale as its candidates, low to high
("1".."5", or ordered labels), and `expected` is the point a careful human would give. The model
scores every point like any candidate (scoring/multiple_choice.py); this module reads those scores as a curve:

    point i:    surprisal_i = -score_i                        (the normalised score's surprisal)
                p_i = exp(score_i) / sum_j exp(score_j)        (renormalised over the scale only)
    argmin      the point of lowest surprisal: what the model prefers (ties -> the lower point)
    E[x]        sum_i p_i * x_i                                (x_i: the number, or the rank 1..K)
    entropy     H = -sum_i p_i ln p_i nats; H / ln K in [0, 1]: 0 = one point, 1 = a flat curve
    error       |E[x] - x_expected| and |x_argmin - x_expected|, in scale units

A flat curve (normalised entropy above `report.review_entropy`) means the model cannot place the
item: it is listed for human review rather than trusting the number (docs/design.md). Items labelled
`ambiguous` have no single right point: they are shown, never counted in the MAE nor flagged.

Groups: an item's `reason_code` when it has one, else `language:verb`. Pure: entries in, the
results.json "ordinal" section out (docs/ordinal.md names every key).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalgate.probeset.scale import KIND, NUMBER
from evalgate.scoring.multiple_choice import entropy, softmax
from evalgate.scoring.ordinal_types import Ordinal, OrdinalItem, OrdinalSummary
from evalgate.types import DEFAULT_REVIEW_ENTROPY, STATUS_AMBIGUOUS, STATUS_DEPRECATED, STATUS_SCORED


def is_ordinal(item: Any) -> bool:
    """True for an ordinal probe or per-probe entry (a `Probe`, or a results.json entry dict)."""
    if type(item) is dict:  # the common case first: isinstance against the Mapping ABC is slow
        return item.get("kind") == KIND
    kind = item.get("kind") if isinstance(item, Mapping) else getattr(item, "kind", None)
    return kind == KIND


def scale_values(texts: Sequence[str]) -> list[float]:
    """Each point's position: its number when every point is a number, else its rank 1..K."""
    if texts and all(NUMBER.match(t.strip()) for t in texts):
        return [float(t) for t in texts]
    return [float(i + 1) for i in range(len(texts))]


def group_of(entry: Mapping[str, Any]) -> str:
    if entry.get("reason_code"):
        return str(entry["reason_code"])
    return f"{entry.get('language') or '?'}:{entry.get('verb') or '?'}"


def item(entry: Mapping[str, Any], review_entropy: float = DEFAULT_REVIEW_ENTROPY) -> OrdinalItem | None:
    """The curve and its numbers for one scored entry; None when it has no scores (unscored, partial)."""
    cands = [c for c in entry.get("candidates") or [] if isinstance(c, Mapping)]
    scores = [s for c in cands if isinstance(s := c.get("score"), int | float) and math.isfinite(s)]
    if len(cands) < 2 or len(scores) != len(cands):
        return None
    texts = [str(c.get("text", "")) for c in cands]
    xs = scale_values(texts)
    probs = softmax(scores)
    h = entropy(probs)
    h_norm = h / math.log(len(probs))
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties -> the lower point
    mean = math.fsum(p * x for p, x in zip(probs, xs, strict=True))
    expected = entry.get("expected")
    target = xs[texts.index(expected)] if expected in texts else None
    scored = entry.get("status") == STATUS_SCORED
    out: OrdinalItem = {
        "id": entry["id"],  # every probe entry has one (results.schema.json)
        "group": group_of(entry),
        "status": entry.get("status"),
        "label": entry.get("label"),
        "points": [
            {"text": t, "x": x, "surprisal": -s, "p": p}
            for t, x, s, p in zip(texts, xs, scores, probs, strict=True)
        ],
        "argmin": texts[best],
        "argmin_value": xs[best],
        "expectation": mean,
        "expected": expected,
        "target": target,
        "abs_error": None if target is None else abs(mean - target),
        "argmin_error": None if target is None else abs(xs[best] - target),
        "entropy": h,
        "entropy_norm": h_norm,
        "review": scored and h_norm > review_entropy,
    }
    return out


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return math.fsum(kept) / len(kept) if kept else None


def _stats(items: list[OrdinalItem], unscored: list[Mapping[str, Any]]) -> OrdinalSummary:
    """n, MAE and mean entropy over the scored items; ambiguous and unscored ones counted apart."""
    scored = [i for i in items if i["status"] == STATUS_SCORED]
    return {
        "n": len(scored),
        "n_ambiguous": sum(1 for i in items if i["status"] == STATUS_AMBIGUOUS),
        "n_unscored": len(unscored),
        "mae": _mean(i["abs_error"] for i in scored),
        "mae_argmin": _mean(i["argmin_error"] for i in scored),
        "mean_entropy": _mean(i["entropy"] for i in scored),
        "mean_entropy_norm": _mean(i["entropy_norm"] for i in scored),
        "n_review": sum(1 for i in scored if i["review"]),
    }


def summarize(
    entries: Iterable[Mapping[str, Any]], review_entropy: float = DEFAULT_REVIEW_ENTROPY
) -> Ordinal | None:
    """results.json "ordinal": items in probe order, per-group and overall numbers, the review list.

    None when the run has no live ordinal probe (the section is then absent from results.json).
    """
    live = [e for e in entries if is_ordinal(e) and e.get("status") != STATUS_DEPRECATED]
    if not live:
        return None
    items: list[OrdinalItem] = []
    unscored: list[Mapping[str, Any]] = []
    for e in live:
        got = item(e, review_entropy) if e.get("status") in (STATUS_SCORED, STATUS_AMBIGUOUS) else None
        if got is None:
            unscored.append(e)  # model_oov, excluded by the leak policy, or a partial entry
        else:
            items.append(got)
    groups = sorted({i["group"] for i in items} | {group_of(e) for e in unscored})
    review = sorted((i for i in items if i["review"]), key=lambda i: (-i["entropy_norm"], str(i["id"])))
    return {
        "review_entropy": review_entropy,
        "overall": _stats(items, unscored),
        "groups": {
            g: _stats([i for i in items if i["group"] == g], [e for e in unscored if group_of(e) == g])
            for g in groups
        },
        "items": items,
        "review": [i["id"] for i in review],
    }
