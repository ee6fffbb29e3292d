"""How the report keeps under GitHub's comment limit: every long list is a `Listing` whose row
count the budget can lower, and every section says what it left out and where the rest is.

`full_report.render_report` renders the whole report, and while it is too long, lowers the row limit of the
largest list section (down to the size of the next largest, or to what is needed) and renders
again. The verdict, the gated table and the SHA-256 table are not lists: they are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from evalgate.report.markdown import Md

T = TypeVar("T")
ARTIFACT = "the evalgate output folder (the uploaded artifact)"


@dataclass
class Listing:
    key: str
    title: str  # "probes that flipped right → wrong"
    where: str  # "results.json `comparison.flipped`"
    total: int
    shown: int
    protected: bool = False  # cut only when nothing else is left (the gate-changes diff)


@dataclass(frozen=True)
class Section:
    text: str
    key: str | None = None  # the Listing this section shows, if it is a list
    essential: bool = False  # kept even by the last-resort truncation (verdict, gated table, SHA-256)


@dataclass
class Budget:
    limits: dict[str, int] = field(default_factory=dict)
    listings: dict[str, Listing] = field(default_factory=dict)

    def take(
        self,
        key: str,
        rows: Sequence[T],
        *,
        title: str,
        where: str,
        cap: int | None = None,
        protected: bool = False,
    ) -> list[T]:
        """The rows to show: at most `cap` (a configured maximum) and at most the budget's limit."""
        shown = len(rows)
        for bound in (cap, self.limits.get(key)):
            if bound is not None:
                shown = min(shown, bound)
        self.listings[key] = Listing(key, title, where, len(rows), shown, protected)
        return list(rows[:shown])

    def note(self, key: str) -> Md:
        """ "Showing 50 of 812 …; the full list is in …" when rows were left out, else ""."""
        lst = self.listings.get(key)
        if lst is None or lst.shown >= lst.total:
            return Md("")
        return Md(
            f"_Showing {lst.shown:,} of {lst.total:,} {lst.title}; the full list is in {lst.where} "
            f"in {ARTIFACT}._"
        )

    def cut(self) -> list[Listing]:
        return [lst for lst in self.listings.values() if lst.shown < lst.total]


def next_limits(sections: Sequence[Section], budget: Budget, excess: int) -> dict[str, int] | None:
    """Shorten the longest lists first: find the size cap C at which cutting every list section
    down to C saves `excess` characters, and lower those sections' row limits to about C.

    Protected lists (the gate-changes diff) are cut only when no other list has a row left.
    None when nothing is left to cut.
    """
    live = [
        (s.key, len(s.text))
        for s in sections
        if s.key and s.key in budget.listings and budget.listings[s.key].shown > 0
    ]
    for protected in (False, True):
        pool = [(k, n) for k, n in live if budget.listings[k].protected == protected]
        if pool:
            break
    else:
        return None
    lo, hi = 0, max(n for _, n in pool)
    while lo < hi:  # the largest cap that still saves enough
        cap = (lo + hi + 1) // 2
        if sum(max(0, n - cap) for _, n in pool) >= excess:
            lo = cap
        else:
            hi = cap - 1
    limits = dict(budget.limits)
    for key, n in pool:
        if n > lo:
            shown = budget.listings[key].shown
            limits[key] = max(0, min(shown - 1, shown * lo // n))
    return limits
