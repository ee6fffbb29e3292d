"""Parsed JSONL records -> `Probe`s plus schema and semantic findings (docs/probes.md, docs/validate.md).

Every record is checked completely: the schema errors of all its fields, then every semantic rule
whose fields passed the schema, so one run lists every problem. Deprecated probes are never scored
again, so they only have to stay schema-valid and keep their id unique (and their lock hash, see
probeset/manifest.py); the other rules are about what a probe measures and skip them.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import PurePosixPath
from typing import Any

import jsonschema

from evalgate.probeset.field_text import (
    CONTROL,
    HINT_CONFUSABLE,
    HINT_CONFUSABLE_PROMPT,
    HINT_CONTROL,
    confusable_problems,
    control_problems,
    glued_word,
    only_invisible,
    prompt_confusable_problems,
    reveal,
    same_form,
    short,
    space_before_blank,
)
from evalgate.probeset.grammar import Grammar, Verb
from evalgate.probeset.normalize import has_ignorable, normalize
from evalgate.probeset.scale import KIND as ORDINAL
from evalgate.probeset.scale import scale_problem
from evalgate.probeset.text import normalize_exact
from evalgate.schemas import schema
from evalgate.types import BLANK, LANGUAGES, PERSONS, TENSES, Finding, Probe

_BLANK_RUN = re.compile(r"_{3,}")
_WORD = re.compile(r"[^\W_]")

# Symbolic check names (Finding.check) with the hint that goes with each.
HINTS = {
    "schema": "see the field reference in docs/probes.md (schema: evalgate/schemas/probe.schema.json)",
    "unknown-field": "remove the field or fix its name: probe files allow only the documented fields",
    "duplicate-id": "give one of the two probes a new id (ids are unique across all probe files)",
    "expected-not-candidate": "make `expected` one of the `candidates` (a probe that cannot be right "
    "could never fail)",
    "blank": "write the prompt with exactly one ___ where the verb form goes",
    "verb-unknown": "use one of the target verbs of that language (data/grammar/verbs.yaml)",
    "regularity-mismatch": "set `regularity` to what the grammar table says",
    "expected-form": "make `expected` the grammar table's form for the probe's tense and person (an "
    "auxiliary before it is allowed: 'has eaten'), or fix `tense`/`person`",
    "category-file": 'adversarial probes go in a file whose name contains "adversarial", core probes '
    "in any other file",
    "reason-code-missing": "give every adversarial probe a reason_code naming its category, e.g. PAST-IRREG",
    "twin": "make the prompts differ, or deprecate one of the two probes; `probes import --allow-twins` "
    "imports twins on purpose",
    "reason-code-core": "remove the reason_code: it names an adversarial category, and a core probe has none "
    "(or move the probe to the adversarial file)",
    "text-form": "write the text as a reader sees it: composed accents (NFC), no invisible characters; each "
    "candidate the bare form, without surrounding spaces (the scorer adds the space before it), each "
    "one different",
    "ordinal-scale": 'list the scale points low to high: numbers in strictly increasing order ("1".."5"), '
    "or ordered labels (docs/ordinal.md)",
}
ITEM_SCHEMA_HINT = "see the item fields in docs/suites.md (schema: evalgate/schemas/item.schema.json)"


def probe_schema() -> dict[str, Any]:
    return schema("probe")


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(probe_schema())


@cache
def _named_validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name))


def expected_category(file: str) -> str:
    """The category a file holds: "adversarial" when its name says so, else "core"."""
    name = PurePosixPath(file.replace("\\", "/")).name.lower()
    return "adversarial" if "adversarial" in name else "core"


def _schema_message(err: jsonschema.ValidationError) -> str:
    """A short message: jsonschema's own repeats the whole instance (a 2,000-character prompt)."""
    value, kind, arg = err.instance, err.validator, err.validator_value
    sub = "".join(f"[{p}]" for p in list(err.absolute_path)[1:])
    where = f"item {sub}: " if sub else ""
    if kind == "enum":
        return f"{where}{short(value)} is not one of {', '.join(map(str, arg))}"
    if kind == "type":
        return f"{where}{short(value)} is not of type {arg}"
    if kind == "pattern":
        if arg == r"\S":
            return f"{where}{short(value)} is blank"
        shown = arg.replace("$(?!\\n)", "$")  # the look-ahead only keeps `$` from matching before "\n"
        extra = " (it ends with a line break)" if isinstance(value, str) and value.endswith("\n") else ""
        return f"{where}{short(value)} does not match the pattern {shown}{extra}"
    if kind in ("minLength", "maxLength"):
        n = len(value) if isinstance(value, str) else "?"
        bound = "at least" if kind == "minLength" else "at most"
        return f"{where}has {n} characters, {bound} {arg} allowed"
    if kind in ("minItems", "maxItems"):
        n = len(value) if isinstance(value, list) else "?"
        bound = "at least" if kind == "minItems" else "at most"
        return f"{where}has {n} items, {bound} {arg} allowed"
    if kind == "uniqueItems":
        # counted once each (list.count per element was quadratic: 108k candidates took minutes)
        counts = Counter(short(v) for v in value)
        dups = sorted(v for v, k in counts.items() if k > 1)
        return f"{where}repeats {', '.join(dups)}; candidates must be distinct"
    return f"{where}{err.message[:200]}"


