"""Bytes of a training or test file -> (line number, sentence) pairs plus located findings.

Two formats (docs/validate.md, "Leaks"): `.jsonl` (also `.ndjson`, `.json`), one object per line with the
sentence in "text" and any other fields allowed; `.txt`, one sentence per line. Blank lines are
skipped in both: they hold no sentence, and corpora often end with a few.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from evalgate.probeset.encoding import UTF16_HINT, utf16_kind, utf16_message
from evalgate.probeset.jsonl import BOM_UTF8, DEFAULT_MAX_LINE_BYTES, parse_jsonl
from evalgate.types import Finding

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
TEXT_SUFFIXES = (".txt", ".text")

Sentence = tuple[int, str]


def corpus_format(file: str) -> str | None:
    suffix = PurePosixPath(file.replace("\\", "/")).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in TEXT_SUFFIXES:
        return "txt"
    return None


def read_sentences(
    data: bytes,
    file: str,
    *,
    fmt: str | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> tuple[list[Sentence], list[Finding]]:
    """The sentences of one corpus file, in file order; `fmt` defaults to the file's suffix."""
    fmt = fmt or corpus_format(file)
    if kind := utf16_kind(data):
        bom = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        return [], [Finding("corpus-encoding", utf16_message(kind, bom), file=file, line=1, hint=UTF16_HINT)]
    if data.startswith(BOM_UTF8):
        data = data[len(BOM_UTF8) :]  # harmless in a corpus, and spreadsheets and editors add it unasked
    if fmt == "txt":
        return _read_text(data, file, max_line_bytes)
    if fmt != "jsonl":
        return [], [
            Finding(
                "corpus-format",
                'unknown corpus format (expected a .jsonl file with a "text" field or a .txt file)',
                file=file,
                hint="rename the file to .jsonl or .txt to say how it is written",
            )
        ]
    records, findings = parse_jsonl(
        data, file, max_line_bytes=max_line_bytes, allow_blank=True, id_key=None, what="sentence"
    )
    sentences: list[Sentence] = []
    for line, obj in records:
        text = obj.get("text")
        if not isinstance(text, str):
            problem = 'has no "text" field' if "text" not in obj else '"text" is not a string'
            findings.append(
                Finding(
                    "corpus-text",
                    f"the object {problem}",
                    file=file,
                    line=line,
                    field="text",
                    hint='write each sentence as {"text": "..."} (other fields are allowed)',
                )
            )
            continue
        sentences.append((line, text))
    return sentences, findings


def _read_text(data: bytes, file: str, max_line_bytes: int) -> tuple[list[Sentence], list[Finding]]:
    findings: list[Finding] = []
    if data.startswith(BOM_UTF8):
        data = data[len(BOM_UTF8) :]  # harmless in plain text, and editors add it unasked
    sentences: list[Sentence] = []
    for line_no, raw in enumerate(data.split(b"\n"), start=1):
        raw = raw.rstrip(b"\r")
        if len(raw) > max_line_bytes:
            findings.append(
                Finding(
                    "corpus-line-too-long",
                    f"line is {len(raw):,} bytes, over the limit of {max_line_bytes:,}",
                    file=file,
                    line=line_no,
                    hint="a .txt corpus holds one sentence per line",
                )
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            findings.append(
                Finding(
                    "corpus-encoding",
                    f"byte 0x{raw[exc.start : exc.start + 1].hex().upper()} at byte {exc.start + 1} of "
                    "the line is not valid UTF-8",
                    file=file,
                    line=line_no,
                    hint="save the file as UTF-8",
                )
            )
            continue
        if text.strip():
            sentences.append((line_no, text.strip()))
    return sentences, findings
