#!/usr/bin/env python
"""Train the two demo checkpoints of the native reference GPT, reproducibly, on this CPU.

    .venv/bin/python scripts/train_demo.py                      # both, into data/checkpoints/
    .venv/bin/python scripts/train_demo.py --only demo-regressed

`demo` learns from every sentence of data/corpus/train.jsonl. `demo-regressed` is the same
recipe (same seed, steps, tokenizer) on the same corpus with most sentences that use an
irregular past form (past simple or past participle of an irregular verb) removed: a realistic
data-pipeline regression whose damage is confined to the irregular / past slices.

Reproducible: fixed seeds, deterministic algorithms, a fixed thread count and no data-loader
workers; the recipe, the data filter and the corpus SHA-256 go into config.json "training".
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

from evalgate.probeset import corpus
from evalgate.probeset_io import parse_grammar
from evalgate.report.findings import finding_line
from evalgate.scorers.native_gpt import EOS, GPT, PAD, GPTConfig, save_native, train_tokenizer

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Recipe:
    seed: int = 1234
    steps: int = 3000
    batch_size: int = 48  # sentences per step
    lr: float = 3e-3  # peak; linear warm-up, then cosine decay to lr / 10
    warmup: int = 150
    weight_decay: float = 0.1  # on matrices only (not biases, LayerNorms)
    grad_clip: float = 1.0
    # One thread: float sums depend on how the work is split, so a fixed count is needed for
    # identical bytes, and one thread is also the fastest on a shared, busy 2-core machine
    # (OpenMP threads spin-wait on each other when other processes hold the cores).
    threads: int = 1
    vocab_size: int = 1024
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    # Data filter: keep this percentage of sentences that contain an irregular verb's
    # `filter_tenses` form (100 = no filter); which ones is decided by a hash of the text.
    keep_irregular_pct: int = 100
    filter_tenses: tuple[str, ...] = ("past_simple", "past_participle")


RECIPES = {
    "demo": Recipe(),
    "demo-regressed": Recipe(keep_irregular_pct=2),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def read_sentences(path: Path) -> list[str]:
    """The corpus as evalgate reads it (`.jsonl` with "text", or `.txt`); any finding stops us."""
    sentences, findings = corpus.read_sentences(path.read_bytes(), str(path))
    if findings:
        raise SystemExit("\n".join(finding_line(f) for f in findings))
    return [text for _, text in sentences]


def irregular_forms(grammar_path: Path, tenses: tuple[str, ...]) -> set[str]:
    """Lower-cased single-word irregular forms of `tenses` that no regular verb shares."""
    grammar = parse_grammar(grammar_path.read_text(encoding="utf-8"), str(grammar_path))
    forms: dict[str, set[str]] = {"regular": set(), "irregular": set()}
    for verb in grammar.verbs.values():
        for tense in tenses:
            forms[verb.regularity].update(f.lower() for f in verb.forms[tense] if " " not in f)
    # an irregular form equal to the verb's own infinitive/present ("come", "have"...) is not
    # a past form in most sentences; keep only forms that never appear outside the past tenses
    other = {
        f.lower()
        for verb in grammar.verbs.values()
        for tense, fs in verb.forms.items()
        if tense not in tenses
        for f in fs
    }
    return forms["irregular"] - forms["regular"] - other


def apply_filter(sentences: list[str], recipe: Recipe, forms: set[str]) -> tuple[list[str], int]:
    if recipe.keep_irregular_pct >= 100:
        return sentences, 0
    word = re.compile(r"\w+")
    kept, dropped = [], 0
    for s in sentences:
        hit = any(w in forms for w in word.findall(s.lower()))
        bucket = int.from_bytes(hashlib.sha256(s.encode("utf-8")).digest()[:4], "big") % 100
        if hit and bucket >= recipe.keep_irregular_pct:
            dropped += 1
        else:
            kept.append(s)
    return kept, dropped


def tokenizer_and_shape(texts: list[str], recipe: Any) -> tuple[Any, GPTConfig]:
    """A byte-level BPE tokenizer trained on `texts`, and the model shape of `recipe` (any object
    with vocab_size, n_layer, n_head, n_embd and block_size) around its special tokens."""
    tok = train_tokenizer(texts, recipe.vocab_size)
    cfg = GPTConfig(
        vocab_size=tok.get_vocab_size(),
        n_layer=recipe.n_layer,
        n_head=recipe.n_head,
        n_embd=recipe.n_embd,
        block_size=recipe.block_size,
        bos_token_id=tok.token_to_id("<|bos|>"),
        eos_token_id=tok.token_to_id(EOS),
        pad_token_id=tok.token_to_id(PAD),
        unk_token_id=None,
    )
    return tok, cfg


def encode_all(tok, cfg: GPTConfig, sentences: list[str]) -> list[list[int]]:
    seqs = [[cfg.bos_token_id, *e.ids, cfg.eos_token_id] for e in tok.encode_batch(sentences)]
    too_long = sum(len(s) > cfg.block_size for s in seqs)
    if too_long:
        log(f"  {too_long} sentence(s) longer than block_size {cfg.block_size}: truncated")
    return [s[: cfg.block_size] for s in seqs]


def make_batch(seqs: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded inputs and targets; pad targets are -1 and ignored by the loss."""
    width = max(len(s) for s in seqs)
    idx = torch.full((len(seqs), width), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        idx[i, : len(s)] = torch.tensor(s)
    targets = idx[:, 1:].clone()
    for i, s in enumerate(seqs):
        targets[i, len(s) - 1 :] = -1
    return idx[:, :-1], targets


@torch.no_grad()
def mean_loss(model: GPT, seqs: list[list[int]], pad: int, batch: int = 256) -> float:
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(seqs), batch):
        x, y = make_batch(seqs[i : i + batch], pad)
        logits = model(x)
        total += F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-1, reduction="sum").item()
        count += int((y >= 0).sum())
    model.train()
    return total / count