def record_id(rec: dict[str, Any]) -> str | None:
    """The id to name a record by: a string as is, a number or boolean (a typo) by its JSON spelling."""
    value = rec.get("id")
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):  # bool included
        return json.dumps(value)
    return None


def schema_findings(
    rec: dict[str, Any], file: str, line: int, of: str = "probe"
) -> tuple[list[Finding], set[str]]:
    """Every schema error of one record, one finding per field, and the set of fields at fault.

    `of` names the schema: "probe" (a verb-form probe) or "item" (a multiple-choice item).
    """
    pid = record_id(rec)
    allowed = schema(of)["properties"]
    schema_hint = HINTS["schema"] if of == "probe" else ITEM_SCHEMA_HINT
    findings: list[Finding] = []
    bad: set[str] = set()
    validator = _validator() if of == "probe" else _named_validator(of)
    # A list far over its maxItems is validated on its first maxItems + 1 elements: the finding
    # is the same (too many), and jsonschema's uniqueItems falls back to comparing every pair
    # for values it cannot sort (docs/probes.md, "Bounded work"). The count shown is the real one.
    checked, over = rec, {}
    for name, spec in allowed.items():
        limit = spec.get("maxItems") if isinstance(spec, dict) else None
        value = rec.get(name)
        if isinstance(limit, int) and isinstance(value, list) and len(value) > limit + 1:
            checked = {**checked, name: value[: limit + 1]}
            over[name] = (limit + 1, len(value))
    errors = sorted(validator.iter_errors(checked), key=lambda e: [str(p) for p in e.absolute_path])
    for err in errors:
        if err.validator == "required":
            # jsonschema raises one error per missing name, each carrying the whole list
            for name in err.validator_value:
                if name not in rec and name not in bad:
                    bad.add(name)
                    msg = f"missing required field '{name}'"
                    findings.append(Finding("schema", msg, file, line, pid, name, schema_hint))
        elif err.validator == "additionalProperties":
            for name in sorted(set(rec) - set(allowed)):
                bad.add(name)
                close = difflib.get_close_matches(name, list(allowed), n=1)
                msg = f"unknown field '{name}'" + (f" (did you mean '{close[0]}'?)" if close else "")
                findings.append(Finding("schema", msg, file, line, pid, name, HINTS["unknown-field"]))
        else:
            path = list(err.absolute_path)
            name = str(path[0]) if path else None
            if name == "slices" and len(path) > 1:
                name = f"slices.{path[1]}"  # the dimension at fault, not the whole object
            if name:
                bad.add(name)
            message = _schema_message(err)
            if name in over and err.validator == "maxItems":
                cut, real = over[name]
                message = message.replace(f"has {cut} items", f"has {real} items", 1)
            findings.append(Finding("schema", message, file, line, pid, name, schema_hint))
    return findings, bad


