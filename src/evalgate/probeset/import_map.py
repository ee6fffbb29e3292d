"""Rows of an exported benchmark -> multiple-choice items, pure: bytes or parsed rows in, records out.

A benchmark exported from Hugging Face `datasets` (`to_json`, `to_csv`) or from its original
release has its own column names; a mapping says which column is the prompt, the candidates and
the answer. `PRESETS` holds the mappings of three well-known layouts (MMLU, ARC, HellaSwag);
`parse_map` reads a `--map question=prompt,choices=candidates,...` spec for any other one.

The rules (the import rules of docs/authoring.md, applied to items):

- **All problems at once.** Every bad row gives findings naming the file, the row (`line`), the
  row's own id if it has one, and the source column (`field`); converting goes on after each, so
  a file with twelve bad rows shows twelve rows' findings in one run. Rows with a finding give no
  record.
- **Row numbers.** A JSONL row is its line; a JSON array's row is the 1-based position of the
  element in the array (its findings are shown at the line the element starts on, with the element
  number: `array_element_lines`); a CSV row is its spreadsheet row (the header is row 1).
- **Ids.** A row's own id (the mapped `id` column, a string or an integer) is kept and must follow
  the probe id rule (docs/probes.md, `id`). A row without one gets `f"{id_prefix}-{line:05d}"`
  (`mmlu-00042` for row 42): the same file always gives the same ids, and rows appended at the end
  leave the earlier ids unchanged. An id given twice is a finding on the second row.
- **Answers** may be a choice's text, a 0-based integer index, a digit string (0-based), or a
  letter A, B, C, ... When the mapping names the row's own labels (ARC's `choices.label`, which may
  be "1", "2", "3", "4"), a string answer is one of those labels. A string that reads both as a
  choice's text and as the index or letter of another choice is a finding (it is ambiguous).
- **Candidates** are stripped of surrounding whitespace (HellaSwag's endings start with a space);
  a candidate that is empty after stripping, or equal to another one, is a finding. The prompt is
  stripped too.
- **Slices** are strings (numbers and booleans are written as text). With the suite's declared
  dimensions (`dims`), a slice mapped by `--map` that the suite does not declare is one finding,
  a declared dimension nothing maps to is one finding, and a declared one missing from a row is a
  finding on that row. A preset's slices are optional: without `dims` a row lacking one just has
  no such slice, and a preset slice the suite does not declare is left out.

Records come out with the fields in the documented order: id, prompt, candidates, expected,
slices, explanation?, source?.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalgate.probeset.encoding import utf16_kind, utf16_message
from evalgate.probeset.jsonl import (
    BOM_UTF8,
    DuplicateJsonKey,
    UnreadableNumber,
    parse_jsonl,
    read_float,
    read_int,
    unique_keys,
)
from evalgate.types import Finding

Row = tuple[int, Any]

# The probe id rule (docs/probes.md, `id`): items are named the same way.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")
_PREFIX_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_DIM_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
_DIGITS = re.compile(r"[0-9]+")
_LETTER = re.compile(r"[A-Z]")

TARGETS: tuple[str, ...] = ("id", "prompt", "candidates", "labels", "expected", "explanation", "source")
REQUIRED_TARGETS: tuple[str, ...] = ("prompt", "candidates", "expected")

HINT_MAP = (
    "write SOURCE=TARGET pairs separated by commas, e.g. "
    "question=prompt,choices=candidates,answer=expected,topic=slices.topic; targets: "
    + ", ".join(TARGETS)
    + ", slices.<dimension>; a constant slice value for every row: const:VALUE=slices.<dimension>"
)
HINT_ANSWER = "give the answer as a choice's text, a 0-based index, or a letter (A = the first choice)"
HINT_CHOICES = 'give the choices as a list of 2 or more distinct texts, e.g. ["Service", "Deployment"]'
HINT_UTF8 = "save the file as UTF-8"
HINT_CSV = "save the sheet as 'CSV UTF-8 (comma delimited)' with the header row first"


@dataclass(frozen=True)
class Choices:
    """Where a row keeps its choices: the list of texts and, if it has them, its own labels."""

    text: str  # dotted path of the list of choice texts
    labels: str | None = None  # dotted path of the labels naming them ("A".."D", or "1".."4")


@dataclass(frozen=True)
class SliceColumn:
    dim: str
    source: str  # the column; for a constant, `const:VALUE` as the user wrote it
    optional: bool = False  # a preset's: absent rows and undeclared dimensions are no finding
    value: str | None = None  # a constant every row gets (`--map const:science=slices.subject`)


CONST = "const:"


@dataclass(frozen=True)
class ImportMap:
    """Which columns of a row make an item. Source columns are dotted paths (see `lookup`).

    `prompt` and `choices` list alternatives, tried in order: the first one the row has wins (ARC's
    question is a string in the Hugging Face export and an object with a stem in the original
    release). A prompt alternative of several columns joins their texts with one space
    (HellaSwag's ctx_a + ctx_b).
    """

    prompt: tuple[tuple[str, ...], ...]
    choices: tuple[Choices, ...]
    expected: str
    id: str | None = None
    slices: tuple[SliceColumn, ...] = ()
    explanation: str | None = None
    source: str | None = None
    name: str = "map"


PRESETS: dict[str, ImportMap] = {
    # {"question": ..., "subject": "abstract_algebra", "choices": [...], "answer": 1}
    "mmlu": ImportMap(
        prompt=(("question",),),
        choices=(Choices("choices"),),
        expected="answer",
        id="id",
        slices=(SliceColumn("subject", "subject", optional=True),),
        name="mmlu",
    ),
    # HF: {"id", "question": str, "choices": {"text": [...], "label": [...]}, "answerKey": "C"};
    # the original JSONL: {"id", "question": {"stem", "choices": [{"text", "label"}, ...]}, "answerKey"}
    "arc": ImportMap(
        prompt=(("question",), ("question.stem",)),
        choices=(
            Choices("choices.text", "choices.label"),
            Choices("question.choices.text", "question.choices.label"),
        ),
        expected="answerKey",
        id="id",
        name="arc",
    ),
    # a continuation item: the context is the prompt (no question), the endings continue it
    "hellaswag": ImportMap(
        prompt=(("ctx",), ("ctx_a", "ctx_b")),
        choices=(Choices("endings"),),
        expected="label",
        id="id",
        slices=(SliceColumn("activity", "activity_label", optional=True),),
        name="hellaswag",
    ),
}


# ---------------------------------------------------------------------------------------- --map


def parse_map(spec: str, base: ImportMap | None = None) -> ImportMap:
    """`question=prompt,choices=candidates,answer=expected,topic=slices.topic` -> an ImportMap.

    Each comma-separated piece is SOURCE=TARGET: SOURCE a column, dotted for a nested one
    (`choices.text`), or `const:VALUE` for a slice every row gets (ARC has no subject column:
    `const:science=slices.subject`; the other order is read the same); TARGET one of `TARGETS`
    or `slices.<dimension>`; `labels` names the row's
    own labels of its choices. With `base` (a preset), the pieces replace the base's targets and add
    slices; giving `candidates` replaces the base's choices (with `labels` if given too). Without a
    base, prompt, candidates and expected are required. A bad spec raises ValueError naming the
    bad piece.
    """
    given: dict[str, tuple[str, str]] = {}  # target -> (source, piece)
    slices: list[SliceColumn] = []
    for raw in spec.split(","):
        piece = raw.strip()
        if not piece:
            raise ValueError(f"--map {spec!r} has an empty piece between two commas: {HINT_MAP}")
        if "=" not in piece:
            raise ValueError(f"--map piece {piece!r} has no '=': {HINT_MAP}")
        if piece.count("=") > 1:
            raise ValueError(f"--map piece {piece!r} has more than one '=': {HINT_MAP}")
        source, target = (part.strip() for part in piece.split("="))
        if target.startswith(CONST) and not source.startswith(CONST):
            source, target = target, source  # `slices.subject=const:science` reads the same
        if not source:
            raise ValueError(f"--map piece {piece!r} names no source column before '='")
        if not target:
            raise ValueError(f"--map piece {piece!r} names no target after '='")
        if source.startswith("slices.") and target not in TARGETS and not target.startswith("slices."):
            # TARGET=VALUE, the other way round: the value is no column and no target
            raise ValueError(
                f"--map piece {piece!r}: {target!r} is no target; to give every row the slice value "
                f"{target!r}, write {CONST}{target}={source} (a constant: SOURCE is `const:VALUE`)"
            )
        _check_target(piece, target)
        if source.startswith(CONST):
            value = source.removeprefix(CONST).strip()
            if not target.startswith("slices."):
                raise ValueError(
                    f"--map piece {piece!r}: a constant gives a slice value (const:VALUE=slices.DIM); "
                    f"{target} comes from a column of each row"
                )
            if not value:
                raise ValueError(f"--map piece {piece!r}: the constant is empty (write const:VALUE)")
        if target in given:
            raise ValueError(
                f"--map piece {piece!r}: target {target!r} is given twice (also by {given[target][1]!r})"
            )
        given[target] = (source, piece)
        if target.startswith("slices."):
            const = source.removeprefix(CONST).strip() if source.startswith(CONST) else None
            slices.append(SliceColumn(target.removeprefix("slices."), source, value=const))

    def src(target: str) -> str | None:
        return given[target][0] if target in given else None

    if base is None:
        missing = [t for t in REQUIRED_TARGETS if t not in given]
        if missing:
            raise ValueError(
                f"--map {spec!r} maps no column to {', '.join(missing)}: every item needs a prompt, "
                "candidates and the expected answer, e.g. question=prompt,choices=candidates,answer=expected"
            )
    if "labels" in given and "candidates" not in given:
        raise ValueError(
            f"--map piece {given['labels'][1]!r}: labels name the candidates' labels, so map candidates too"
        )
    prompt_src, cand_src, expected_src = src("prompt"), src("candidates"), src("expected")
    start = base or ImportMap(prompt=(), choices=(), expected="", name="map")
    kept = [s for s in start.slices if s.dim not in {n.dim for n in slices}]
    return ImportMap(
        prompt=((prompt_src,),) if prompt_src else start.prompt,
        choices=(Choices(cand_src, src("labels")),) if cand_src else start.choices,
        expected=expected_src or start.expected,
        id=src("id") or start.id,
        slices=(*kept, *slices),
        explanation=src("explanation") or start.explanation,
        source=src("source") or start.source,
        name=f"{base.name}+map" if base else "map",
    )


def _check_target(piece: str, target: str) -> None:
    if target in TARGETS:
        return
    if target.startswith("slices."):
        dim = target.removeprefix("slices.")
        if _DIM_PATTERN.fullmatch(dim):
            return
        raise ValueError(
            f"--map piece {piece!r}: {dim!r} is not a dimension name "
            "(letters, digits, '_' and '-', e.g. slices.topic)"
        )
    if target == "slices":
        raise ValueError(f"--map piece {piece!r}: say which dimension, e.g. {piece}.topic")
    close = difflib.get_close_matches(target, [*TARGETS, "slices." + target.split(".")[-1]], n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"--map piece {piece!r}: unknown target {target!r}{guess}: {HINT_MAP}")


# ---------------------------------------------------------------------------------------- rows

_MISSING: Any = object()


def lookup(row: Any, path: str) -> Any:
    """The value at a dotted path of a row, or `_MISSING`.

    A key holding the dots itself wins (a CSV column named `choices.text`, as pandas flattens
    nested columns); a list of objects on the way is mapped over (`question.choices.text` of the
    original ARC release is the list of every choice's text).
    """
    return _lookup(row, path.split("."))


def _lookup(obj: Any, parts: list[str]) -> Any:
    if not parts:
        return obj
    if isinstance(obj, dict):
        for i in range(len(parts), 0, -1):
            key = ".".join(parts[:i])
            if key in obj:
                return _lookup(obj[key], parts[i:])
        return _MISSING
    if isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        values = [_lookup(x, parts) for x in obj]
        return _MISSING if any(v is _MISSING for v in values) else values
    return _MISSING


def _present(value: Any) -> bool:
    return value is not _MISSING and value is not None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else "null"


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(text if len(text) <= 60 else text[:57] + "...")


class _RowProblem(Exception):
    """One problem of one row's field: (check, field, message, hint)."""

    def __init__(self, check: str, field: str, message: str, hint: str):
        super().__init__(message)
        self.check, self.field, self.message, self.hint = check, field, message, hint


def _text_list(value: Any, path: str, what: str) -> list[str]:
    """A list of texts, stripped; a CSV cell holding a JSON list is decoded first."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        with contextlib.suppress(ValueError, RecursionError):  # not JSON: reported as text below
            value = json.loads(value)
    if not isinstance(value, list):
        cell = " (in a CSV cell, write a JSON list)" if isinstance(value, str) else ""
        raise _RowProblem(
            "import-type", path, f"{path}: expected a list of {what}, got {_kind(value)}{cell}", HINT_CHOICES
        )
    out = []
    for n, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise _RowProblem(
                "import-type", path, f"{path}: {what[:-1]} {n} is {_kind(item)}, not text", HINT_CHOICES
            )
        out.append(item.strip())
    return out


def _distinct(texts: list[str], path: str, what: str) -> None:
    seen: dict[str, int] = {}
    for n, text in enumerate(texts, start=1):
        if not text:
            raise _RowProblem(
                "import-candidates",
                path,
                f"{path}: {what} {n} is empty (after stripping whitespace)",
                HINT_CHOICES,
            )
        if text in seen:
            raise _RowProblem(
                "import-candidates",
                path,
                f"{path}: {what}s {seen[text]} and {n} are both {_show(text)} (after stripping whitespace)",
                HINT_CHOICES,
            )
        seen[text] = n


def _prompt(row: Any, mapping: ImportMap) -> str:
    alternatives = mapping.prompt
    chosen = next((alt for alt in alternatives if all(isinstance(lookup(row, c), str) for c in alt)), None)
    if chosen is None:
        chosen = next((alt for alt in alternatives if all(_present(lookup(row, c)) for c in alt)), None)
    names = [" + ".join(alt) for alt in alternatives]
    if chosen is None:
        others = f" (and no {' / '.join(names[1:])} either)" if len(names) > 1 else ""
        raise _RowProblem(
            "import-missing",
            alternatives[0][0],
            f"{names[0]}: missing{others}",
            "every row needs its question or context",
        )
    parts = []
    for column in chosen:
        value = lookup(row, column)
        if not isinstance(value, str):
            raise _RowProblem(
                "import-type", column, f"{column}: expected text, got {_kind(value)}", "the prompt is text"
            )
        if value.strip():
            parts.append(value.strip())
    if not parts:
        raise _RowProblem(
            "import-empty",
            chosen[0],
            f"{' + '.join(chosen)}: empty",
            "every row needs its question or context",
        )
    return " ".join(parts)


def _choices(row: Any, mapping: ImportMap) -> tuple[str, list[str], list[str] | None]:
    """(the texts' source column, the stripped texts, the row's own labels or None)."""
    chosen = next((c for c in mapping.choices if _present(lookup(row, c.text))), None)
    if chosen is None:
        names = [c.text for c in mapping.choices]
        others = f" (and no {' / '.join(names[1:])} either)" if len(names) > 1 else ""
        raise _RowProblem("import-missing", names[0], f"{names[0]}: missing{others}", HINT_CHOICES)
    texts = _text_list(lookup(row, chosen.text), chosen.text, "choices")
    if len(texts) < 2:
        raise _RowProblem(
            "import-candidates",
            chosen.text,
            f"{chosen.text}: {len(texts)} choice(s), an item needs at least 2 (it could never be wrong)",
            HINT_CHOICES,
        )
    _distinct(texts, chosen.text, "choice")
    labels = None
    if chosen.labels is not None and _present(raw := lookup(row, chosen.labels)):
        labels = _text_list(raw, chosen.labels, "labels")
        if len(labels) != len(texts):
            raise _RowProblem(
                "import-candidates",
                chosen.labels,
                f"{chosen.labels}: {len(labels)} label(s) for {len(texts)} choices",
                "give one label per choice",
            )
        _distinct(labels, chosen.labels, "label")
    return chosen.text, texts, labels


def _answer(value: Any, path: str, texts: list[str], labels: list[str] | None) -> int:
    """The 0-based index of the expected choice."""
    n = len(texts)

    def bad(message: str) -> _RowProblem:
        return _RowProblem("import-answer", path, f"{path}: {message}", HINT_ANSWER)

    if isinstance(value, bool) or not isinstance(value, int | str):
        raise bad(f"{_show(value)} is {_kind(value)}, not an index, a letter or a choice's text")
    if isinstance(value, int):
        if value < 0:
            raise bad(f"index {value} is negative (indexes count from 0)")
        if value >= n:
            raise bad(f"index {value} but only {n} choices (indexes count from 0)")
        return value
    text = value.strip()
    if not text:
        raise _RowProblem(
            "import-answer",
            path,
            f"{path}: empty (the row has no answer: an unlabelled split, such as a test split, "
            "cannot be imported)",
            HINT_ANSWER,
        )
    if labels is not None:
        if text in labels:
            return labels.index(text)
        raise bad(f"{_show(text)} is not one of the labels {', '.join(labels)}")
    by_text = texts.index(text) if text in texts else None
    by_place = None
    if _DIGITS.fullmatch(text):
        # no int() of a long digit string: Python refuses one over 4,300 digits (an exit 3), and
        # any index of more than 9 digits is past every choice list anyway
        digits = text.lstrip("0") or "0"
        if len(digits) > 9:
            raise bad(f"index {_show(text)} but only {n} choices (indexes count from 0)")
        by_place = int(digits)
    elif _LETTER.fullmatch(text):
        by_place = ord(text) - ord("A")
    if by_text is not None and by_place is not None and by_place < n and by_place != by_text:
        place = f"index {by_place}" if _DIGITS.fullmatch(text) else f"letter {text}"
        raise bad(
            f"{_show(text)} is ambiguous: the text of choice {by_text + 1}, or the {place} "
            f"(choice {by_place + 1}, {_show(texts[by_place])})"
        )
    if by_text is not None:
        return by_text
    if by_place is None:
        close = difflib.get_close_matches(text, texts, n=1)
        guess = f" (closest: {_show(close[0])})" if close else ""
        raise bad(f"{_show(text)} is not one of the {n} choices{guess}")
    if by_place >= n:
        if _LETTER.fullmatch(text):
            letters = ", ".join(chr(ord("A") + i) for i in range(n))
            raise bad(f"{_show(text)} is not one of the labels {letters}")
        raise bad(f"index {by_place} but only {n} choices (indexes count from 0)")
    return by_place


def _slice_value(value: Any, path: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if not isinstance(value, str):
        raise _RowProblem(
            "import-slice", path, f"{path}: expected text, got {_kind(value)}", "a slice value is one string"
        )
    if not value.strip():
        raise _RowProblem("import-slice", path, f"{path}: empty", "give every row a value for each slice")
    return value.strip()


def _own_id(row: Any, mapping: ImportMap) -> str | None:
    """The row's own id (None if the mapping names none or the row has none); raises if malformed."""
    if mapping.id is None:
        return None
    value = lookup(row, mapping.id)
    if not _present(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _RowProblem(
            "import-id", mapping.id, f"{mapping.id}: expected text, got {_kind(value)}", "an id is text"
        )
    text = str(value)
    if not ID_PATTERN.fullmatch(text):
        raise _RowProblem(
            "import-id",
            mapping.id,
            f"{mapping.id}: {_show(text)} is not a valid id",
            "an id is 1-120 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    return text


def _declared_findings(mapping: ImportMap, dims: Sequence[str], file: str) -> list[Finding]:
    out = []
    mapped = {s.dim for s in mapping.slices}
    said = ", ".join(dims) if dims else "none"
    for s in mapping.slices:
        if s.dim not in dims and not s.optional:
            out.append(
                Finding(
                    "import-slice-undeclared",
                    f"{s.source}: mapped to slices.{s.dim}, but the suite declares no dimension "
                    f"{s.dim!r} (it declares: {said})",
                    file,
                    None,
                    None,
                    f"slices.{s.dim}",
                    "map the column to a declared dimension, or declare it under the suite's slices:",
                )
            )
    for dim in dims:
        if dim not in mapped:
            out.append(
                Finding(
                    "import-slice-unmapped",
                    "the suite declares this dimension, but no column maps to it",  # the field names it
                    file,
                    None,
                    None,
                    f"slices.{dim}",
                    f"add COLUMN=slices.{dim} to --map, or const:VALUE=slices.{dim} for one value "
                    "every row gets",
                )
            )
    return out


def convert(
    rows: Sequence[Row],
    mapping: ImportMap,
    *,
    file: str,
    id_prefix: str,
    dims: Sequence[str] | None = None,
) -> tuple[list[dict[str, Any]], list[Finding]]:
    """(row number, parsed row) pairs -> (item records, findings), every problem of every row.

    `file` names the import file in findings; `id_prefix` makes the ids of rows without their own
    (`f"{id_prefix}-{line:05d}"`); `dims` are the suite's declared slice dimensions (None: keep the
    mapped slices as they are). Findings on the mapping itself (slices against `dims`) come first,
    with no line; then each row's, in row order. Raises ValueError for an id_prefix that cannot
    start an id.
    """
    if not _PREFIX_PATTERN.fullmatch(id_prefix):
        raise ValueError(
            f"id prefix {id_prefix!r} cannot start an id: use 1-100 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    findings = _declared_findings(mapping, dims, file) if dims is not None else []
    slices = [s for s in mapping.slices if dims is None or s.dim in dims]
    if dims is not None:
        order = {d: i for i, d in enumerate(dims)}
        slices.sort(key=lambda s: order[s.dim])
    records: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}  # casefolded id -> its first row (ids differing only in case are one)
    for line, row in rows:
        if not isinstance(row, dict):
            message = f"expected a JSON object, got {_kind(row)}"
            findings.append(Finding("import-not-object", message, file, line, hint="each row is one object"))
            continue
        problems: list[_RowProblem] = []
        own = _attempt(problems, _own_id, row, mapping)
        item_id = own if own is not None else f"{id_prefix}-{line:05d}"
        first = seen_ids.setdefault(item_id.casefold(), line)
        if first != line:
            problems.append(
                _RowProblem(
                    "import-duplicate-id",
                    mapping.id or "id",
                    f"{mapping.id or 'id'}: {item_id!r} is also the id of row {first}",
                    "ids are unique (compared ignoring case)",
                )
            )
        record = _record(row, mapping, slices, dims is not None, problems)
        findings.extend(
            Finding(p.check, _unprefixed(p.message, p.field), file, line, own, p.field, p.hint)
            for p in problems
        )
        if record is not None and not problems:
            records.append({"id": item_id, **record})
    return records, findings


def _unprefixed(message: str, field: str | None) -> str:
    """A row problem's message without its column's name: the finding shows the field before it
    (`mmlu.jsonl:13: answer: 'E' is not one of the labels`, not `answer: answer: ...`)."""
    return message.removeprefix(f"{field}: ") if field else message


def _attempt(problems: list[_RowProblem], step: Any, *args: Any) -> Any:
    """step(*args), or None with its problem noted: one bad field never hides the next one."""
    try:
        return step(*args)
    except _RowProblem as problem:
        problems.append(problem)
        return None


def _record(
    row: dict[str, Any],
    mapping: ImportMap,
    slices: Sequence[SliceColumn],
    declared: bool,
    problems: list[_RowProblem],
) -> dict[str, Any] | None:
    """The item's fields after its id, in the documented order; None when a required one failed."""
    prompt = _attempt(problems, _prompt, row, mapping)
    choices = _attempt(problems, _choices, row, mapping)
    answer = lookup(row, mapping.expected)
    expected = None
    if not _present(answer):
        null = " (null)" if answer is None else ""
        message = f"{mapping.expected}: missing{null}"
        problems.append(_RowProblem("import-missing", mapping.expected, message, HINT_ANSWER))
    elif choices is not None:
        _, texts, labels = choices
        index = _attempt(problems, _answer, answer, mapping.expected, texts, labels)
        expected = None if index is None else texts[index]
    slice_values: dict[str, str] = {}
    for s in slices:
        if s.value is not None:  # a constant of the mapping, the same for every row
            slice_values[s.dim] = s.value
            continue
        value = lookup(row, s.source)
        if not _present(value):
            if declared or not s.optional:
                message = f"{s.source}: missing (it gives slices.{s.dim})"
                problems.append(
                    _RowProblem("import-slice", s.source, message, "give every row a value for each slice")
                )
            continue
        text = _attempt(problems, _slice_value, value, s.source)
        if text is not None:
            slice_values[s.dim] = text
    extras: dict[str, str] = {}
    for name, path in (("explanation", mapping.explanation), ("source", mapping.source)):
        value = lookup(row, path) if path else _MISSING
        if not _present(value):
            continue
        if not isinstance(value, str):
            message = f"{path}: expected text, got {_kind(value)}"
            problems.append(_RowProblem("import-type", path or name, message, f"the {name} is text"))
        elif value.strip():  # an empty cell of an export is an absent field
            extras[name] = value.strip()
    if prompt is None or choices is None or expected is None:
        return None
    return {
        "prompt": prompt,
        "candidates": choices[1],
        "expected": expected,
        "slices": slice_values,
        **extras,
    }


# ---------------------------------------------------------------------------------------- bytes


def read_rows(data: bytes, file: str, *, fmt: str | None = None) -> tuple[list[Row], list[Finding]]:
    """An export's bytes -> (row number, parsed row) pairs and located findings; never raises.

    `fmt` is "jsonl", "json" (one array of objects) or "csv" (a header row; a cell holding a list,
    such as the choices, is a JSON list); None: "csv" for a name ending in .csv, "json" for bytes
    starting with `[`, else "jsonl". Row numbers: a JSONL row is its line, a JSON array's row is the
    1-based position of the element (a syntax error has no row: its text line is in the message),
    a CSV row its spreadsheet row (the header is row 1). CSV cells stay text; an empty cell is an
    absent column.
    """
    if fmt is None:
        if file.lower().endswith(".csv"):
            fmt = "csv"
        else:
            fmt = "json" if data.removeprefix(BOM_UTF8).lstrip().startswith(b"[") else "jsonl"
    if fmt == "csv":
        return _read_csv(data, file)
    if fmt == "json":
        return _read_array(data, file)
    if fmt == "jsonl":
        records, found = parse_jsonl(data, file, allow_blank=True, what="row")
        return list(records), [f for f in found if f.check != "jsonl-bom"]
    raise ValueError(f"unknown format {fmt!r}: jsonl, json or csv")


def _read_array(data: bytes, file: str) -> tuple[list[Row], list[Finding]]:
    def fail(check: str, message: str, hint: str) -> tuple[list[Row], list[Finding]]:
        return [], [Finding(check, message, file, None, hint=hint)]

    if kind := utf16_kind(data):
        return fail(
            "json-encoding", utf16_message(kind, data.startswith((b"\xff\xfe", b"\xfe\xff"))), HINT_UTF8
        )
    try:
        text = data.removeprefix(BOM_UTF8).decode("utf-8")
    except UnicodeDecodeError as exc:
        return fail("json-encoding", f"byte {exc.start} (counting from 0) is not valid UTF-8", HINT_UTF8)
    try:
        value = json.loads(
            text,
            object_pairs_hook=unique_keys,
            parse_constant=_no_constant,
            parse_int=read_int,
            parse_float=read_float,
        )
    except UnreadableNumber as exc:
        message, field = exc.message(data)
        return [], [
            Finding("json-number", message, file, None, None, field, "write the value the field expects")
        ]
    except DuplicateJsonKey as exc:
        return fail(
            "json-duplicate-key", f'key "{exc.key}" appears twice in one object', "keep one of the two"
        )
    except json.JSONDecodeError as exc:
        return fail(
            "json-syntax",
            f"invalid JSON at text line {exc.lineno}, column {exc.colno}: {exc.msg}",
            "fix the JSON, or export one object per line (JSON Lines)",
        )
    except (ValueError, RecursionError) as exc:
        return fail("json-syntax", f"invalid JSON: {exc or 'nested too deeply'}", "fix the JSON")
    if not isinstance(value, list):
        return fail(
            "json-not-array", f"expected an array of rows, got {_kind(value)}", "export the rows as an array"
        )
    if not value:
        return fail("json-empty", "the array holds no rows", "export the rows of the benchmark")
    rows: list[Row] = []
    findings: list[Finding] = []
    for n, item in enumerate(value, start=1):
        if isinstance(item, dict):
            rows.append((n, item))
        else:
            findings.append(
                Finding(
                    "json-not-object",
                    f"element {n} is {_kind(item)}, not an object",
                    file,
                    n,
                    hint="each row is one object",
                )
            )
    return rows, findings


def array_element_lines(data: bytes) -> dict[int, int]:
    """A JSON array's element number (1-based, its row number) -> the text line it starts on.

    Rows are numbered by element (their ids must not move when the file is re-indented), but a
    finding is shown at `file:line`, which must be the element's own line; {} when `data` is no
    readable JSON array (read_rows then has a finding of its own).
    """
    try:
        text = data.removeprefix(BOM_UTF8).decode("utf-8")
        decoder = json.JSONDecoder(object_pairs_hook=unique_keys, parse_constant=_no_constant)
        lines: dict[int, int] = {}
        ws = re.compile(r"[ \t\n\r]*")
        pos = ws.match(text, 0).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] != "[":
            return {}
        pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
        n = 0
        # the line count is carried from one element to the next (counting from the start each
        # time made an 8,000-row array quadratic: docs/probes.md, "Bounded work")
        line, counted = 1, 0
        while pos < len(text) and text[pos] != "]":
            n += 1
            line += text.count("\n", counted, pos)
            counted = pos
            lines[n] = line
            _, pos = decoder.raw_decode(text, pos)
            pos = ws.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos : pos + 1] == ",":
                pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
        return lines
    except (ValueError, RecursionError):
        return {}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _read_csv(data: bytes, file: str) -> tuple[list[Row], list[Finding]]:
    data = data.removeprefix(BOM_UTF8)  # Excel's "CSV UTF-8" starts with one
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [
            Finding(
                "csv-encoding", f"byte 0x{data[exc.start]:02X} is not valid UTF-8", file, line, hint=HINT_CSV
            )
        ]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    table: list[list[str]] = []
    try:
        table.extend(reader)
    except csv.Error as exc:  # an unclosed quote would swallow every row after it
        return [], [Finding("csv-syntax", f"not valid CSV: {exc}", file, reader.line_num, hint=HINT_CSV)]
    if not table or not any(c.strip() for c in table[0]):
        return [], [Finding("csv-header", "the first row must be the header", file, 1, hint=HINT_CSV)]
    header = [h.strip() for h in table[0]]
    dup = next((h for i, h in enumerate(header) if h and h in header[:i]), None)
    if dup is not None:
        first, second = [i + 1 for i, h in enumerate(header) if h == dup][:2]
        message = f"column {dup!r} appears twice (columns {first} and {second})"
        return [], [Finding("csv-duplicate-column", message, file, 1, None, dup, "keep one of the two")]
    rows: list[Row] = []
    findings: list[Finding] = []
    for number, cells in enumerate(table[1:], start=2):
        if not any(c.strip() for c in cells):
            continue  # spreadsheets leave empty rows at the end
        if any(c.strip() for c in cells[len(header) :]):
            message = f"{len(cells)} cells but {len(header)} columns"
            findings.append(Finding("csv-extra-cells", message, file, number, hint=HINT_CSV))
            continue
        unnamed = [i for i, (h, c) in enumerate(zip(header, cells, strict=False), 1) if not h and c.strip()]
        if unnamed:
            message = f"column {unnamed[0]} has no name but holds data"
            findings.append(Finding("csv-unnamed-column", message, file, number, hint="name every column"))
            continue
        rows.append((number, {h: c for h, c in zip(header, cells, strict=False) if h and c != ""}))
    if not rows and not findings:
        findings.append(Finding("csv-empty", "the file has a header but no rows", file, None, hint=HINT_CSV))
    return rows, findings


__all__ = [
    "PRESETS",
    "TARGETS",
    "Choices",
    "ImportMap",
    "SliceColumn",
    "convert",
    "lookup",
    "parse_map",
    "read_rows",
]


def preset_guess(rows: Sequence[Row], current: str) -> list[str]:
    """The presets other than `current` that read the file's first rows without a missing column:
    what to say when `--from` names the wrong layout (an ARC export imported `--from mmlu`)."""
    sample = [(n, r) for n, r in rows[:5] if isinstance(r, dict)]
    if not sample:
        return []
    out = []
    for name, preset in PRESETS.items():
        if name == current:
            continue
        _, found = convert(sample, preset, file="", id_prefix="guess")
        if not any(f.check == "import-missing" for f in found):
            out.append(name)
    return out
