"""A team's multiple-choice suite and a tiny real model whose answers are set item by item.

The model is a `loader:` plugin (docs/scoring.md, "Plugins") loaded by the real pipeline: a
bigram table over a word tokenizer, so after the last word of an item's prompt (its tag, `q017`)
it prefers the one candidate its checkpoint's `answers.json` names. Two checkpoints of it are two
models that differ exactly on the items the test says, so a test can make one subject fall by a
stated number of points, with churn both ways, and gate it through `evalgate run`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

PLUGIN = '''\
"""Answer-key model: after an item's tag, the answer its checkpoint names."""
import json
from pathlib import Path

import torch


class WordTokenizer:
    def __init__(self, words):
        self.vocab = ["[UNK]", "[BOS]", *words]
        self.ids = {w: i for i, w in enumerate(self.vocab)}
        self.unk_token_id = 0
        self.bos_token_id = 1

    def encode(self, text):
        return [self.ids.get(w, 0) for w in text.split()]

    def decode(self, ids):
        return " ".join(self.vocab[i] for i in ids)


class AnswerKey(torch.nn.Module):
    def __init__(self, size, prefs):
        super().__init__()
        self.table = torch.nn.Embedding(size, size)
        with torch.no_grad():
            self.table.weight.fill_(0.0)
            for prev, nxt in prefs:
                self.table.weight[prev, nxt] = 8.0

    def forward(self, ids):
        return self.table(ids)


def load(path):
    key = json.loads((Path(path) / "answers.json").read_text(encoding="utf-8"))
    tok = WordTokenizer(sorted(key["words"]))
    prefs = [(tok.ids[tag], tok.ids[answer]) for tag, answer in sorted(key["answers"].items())]
    return AnswerKey(len(tok.vocab), prefs), tok
'''

CANDIDATES = ("alpha", "beta", "gamma", "delta")


def tag(i: int) -> str:
    return f"q{i:03d}"


def write_items(path: Path, subjects: Mapping[str, int]) -> list[dict]:
    """`n` four-way items per subject (slice dimension `subject`), ids `SUBJECT-NNN`; returns them."""
    items = []
    for subject, n in subjects.items():
        for _ in range(n):
            i = len(items)
            items.append(
                {
                    "id": f"{subject}-{i:03d}",
                    "prompt": f"Which answer fits {tag(i)}",
                    "candidates": list(CANDIDATES),
                    "expected": CANDIDATES[i % 4],
                    "slices": {"subject": subject},
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return items


def write_checkpoint(folder: Path, items: Sequence[dict], right: Iterable[str]) -> Path:
    """A checkpoint that answers the items whose id is in `right` correctly and the others wrong."""
    right = set(right)
    answers = {}
    for i, item in enumerate(items):
        good = item["expected"]
        answers[tag(i)] = good if item["id"] in right else next(c for c in CANDIDATES if c != good)
    words = [*CANDIDATES, *answers]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answers.json").write_text(json.dumps({"words": words, "answers": answers}), encoding="utf-8")
    return folder


def write_plugin(root: Path) -> str:
    """The plugin module beside evalgate.yml; returns its `loader:` spec."""
    (root / "answer_model.py").write_text(PLUGIN, encoding="utf-8")
    return "answer_model:load"


def config(*, suite: str = "team", min_n: int | None = None, extra_gate: str = "") -> str:
    """evalgate.yml of one multiple-choice suite gated on `subject`, no perplexity."""
    gate = [f"min_n: {min_n}"] if min_n is not None else []
    gate += [line for line in extra_gate.splitlines() if line.strip()]
    gate_block = ("gate:\n" + "".join(f"  {line}\n" for line in gate)) if gate else ""
    return (
        "suites:\n"
        f"  {suite}:\n"
        "    kind: multiple-choice\n"
        f"    probes: [{suite}/items.jsonl]\n"
        "    slices: [subject]\n"
        "    coverage: {min_per_value: 1}\n"
        "test: null\n"
        "loader: answer_model:load\n"
        f"baseline: baselines/{suite}.json\n"
        "checkpoint: ckpt/pr\n" + gate_block
    )


def pick(items: Sequence[dict], subject: str, k: int, *, skip: int = 0) -> list[str]:
    """The ids of `k` items of `subject`, after skipping the first `skip`."""
    ids = [it["id"] for it in items if it["slices"]["subject"] == subject]
    return ids[skip : skip + k]