def _blank_problem(prompt: str) -> str | None:
    runs = _BLANK_RUN.findall(prompt)
    if not runs:
        return f"the prompt has no blank: write {BLANK} where the verb form goes{_lookalikes(prompt)}"
    if len(runs) > 1:
        return f"the prompt has {len(runs)} blanks; exactly one {BLANK} is allowed"
    if runs[0] != BLANK:
        return f"the blank is written with {len(runs[0])} underscores; write exactly three ({BLANK})"
    before = space_before_blank(prompt)
    if before not in (None, "", " "):
        return (
            f"the blank has {reveal(before)} before it; write one plain space (the space before "
            "the blank is scored with the form)"
        )
    if not _WORD.search(prompt.replace(BLANK, " ")):
        return "the prompt has no words around the blank: there is no sentence for the form to complete"
    glued = glued_word(prompt)
    if glued:
        return (
            f"the blank is glued to a word ({glued!r}): the form would be joined to it; "
            "leave a space or punctuation on both sides"
        )
    return None


_LOOKALIKE_NAMES = ("LOW LINE", "LOW MACRON", "ONE EIGHTH BLOCK")


def _lookalikes(prompt: str) -> str:
    """Name what looks like an underscore (＿ ‗ ﹍ ˍ ▁) or a run of dashes in a prompt without a blank."""
    found: dict[str, str] = {}
    for ch in prompt:
        name = unicodedata.name(ch, "")
        if ch != "_" and any(n in name for n in _LOOKALIKE_NAMES):
            found.setdefault(ch, name)
    for run in re.findall(r"([\u2012-\u2015\u2212-])\1{2,}", prompt):
        found.setdefault(run, unicodedata.name(run, ""))
    if not found:
        return ""
    if "＿" in found:
        found["＿"] = "FULLWIDTH LOW LINE, the full-width underscore"
    shown = "; ".join(f"{ch} is U+{ord(ch):04X} {name}" for ch, name in found.items())
    return f" ({shown}: the blank is three ASCII underscores _)"


def _nfc_problem(text: str) -> str:
    """What keeps `text` from NFC, said as what it is: a character NFC replaces on its own (the
    OHM SIGN U+2126 is the Greek Ω U+03A9, the ANGSTROM SIGN U+212B is Å), or an accent written
    as a separate combining mark."""
    singles = [ch for ch in dict.fromkeys(text) if unicodedata.normalize("NFC", ch) != ch]
    if not singles:
        return "is not in NFC form (an accent written as a separate combining mark)"

    def named(ch: str) -> str:
        return f"{ch!r} " + " ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in ch)

    said = "; ".join(
        f"{named(ch)}, which NFC replaces by {named(unicodedata.normalize('NFC', ch))}" for ch in singles
    )
    return f"is not in NFC form: it holds {said} (another code point for the same character)"


def _form_problems(text: str) -> list[str]:
    out = []
    if not text.isascii() and unicodedata.normalize("NFC", text) != text:
        out.append(_nfc_problem(text))
    if has_ignorable(text):
        out.append("holds invisible characters")
    return out


