"""Absolute floors (`gate.min_accuracy`, docs/suites.md "Thresholds") and chance levels.

A paired comparison only says "not worse than the baseline": a model at chance passes it against
a baseline at chance. A floor is checked on the run alone, baseline or not: a slice whose accuracy
is below its floor fails the gate, and so does a floor naming a slice the run does not have (a
typo must not switch a floor off). The chance level of a slice is the mean of 1/K over its scored
items (K candidates each): what guessing scores, shown beside every accuracy.

Pure: dicts in, dicts out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from evalgate.gate.slices import slice_keys
from evalgate.types import STATUS_SCORED


def chance_levels(entries: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """slice key -> mean of 1/K over the slice's scored items."""
    sums: dict[str, list[float]] = {}
    for e in entries:
        if e.get("status") != STATUS_SCORED or not e.get("candidates"):
            continue
        share = 1.0 / len(e["candidates"])
        for key in slice_keys(dict(e)):
            t = sums.setdefault(key, [0.0, 0.0])
            t[0] += share
            t[1] += 1
    return {k: total / n for k, (total, n) in sums.items()}


def _keys_of(pattern: str, slices: Mapping[str, Any]) -> list[str]:
    """A floor's slices: the key itself, or every slice of a suite for "SUITE/*"."""
    if pattern.endswith("/*"):
        prefix = pattern[:-1]
        return sorted(k for k in slices if k.startswith(prefix))
    return [pattern]


def floored(key: str, floors: Sequence[tuple[str, float]] | Mapping[str, float]) -> bool:
    """Does a floor (its own, or its suite's "SUITE/*") apply to this slice?"""
    patterns = floors.keys() if isinstance(floors, Mapping) else (p for p, _ in floors)
    for pattern in patterns:
        if pattern == key or (pattern.endswith("/*") and key.startswith(pattern[:-1])):
            return True
    return False


def floor_of(key: str, floors: Sequence[tuple[str, float]] | Mapping[str, float]) -> float | None:
    """The floor that applies to this slice, None when none does: its own key beats its suite's
    "SUITE/*", whatever the order they are written in (as `check_floors`)."""
    pairs = list(floors.items() if isinstance(floors, Mapping) else floors)
    own = [v for p, v in pairs if p == key]
    if own:
        return own[-1]
    suite = [v for p, v in pairs if p.endswith("/*") and key.startswith(p[:-1])]
    return suite[-1] if suite else None


def shared_accuracy(entries: Iterable[Mapping[str, Any]], held: Collection[str]) -> dict[str, dict[str, Any]]:
    """slice key -> {"accuracy", "n"} over the scored entries whose id is in `held` (the probes
    the baseline scored too)."""
    counts: dict[str, list[int]] = {}
    for e in entries:
        if e.get("status") != STATUS_SCORED or e.get("id") not in held:
            continue
        for key in slice_keys(dict(e)):
            t = counts.setdefault(key, [0, 0])
            t[0] += bool(e.get("correct"))
            t[1] += 1
    return {k: {"accuracy": right / n, "n": n} for k, (right, n) in counts.items()}


def counted_per_slice(entries: Iterable[Mapping[str, Any]], ids: Collection[str]) -> dict[str, int]:
    """slice key -> how many of `ids` (probes counted wrong: the baseline scored them, this run
    could not) fall in it."""
    out: dict[str, int] = {}
    for e in entries:
        if e.get("id") in ids:
            for key in slice_keys(dict(e)):
                out[key] = out.get(key, 0) + 1
    return out


def check_floors(
    slices: Mapping[str, Mapping[str, Any]],
    floors: Sequence[tuple[str, float]] | Mapping[str, float],
    chance: Mapping[str, float],
    shared: Mapping[str, Mapping[str, Any]] | None = None,
    counted: Mapping[str, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """results.json "floors": per floored slice its floor, accuracy, n, chance and status
    ("ok", "below", or "missing" when the slice has no scored item).

    A slice's own key beats its suite's "SUITE/*", whatever the order they are written in (as
    for tolerances, gate/rules.py). With a baseline, `shared` holds the accuracies over the
    probes the baseline scored too: the floor holds on them as well, so items a pull request
    adds (and answers as its checkpoint does) cannot lift a slice over its floor. The caller
    passes the slices with every probe the baseline scored and this run could not (`model_oov`,
    `ambiguous`) counted as wrong, as the paired comparison counts them (gate/holds.py), and
    `counted` says how many per slice: a slice cannot pass its floor by becoming unscorable.
    """
    pairs = list(floors.items() if isinstance(floors, Mapping) else floors)
    # wildcards first, so that a slice's own floor, applied after, is the one that stays
    pairs.sort(key=lambda pair: not pair[0].endswith("/*"))
    out: dict[str, dict[str, Any]] = {}
    for pattern, floor in pairs:
        for key in _keys_of(pattern, slices) or [pattern]:
            row = slices.get(key) or {}
            acc, n = row.get("accuracy"), row.get("n", 0)
            status = "missing" if acc is None or not n else "below" if acc < floor else "ok"
            out[key] = {
                "min_accuracy": floor,
                "accuracy": acc,
                "n": n,
                "chance": chance.get(key),
                "status": status,
            }
            if wrong := (counted or {}).get(key):
                out[key]["counted_wrong"] = wrong
            held = (shared or {}).get(key)
            if shared is not None and held and held.get("n"):
                out[key]["shared_accuracy"], out[key]["shared_n"] = held["accuracy"], held["n"]
                if status == "ok" and held["accuracy"] < floor:
                    out[key]["status"] = "below"
    return dict(sorted(out.items()))


def floor_reasons(floors: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One human reason per slice under its floor (or missing)."""
    out = []
    for key, f in floors.items():
        if f["status"] == "below":
            chance = f" (chance {100 * f['chance']:.1f}%)" if f.get("chance") is not None else ""
            if f["accuracy"] >= f["min_accuracy"]:  # only the probes the baseline holds are below
                what = (
                    f"accuracy {100 * f['shared_accuracy']:.1f}% on the {f['shared_n']} items the baseline "
                    f"also scored ({100 * f['accuracy']:.1f}% with the {f['n'] - f['shared_n']} new ones)"
                )
            else:
                what = f"accuracy {100 * f['accuracy']:.1f}% on {f['n']} items"
                if f.get("counted_wrong"):
                    what += (
                        f" ({f['counted_wrong']} of them counted wrong: the baseline scored them, "
                        "this run could not)"
                    )
            out.append(
                f"{key}: {what} is below the floor gate.min_accuracy {100 * f['min_accuracy']:.1f}%{chance}"
            )
        elif f["status"] == "missing":
            out.append(
                f"{key}: gate.min_accuracy sets a floor of {100 * f['min_accuracy']:.1f}% but the run has "
                "no scored item in that slice (check the slice key)"
            )
    return out
