"""probeset/jsonl.py and probeset/corpus.py: bytes in, records and located findings out, no exception."""

from __future__ import annotations

import pytest

from evalgate.probeset.corpus import read_sentences
from evalgate.probeset.jsonl import DEFAULT_MAX_LINE_BYTES, parse_jsonl


def checks(findings):
    return [(f.check, f.line) for f in findings]


def test_objects_come_back_with_their_line_numbers():
    records, findings = parse_jsonl(b'{"id": "a"}\n{"id": "b"}\r\n{"id": "c"}', "p.jsonl")
    assert findings == []
    assert records == [(1, {"id": "a"}), (2, {"id": "b"}), (3, {"id": "c"})]


def test_bom_is_reported_and_the_rest_still_read():
    records, findings = parse_jsonl(b'\xef\xbb\xbf{"id": "a"}\n', "p.jsonl")
    assert checks(findings) == [("jsonl-bom", 1)]
    assert "remove the byte-order mark" in findings[0].hint
    assert records == [(1, {"id": "a"})]


def test_utf16_is_named_as_such():
    records, findings = parse_jsonl('{"id": "a"}\n'.encode("utf-16"), "p.jsonl")
    assert records == []
    assert findings[0].check == "jsonl-encoding" and "UTF-16" in findings[0].message


def test_non_utf8_names_line_and_byte_offset():
    data = b'{"id": "a"}\n{"id": "b", "prompt": "Ayer Luc\xeda ___"}\n'
    records, findings = parse_jsonl(data, "p.jsonl")
    assert records == [(1, {"id": "a"})]
    (f,) = findings
    assert (f.check, f.line, f.probe_id, f.file) == ("jsonl-encoding", 2, "b", "p.jsonl")
    assert "0xED at byte 32 of the line (file offset 43, counting from 0)" in f.message


@pytest.mark.parametrize("data", [b"", b"\n\n  \n"])
def test_an_empty_file_is_one_clear_finding(data):
    records, findings = parse_jsonl(data, "p.jsonl")
    assert records == []
    assert [(f.check, f.file, f.line) for f in findings] == [("jsonl-empty", "p.jsonl", None)]


def test_blank_lines_are_reported_unless_allowed():
    data = b'{"id": "a"}\n\n{"id": "b"}\n   \n'
    records, findings = parse_jsonl(data, "p.jsonl")
    assert checks(findings) == [("jsonl-blank", 2), ("jsonl-blank", 4)]
    assert [r[0] for r in records] == [1, 3]
    assert parse_jsonl(data, "c.jsonl", allow_blank=True)[1] == []


def test_a_10_mb_line_is_a_message_not_a_traceback():
    huge = b'{"id": "x", "prompt": "' + b"a" * 10_000_000 + b'"}'
    records, findings = parse_jsonl(b'{"id": "a"}\n' + huge + b'\n{"id": "b"}\n', "p.jsonl")
    assert [r[0] for r in records] == [1, 3]
    (f,) = findings
    assert (f.check, f.line) == ("jsonl-line-too-long", 2)
    assert "10,000,025 bytes" in f.message and f"{DEFAULT_MAX_LINE_BYTES:,}" in f.message


def test_json_syntax_names_line_and_column_and_the_probe():
    _, findings = parse_jsonl(b'{"id": "a"}\n{"id": "p-7", "language": en}\n', "p.jsonl")
    (f,) = findings
    assert (f.check, f.line, f.probe_id) == ("jsonl-syntax", 2, "p-7")
    assert f.message.startswith("column 27:")


@pytest.mark.parametrize(
    ("line", "check", "words"),
    [
        (b'["a"]', "jsonl-not-object", "got an array"),
        (b'"a"', "jsonl-not-object", "got a string"),
        (b'{"id": "a", "id": "b"}', "jsonl-duplicate-key", 'key "id" appears twice'),
        (b'{"x": NaN}', "jsonl-syntax", "NaN"),
        (b'{"id": "a", "prompt": "\\ud800 ___"}', "jsonl-encoding", "surrogate"),
        (b"[" * 200_000, "jsonl-syntax", ""),
        (b'{"id": "a"', "jsonl-syntax", "column"),
    ],
)
def test_each_bad_line_kind_is_a_located_finding(line, check, words):
    records, findings = parse_jsonl(line + b"\n", "p.jsonl")
    assert records == []
    (f,) = findings
    assert (f.check, f.line) == (check, 1)
    assert words in f.message


def test_every_bad_line_is_reported_not_only_the_first():
    data = b'{"id": "a"}\nnot json\n\n[1]\n{"id": "b"}\n\xff\n'
    records, findings = parse_jsonl(data, "p.jsonl")
    assert [r[0] for r in records] == [1, 5]
    assert checks(findings) == [
        ("jsonl-syntax", 2),
        ("jsonl-blank", 3),
        ("jsonl-not-object", 4),
        ("jsonl-encoding", 6),
    ]


def test_corpus_jsonl_reads_text_and_allows_other_fields():
    data = b'{"text": "She works.", "lang": "en"}\n\n{"text": "Yo como."}\n{"txt": "typo"}\n{"text": 3}\n'
    sentences, findings = read_sentences(data, "data/corpus/train.jsonl")
    assert sentences == [(1, "She works."), (3, "Yo como.")]
    assert [(f.check, f.line, f.field) for f in findings] == [
        ("corpus-text", 4, "text"),
        ("corpus-text", 5, "text"),
    ]
    assert 'no "text" field' in findings[0].message


def test_corpus_txt_is_one_sentence_per_line():
    data = "\ufeffShe works.\r\n\n  Ayer fui al mercado.  \nbad \xff\n".encode("utf-8").replace(
        b"\xc3\xbf", b"\xff"
    )
    sentences, findings = read_sentences(data, "extra/notes.txt")
    assert sentences == [(1, "She works."), (3, "Ayer fui al mercado.")]
    assert [(f.check, f.line) for f in findings] == [("corpus-encoding", 4)]


def test_corpus_of_unknown_format_is_refused_by_name():
    sentences, findings = read_sentences(b"She works.\n", "train.csv")
    assert sentences == [] and findings[0].check == "corpus-format" and findings[0].file == "train.csv"