def _candidate_problems(candidates: list[str]) -> list[str]:
    """Candidates that differ from a clean, distinct form only in what the eye cannot see."""
    out: list[str] = []
    first: dict[str, int] = {}
    for i, cand in enumerate(candidates):
        if only_invisible(cand):
            out.append(f"item [{i}]: {reveal(cand)} holds only invisible characters")
            continue
        if cand != cand.strip():
            out.append(f"item [{i}]: {reveal(cand)} starts or ends with whitespace")
        out += [f"item [{i}]: {reveal(cand)} {p}" for p in _form_problems(cand)]
        if CONTROL.search(cand):
            out.append(f"item [{i}]: {reveal(cand)} holds a control character (a line break, a tab...)")
        if BLANK in cand:
            out.append(f"item [{i}]: {reveal(cand)} holds the blank {BLANK} (a candidate is the form itself)")
        key = normalize(cand)  # the one normalisation (probeset/normalize.py)
        if key in first:
            j = first[key]
            out.append(
                f"items [{j}] and [{i}] are the same form {short(key)} once Unicode, spacing and case "
                "are normalised "
                f"({reveal(candidates[j])} vs {reveal(cand)}); candidates must be distinct"
            )
        else:
            first[key] = i
    return out


def text_findings(
    rec: dict[str, Any],
    file: str,
    line: int,
    bad: set[str],
    hints: Mapping[str, str],
    blank_problem: Callable[[str], str | None],
) -> list[Finding]:
    """The rules a verb-form probe and a suite's item share: `expected` among the candidates, no
    control characters, the text form and look-alike letters of the candidates and the prompt,
    the prompt's blank (`blank_problem`: each kind has its own), an ordinal scale in order.
    `hints` is the kind's (a probe's or an item's wording)."""
    pid = record_id(rec)
    out: list[Finding] = []

    def add(check: str, field: str, message: str, hint: str | None = None) -> None:
        out.append(Finding(check, message, file, line, pid, field, hint or hints[check]))

    prompt_str = isinstance(rec.get("prompt"), str)
    cands = rec.get("candidates")
    cands_str = isinstance(cands, list) and bool(cands) and all(isinstance(c, str) for c in cands)
    if isinstance(rec.get("expected"), str) and cands_str and rec["expected"] not in rec["candidates"]:
        shown = ", ".join(short(c, 30) for c in rec["candidates"])
        twin = [c for c in rec["candidates"] if same_form(c, rec["expected"])]
        note = (
            f" ({reveal(rec['expected'])} and {reveal(twin[0])} differ only in Unicode normalisation, "
            "spacing or case: write `expected` exactly as the candidate, in NFC, the composed form)"
            if twin
            else ""
        )
        add(
            "expected-not-candidate",
            "expected",
            f"{short(rec['expected'])} is not one of the candidates ({shown}){note}",
        )
    for field, problem in control_problems(rec):
        add("control-character", field, problem, HINT_CONTROL)
    if "candidates" in rec and "candidates" not in bad:
        for problem in _candidate_problems(rec["candidates"]):
            add("text-form", "candidates", problem)
        for problem in confusable_problems(rec["candidates"]):
            add("confusable", "candidates", problem, HINT_CONFUSABLE)
    if prompt_str:
        # the prompt is read by the model and by the leak check: a look-alike letter in one of its
        # words would hide a verbatim copy of the question (docs/validate.md, "Scripts and look-alikes")
        for problem in prompt_confusable_problems(rec["prompt"]):
            add("confusable", "prompt", problem, HINT_CONFUSABLE_PROMPT)
    if prompt_str and (blank := blank_problem(rec["prompt"])):
        add("blank", "prompt", blank)
    if prompt_str and (problems := _form_problems(rec["prompt"])):
        add("text-form", "prompt", f"the prompt {' and '.join(problems)}: {reveal(rec['prompt'])[:200]}")
    readable = all(n in rec and n not in bad for n in ("kind", "candidates"))
    if readable and rec["kind"] == ORDINAL and (scale := scale_problem(rec["candidates"])):
        add("ordinal-scale", "candidates", scale)
    return out


