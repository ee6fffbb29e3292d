"""A small valid probe set on disk, and the edits the broken-set fixtures apply to it.

`write_base(root)` lays out a repository in miniature (evalgate.yml with lowered coverage
thresholds, data/eval/{probes,adversarial}.jsonl, probe_prompt.txt, the real verb table,
data/corpus/{train,val}.jsonl) that validates clean. Each case of tests/helpers/fixtures/probesets/ is
a few `steps` applied to it (see that folder's README).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from evalgate.cli import main
from helpers.paths import FIXTURES, REPO

CASES = FIXTURES / "probesets"


def probe(
    pid: str,
    language: str,
    verb: str,
    regularity: str,
    tense: str,
    person: str,
    prompt: str,
    candidates: list[str],
    expected: str,
    category: str = "core",
    **extra: Any,
) -> dict[str, Any]:
    rec = {
        "id": pid, "language": language, "verb": verb, "regularity": regularity, "tense": tense,
        "person": person, "prompt": prompt, "candidates": candidates, "expected": expected,
        "label": "correct", "category": category,
    }  # fmt: skip
    rec.update(extra)
    return rec


CORE = [
    probe("en-work-pres-3sg-001", "en", "work", "regular", "present_simple", "3sg",
          "Every day Maria ___ at the office.", ["work", "works", "worked"], "works", source="hand"),
    probe("en-go-past-1sg-001", "en", "go", "irregular", "past_simple", "1sg",
          "Yesterday I ___ to the market.", ["go", "went", "goed"], "went", source="hand"),
    probe("en-eat-pp-3sg-001", "en", "eat", "irregular", "past_participle", "3sg",
          "She has ___ the bread already.", ["ate", "eaten", "eated"], "eaten", source="generated"),
    probe("en-play-fut-2sg-001", "en", "play", "regular", "future", "2sg",
          "Tomorrow you ___ football with Tom.", ["will play", "played", "plays"], "will play"),
    probe("es-hablar-pres-1sg-001", "es", "hablar", "regular", "present_simple", "1sg",
          "Todos los días yo ___ con mi madre.", ["hablo", "habla", "hablé"], "hablo"),
    probe("es-ir-past-3sg-001", "es", "ir", "irregular", "past_simple", "3sg",
          "Ayer Lucía ___ al mercado.", ["va", "fue", "irá"], "fue"),
    probe("es-tener-fut-2sg-001", "es", "tener", "irregular", "future", "2sg",
          "Mañana tú ___ tiempo libre.", ["tienes", "tendrás", "tuviste"], "tendrás"),
    probe("es-comer-inf-1sg-001", "es", "comer", "regular", "infinitive", "1sg",
          "Quiero ___ una manzana.", ["comer", "como", "comí"], "comer"),
]  # fmt: skip

ADVERSARIAL = [
    probe("adv-go-past-3sg-001", "en", "go", "irregular", "past_simple", "3sg",
          "Last week he ___ to the beach.", ["goed", "went"], "went", "adversarial",
          reason_code="PAST-IRREG"),
    probe("adv-have-pres-3sg-001", "en", "have", "irregular", "present_simple", "3sg",
          "It ___ a red door.", ["have", "has"], "has", "adversarial",
          reason_code="PRES-3SG-S"),
    probe("adv-go-past-1sg-001", "en", "go", "irregular", "past_simple", "1sg",
          "Yesterday I ___ to the store.", ["went", "fui"], "went", "adversarial",
          reason_code="EN-ES-MISMATCH"),
]  # fmt: skip

TRAIN = [
    "The children played in the garden all afternoon.",
    "Los niños jugaron en el parque toda la tarde.",
    "My brother cleans the kitchen on Sundays.",
    "Ella estudia matemáticas por la noche.",
    "We watched a film about a lighthouse keeper.",
    "Carlos compró pan y leche en la tienda.",
]
VAL = ["The dog sleeps near the fire.", "Mi abuela vive en un pueblo pequeño."]

# Low enough for eight core and three adversarial probes; cases about coverage raise one.
# The probe files are named: the embedded default also lists data/eval/ordinal.jsonl.
CONFIG: dict[str, Any] = {
    "probes": ["data/eval/probes.jsonl", "data/eval/adversarial.jsonl"],
    "coverage": {
        "per_language": 2,
        "per_regularity": 2,
        "per_tense": 1,
        "per_person": 1,
        "adversarial_total": 3,
        "adversarial_per_category_min": 0,
        "adversarial_per_category_max": 5,
        "regular_verb_min": 0,
        "irregular_verb_min": 0,
    },
}

EVAL = Path("data/eval")


def verb_forms_suite() -> dict[str, Any]:
    """The base set written by `write_base` as a `suites:` entry of kind verb-forms, for the
    tests that put it beside another suite."""
    return {
        "kind": "verb-forms",
        "probes": CONFIG["probes"],
        "template": str(EVAL / "probe_prompt.txt"),
        "manifest": str(EVAL / "MANIFEST.json"),
        "train": ["data/corpus/train.jsonl", "data/corpus/val.jsonl"],
        "coverage": CONFIG["coverage"],
    }


def dump_jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def write_base(root: Path, config: dict[str, Any] | None = None) -> Path:
    """The valid base set under `root`; returns the config path."""
    (root / EVAL).mkdir(parents=True, exist_ok=True)
    (root / "data/corpus").mkdir(parents=True, exist_ok=True)
    (root / "data/grammar").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "data/grammar/verbs.yaml", root / "data/grammar/verbs.yaml")
    (root / EVAL / "probes.jsonl").write_bytes(dump_jsonl(CORE))
    (root / EVAL / "adversarial.jsonl").write_bytes(dump_jsonl(ADVERSARIAL))
    (root / EVAL / "probe_prompt.txt").write_text("Complete the sentence.\n{prompt}\n", encoding="utf-8")
    (root / "data/corpus/train.jsonl").write_bytes(dump_jsonl([{"text": t} for t in TRAIN]))
    (root / "data/corpus/val.jsonl").write_bytes(dump_jsonl([{"text": t} for t in VAL]))
    cfg = root / "evalgate.yml"
    cfg.write_text(yaml.safe_dump(config or CONFIG, sort_keys=True), encoding="utf-8")
    return cfg


def cli_merged(*args: str) -> tuple[int, str]:
    """Run the real command line in-process; (exit code, stdout and stderr run together).

    For a test that only looks for a message somewhere in the output. A test that checks which
    stream a line goes to takes the `cli` fixture of tests/conftest.py, which keeps them apart."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue() + err.getvalue()


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _line_of(path: Path, pid: str) -> int:
    for i, raw in enumerate(_lines(path)):
        if json.loads(raw).get("id") == pid:
            return i
    raise KeyError(f"{pid} not in {path}")


