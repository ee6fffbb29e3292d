"""Comments, docstrings and docs cite pages of docs/, never documents outside the repository.

evalgate was built from source documents ("seed 000".."seed 004") and a specification ("SPEC")
that are not in the repository; docs/design.md keeps what they asked and what we chose, and is
the one page that names them. A citation of them anywhere else points a reader at nothing.
"""

from __future__ import annotations

import re

from helpers.paths import REPO

SCANNED = ("src", "tests", "bench", "scripts", "docs", "README.md")
SUFFIXES = {".py", ".md", ".json", ".yml", ".yaml", ".txt", ".toml", ".cfg", ".sh"}
CITATION = re.compile(r"(?i:\bseeds? 00\d)|\bSPEC\b")

# Files that may name the sources: this page maps them, and this test must spell the pattern.
EXEMPT_FILES = {"docs/design.md", "tests/project/test_doc_citations.py"}
# Output, not comments: these bytes are checked elsewhere, so they change only with the output.
EXEMPT_FOLDERS = ("tests/golden/",)  # rendered reports: byte-identical goldens
# Lines that carry a citation inside text evalgate prints or hashes. Changing them changes
# REPORT.md (the goldens) or the embedded default configuration, whose bytes equal ./evalgate.yml,
# an input whose SHA-256 the demo's results.json records.
EXEMPT_LINES = {
    "src/evalgate/report/facts.py": (
        "(length normalisation, seed 004:",
        "generator's conventions (seed 000)",
    ),
    "src/evalgate/report/probes.py": ("would span most of 0-100% (seed 004)",),
    "src/evalgate/report/ordinal.py": ("judged on an ordinal scale (seed 002), reported",),
    "docs/ordinal.md": ("judged on an ordinal scale (seed 002), reported",),  # quotes the report
    "src/evalgate/defaults/evalgate.yml": ("seed 00",),
}


def _files():
    for top in SCANNED:
        path = REPO / top
        for f in [path] if path.is_file() else sorted(path.rglob("*")):
            rel = f.relative_to(REPO).as_posix()
            if not f.is_file() or f.suffix not in SUFFIXES or rel in EXEMPT_FILES:
                continue
            if rel.startswith(EXEMPT_FOLDERS) or any(
                part.endswith(".egg-info") or part == "__pycache__" for part in f.parts
            ):
                continue
            yield rel, f


def test_nothing_cites_the_seeds_or_the_spec():
    found = []
    for rel, f in _files():
        for number, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if CITATION.search(line) and not any(s in line for s in EXEMPT_LINES.get(rel, ())):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, (
        "cite the docs/ page (and section) that holds the fact, or add it to docs/design.md:\n"
        + "\n".join(found)
    )


def test_the_pattern_catches_what_it_is_for():
    for text in ("(seed 004)", "Seed 001's note", "seeds 004 and 002", 'SPEC "Validation"', "the SPEC asks"):
        assert CITATION.search(text), text
    for text in ("--seed 42", "SPECIAL_TOKENS", "_LOADER_SPEC", "a seed 42 run", "spec.get('enum')"):
        assert not CITATION.search(text), text


def test_every_exempt_line_still_exists():
    """An allowance outlives its reason silently; when the output changes, drop it here."""
    for rel, snippets in EXEMPT_LINES.items():
        text = (REPO / rel).read_text(encoding="utf-8")
        for snippet in snippets:
            assert snippet in text, f"{rel} no longer holds {snippet!r}: remove it from EXEMPT_LINES"