def semantic_findings(
    rec: dict[str, Any], file: str, line: int, grammar: Grammar | None, bad: set[str]
) -> list[Finding]:
    """The rules beyond the schema, each run when the fields it reads can be read.

    Most rules need their fields to pass the schema; the blank and `expected in candidates` only
    need strings (a prompt over the length limit can still have two blanks), so one run names
    every fault of the record.
    """
    pid = record_id(rec)
    out = text_findings(rec, file, line, bad, HINTS, _blank_problem)

    def ok(*names: str) -> bool:
        return all(n in rec and n not in bad for n in names)

    def add(check: str, field: str, message: str, hint: str | None = None) -> None:
        out.append(Finding(check, message, file, line, pid, field, hint or HINTS[check]))

    if ok("category"):
        want = expected_category(file)
        if rec["category"] != want:
            add(
                "category-file",
                "category",
                f"category is '{rec['category']}' but this file holds {want} probes",
                f"set category to '{want}' or move the probe: {HINTS['category-file']}",
            )
        if rec["category"] == "adversarial" and "reason_code" not in rec:
            add("reason-code-missing", "reason_code", "adversarial probe without a reason_code")
        # ordinal probes are core items of a scale, never gated: their codes name scale points
        if rec["category"] == "core" and "reason_code" in rec and rec.get("kind", "form") != ORDINAL:
            add(
                "reason-code-core",
                "reason_code",
                f"a core probe carries reason_code {short(rec['reason_code'])}: reason codes name "
                "adversarial categories",
            )
    unreadable_language = ok("verb") and not ok("language")
    if (
        grammar is not None
        and unreadable_language
        and not any(grammar.get(x, rec["verb"]) for x in LANGUAGES)
    ):
        # the language is unreadable; a verb of no language at all is a fault of its own
        message = f"'{rec['verb']}' is not a target verb of any language ({', '.join(LANGUAGES)})"
        add("verb-unknown", "verb", message)
    if grammar is not None and ok("language", "verb"):
        verb = grammar.get(rec["language"], rec["verb"])
        if verb is None:
            add("verb-unknown", "verb", _unknown_verb(rec["language"], rec["verb"], grammar))
        else:
            if ok("regularity") and rec["regularity"] != verb.regularity:
                add(
                    "regularity-mismatch",
                    "regularity",
                    f"'{rec['regularity']}' disagrees with the grammar table: "
                    f"{rec['language']} '{verb.infinitive}' is {verb.regularity}",
                    f"set regularity to '{verb.regularity}' (the grammar table is the reference)",
                )
            if (
                ok("tense", "person", "expected", "candidates", "label")
                and "kind" not in bad
                and rec.get("kind", "form") != ORDINAL
                and rec["label"] == "correct"
                and rec["expected"] in rec["candidates"]
                and (mismatch := _form_mismatch(rec, verb, grammar))
            ):
                add("expected-form", "expected", mismatch)
    return out


def _matches_form(expected: str, form: str) -> bool:
    """`expected` is the table's form, case aside, or that form after an auxiliary ("has eaten")."""
    exp, want = " ".join(expected.lower().split()), form.lower()
    return exp == want or exp.endswith(" " + want)


def _form_mismatch(rec: dict[str, Any], verb: Verb, grammar: Grammar) -> str | None:
    """The message when a correct probe's expected is not the table's form for its tense x person."""
    tense, person, expected = rec["tense"], rec["person"], rec["expected"]
    form = verb.form(tense, person)
    if _matches_form(expected, form):
        return None
    where = f"{rec['language']} '{verb.infinitive}' {tense} {person}"
    message = f"{short(expected)} is not the grammar table's form for {where} ('{form}')"
    cells = [f"{t} {p}" for t in TENSES for p in PERSONS if _matches_form(expected, verb.form(t, p))]
    if cells:
        shown = ", ".join(cells[:3]) + (", ..." if len(cells) > 3 else "")
        message += f"; it is the form for {shown}: fix `expected`, or `tense`/`person`"
    elif others := [
        v.infinitive
        for v in grammar.of_language(rec["language"])
        if v is not verb and _matches_form(expected, v.form(tense, person))
    ]:
        message += f"; it is the {tense} {person} form of '{others[0]}': check `verb`"
    elif all(c.strip().isdigit() for c in rec["candidates"]):
        message += '; the candidates look like an ordinal scale: is `"kind": "ordinal"` missing?'
    return message