def _rewrite(path: Path, pid: str, change) -> None:
    lines = _lines(path)
    i = _line_of(path, pid)
    rec = json.loads(lines[i])
    change(rec)
    lines[i] = json.dumps(rec, ensure_ascii=False).encode("utf-8")
    path.write_bytes(b"\n".join(lines) + b"\n")


def apply_step(root: Path, step: dict[str, Any]) -> None:
    """One edit of a fixture case (the verbs are listed in tests/helpers/fixtures/probesets/README.md)."""
    (verb, arg), *rest = step.items()
    assert not rest, f"one verb per step: {step}"
    if verb == "seal":
        code, out = cli_merged("probes", "seal", "--config", str(root / "evalgate.yml"))
        assert code == 0, out
        return
    if verb == "config":
        path = root / "evalgate.yml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, value in arg.items():
            data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
        path.write_text(yaml.safe_dump(data, sort_keys=True), encoding="utf-8")
        return
    if verb == "train":
        with (root / "data/corpus/train.jsonl").open("ab") as fh:
            fh.write(dump_jsonl([{"text": arg}]))
        return
    path = root / EVAL / arg["file"]
    if verb == "set":
        _rewrite(path, arg["id"], lambda rec: rec.update(arg["fields"]))
    elif verb == "delete":
        _rewrite(path, arg["id"], lambda rec: rec.pop(arg["field"]))
    elif verb == "line":  # replace line n (1-based) with raw text
        lines = _lines(path)
        lines[arg["n"] - 1] = arg["text"].encode("utf-8")
        path.write_bytes(b"\n".join(lines) + b"\n")
    elif verb == "remove":  # delete the probe's line
        lines = _lines(path)
        del lines[_line_of(path, arg["id"])]
        path.write_bytes(b"\n".join(lines) + b"\n")
    elif verb == "write":  # replace the whole file
        path.write_text(arg["text"], encoding="utf-8")
    elif verb == "append":
        with path.open("ab") as fh:
            fh.write(dump_jsonl([arg["record"]]))
    elif verb == "prepend_hex":
        path.write_bytes(bytes.fromhex(arg["hex"]) + path.read_bytes())
    elif verb == "latin1":  # the probe's line saved as Latin-1 instead of UTF-8
        lines = _lines(path)
        i = _line_of(path, arg["id"])
        lines[i] = lines[i].decode("utf-8").encode("latin-1")
        path.write_bytes(b"\n".join(lines) + b"\n")
    else:
        raise AssertionError(f"unknown step {verb!r}")


def load_case(name: str) -> dict[str, Any]:
    return yaml.safe_load((CASES / f"{name}.yaml").read_text(encoding="utf-8"))


def case_names() -> list[str]:
    return sorted(p.stem for p in CASES.glob("*.yaml"))