def lr_at(step: int, r: Recipe) -> float:
    if step < r.warmup:
        return r.lr * (step + 1) / r.warmup
    progress = (step - r.warmup) / max(1, r.steps - r.warmup)
    return r.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(name: str, recipe: Recipe, train_seqs: list[list[int]], val_seqs, cfg: GPTConfig) -> tuple:
    torch.manual_seed(recipe.seed)
    model = GPT(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": recipe.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=recipe.lr,
        betas=(0.9, 0.98),
    )
    gen = torch.Generator().manual_seed(recipe.seed)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"[{name}] {n_params:,} parameters, {len(train_seqs):,} sentences, {recipe.steps} steps")
    start = time.monotonic()
    model.train()
    for step in range(recipe.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, recipe)
        pick = torch.randint(len(train_seqs), (recipe.batch_size,), generator=gen).tolist()
        x, y = make_batch([train_seqs[i] for i in pick], cfg.pad_token_id)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.grad_clip)
        opt.step()
        if step % 250 == 0 or step == recipe.steps - 1:
            val = f", val {mean_loss(model, val_seqs, cfg.pad_token_id):.4f}" if val_seqs else ""
            log(f"[{name}] step {step:5d}  loss {loss.item():.4f}{val}  ({time.monotonic() - start:.0f} s)")
    model.eval()
    val_loss = mean_loss(model, val_seqs, cfg.pad_token_id) if val_seqs else None
    return model, val_loss


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=Path, default=REPO / "data/corpus/train.jsonl")
    ap.add_argument("--val", type=Path, default=REPO / "data/corpus/val.jsonl")
    ap.add_argument("--grammar", type=Path, default=REPO / "data/grammar/verbs.yaml")
    ap.add_argument("--out-dir", type=Path, default=REPO / "data/checkpoints")
    ap.add_argument("--only", choices=sorted(RECIPES), action="append", help="train just this one")
    ap.add_argument("--steps", type=int, help="override the recipe's steps (for quick trials)")
    ap.add_argument(
        "--seed", type=int, help="override the recipe's seed (equally good checkpoints, docs/gate.md)"
    )
    args = ap.parse_args(argv)

    torch.use_deterministic_algorithms(True)
    sentences = read_sentences(args.train)
    val = read_sentences(args.val) if args.val.is_file() else []
    corpus_sha = hashlib.sha256(args.train.read_bytes()).hexdigest()
    base = RECIPES["demo"]
    torch.set_num_threads(base.threads)
    # One tokenizer for both checkpoints, trained on the whole corpus: perplexities stay
    # comparable, and the regression is in what the model learned, not in how it reads.
    tok, cfg = tokenizer_and_shape(sentences, base)
    val_seqs = encode_all(tok, cfg, val)
    for name in args.only or list(RECIPES):
        recipe = RECIPES[name]
        if args.steps:
            recipe = Recipe(**{**asdict(recipe), "steps": args.steps})
        if args.seed is not None:
            recipe = Recipe(**{**asdict(recipe), "seed": args.seed})
        torch.set_num_threads(recipe.threads)
        forms = irregular_forms(args.grammar, recipe.filter_tenses)
        kept, dropped = apply_filter(sentences, recipe, forms)
        log(f"[{name}] data filter dropped {dropped} of {len(sentences)} sentences")
        model, val_loss = train(name, recipe, encode_all(tok, cfg, kept), val_seqs, cfg)
        training = {
            "recipe": asdict(recipe),
            "corpus": {"file": _rel(args.train), "sha256": corpus_sha, "sentences": len(sentences)},
            "data_filter": {
                "description": (
                    "none: every sentence"
                    if recipe.keep_irregular_pct >= 100
                    else f"kept {recipe.keep_irregular_pct}% of the sentences that contain an irregular "
                    f"verb's {' or '.join(recipe.filter_tenses)} form"
                ),
                "keep_irregular_pct": recipe.keep_irregular_pct,
                "tenses": list(recipe.filter_tenses),
                "forms": sorted(forms) if recipe.keep_irregular_pct < 100 else [],
                "dropped_sentences": dropped,
            },
            "val_loss": None if val_loss is None else round(val_loss, 4),
            "torch": torch.__version__.split("+")[0],
            "script": "scripts/train_demo.py",
        }
        save_native(args.out_dir / name, model, cfg, tok, extra={"training": training})
        log(f"[{name}] wrote {args.out_dir / name}")
    return 0


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return path.name


if __name__ == "__main__":
    raise SystemExit(main())