def _unknown_verb(language: str, verb: str, grammar: Grammar) -> str:
    known = [v.infinitive for v in grammar.of_language(language)]
    msg = f"'{verb}' is not one of the {len(known)} target verbs of '{language}'"
    other = "es" if language == "en" else "en"
    if grammar.get(other, verb) is not None:
        return msg + f" (it is a target verb of '{other}': check the probe's language)"
    close = difflib.get_close_matches(verb, known, n=1)
    return msg + (f" (did you mean '{close[0]}'?)" if close else f" ({', '.join(known)})")


def probes_from_records(
    records: Iterable[tuple[int, dict[str, Any]]], file: str, grammar: Grammar | None
) -> tuple[list[Probe], list[Finding], list[tuple[int, str]]]:
    """The schema-valid probes of one file, every finding, and (line, id) of every record with an id."""
    probes: list[Probe] = []
    findings: list[Finding] = []
    ids: list[tuple[int, str]] = []
    for line, rec in records:
        if isinstance(rec.get("id"), str):
            ids.append((line, rec["id"]))
        found, bad = schema_findings(rec, file, line)
        findings.extend(found)
        deprecated = rec.get("deprecated") is True
        if not deprecated:
            findings.extend(semantic_findings(rec, file, line, grammar, bad))
        if not found:
            probes.append(Probe.from_record(rec, file=file, line=line))
    return probes, findings, ids


def duplicate_ids(ids: Sequence[tuple[str, int, str]]) -> list[Finding]:
    """(file, line, id) across all files: every repeat names the first location too.

    Ids are compared normalised (probeset/normalize.py): `past-irreg-01` and `PAST-IRREG-01` name one
    probe on a case-insensitive file system, in a spreadsheet and to a reader.
    """
    first: dict[str, tuple[str, int, str]] = {}
    out: list[Finding] = []
    for file, line, pid in ids:
        key = normalize(pid)
        if key in first:
            f0, l0, p0 = first[key]
            same = "" if p0 == pid else f" as '{p0}' (ids that differ only in case or spacing are one id)"
            out.append(
                Finding(
                    "duplicate-id",
                    f"id '{pid}' is already used at {f0}:{l0}{same}",
                    file,
                    line,
                    pid,
                    "id",
                    HINTS["duplicate-id"],
                    evidence={"first": f"{f0}:{l0}", "again": f"{file}:{line}"},
                )
            )
        else:
            first[key] = (file, line, pid)
    return out


def twins(probes: Sequence[Probe]) -> list[Finding]:
    """Warnings for live probes whose prompts match once normalised (case, spacing, Unicode).

    An item of a multiple-choice suite is a twin when its prompt *and* its candidates (as a set)
    match: a benchmark asks "Which of the following is true?" of many option lists, and each is
    its own question (docs/authoring.md, docs/suites.md).
    """
    first: dict[tuple[str, ...], Probe] = {}
    out: list[Finding] = []
    for p in probes:
        if p.deprecated:
            continue  # a replacement usually keeps the retired probe's prompt
        key: tuple[str, ...] = (normalize_exact(p.prompt),)
        if p.is_item:
            key += tuple(sorted(normalize_exact(c) for c in p.candidates))
        if key in first:
            q = first[key]
            what = "the prompt and candidates repeat item" if p.is_item else "the prompt repeats probe"
            out.append(
                Finding(
                    "twin",
                    f"{what} {q.id}'s ({q.file}:{q.line}) ignoring case and whitespace",
                    p.file,
                    p.line,
                    p.id,
                    "prompt",
                    HINTS["twin"],
                    evidence={"twin_of": q.id},
                )
            )
        else:
            first[key] = p
    return out
