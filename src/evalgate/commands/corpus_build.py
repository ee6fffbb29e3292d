"""`evalgate corpus build --seed 42 [--out-dir data/corpus] [--train-size N]`: the synthetic corpus.

Reads the probe files the config names (build them first: `evalgate probes build --seed 42`) and
drops every candidate sentence that the leak detectors would match to a probe, then writes
train.jsonl, val.jsonl and test.jsonl atomically. Same seed and probes -> byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from evalgate.config import GateConfig, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_text, refused_if_unwritable
from evalgate.edges.inputs import read_checked
from evalgate.errors import RefusedError
from evalgate.probeset import text as T
from evalgate.probeset_io import load_grammar_and_lexicon
from evalgate.synth import jsonl_text
from evalgate.synth.corpus import ProbeFilter, build_corpus, split_sizes

_BUILD_PROBES_HINT = "build the probes first: `evalgate probes build --seed 42`"


def held_out_texts(cfg: GateConfig) -> list[tuple[str, str]]:
    """(probe id, prompt filled with its expected form) for every probe of every probe file."""
    out: list[tuple[str, str]] = []
    for rel in cfg.probes:
        path = cfg.path(rel)
        if not os.path.lexists(path):
            raise RefusedError(f"{rel}: probe file not found", hint=_BUILD_PROBES_HINT)
        data = read_checked(path, "probes", "probe file", roots=cfg.roots(), shown=rel)
        try:
            lines = data.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise RefusedError(f"{rel}: not UTF-8", hint="run `evalgate validate` for details") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                probe_id, prompt, expected = rec["id"], rec["prompt"], rec["expected"]
            except (ValueError, KeyError, TypeError):
                raise RefusedError(
                    f"{rel}:{number}: not a probe with id, prompt and expected",
                    hint="run `evalgate validate` to see every problem of the probe files",
                ) from None
            out.append((str(probe_id), T.fill(str(prompt), str(expected))))
    return out


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(getattr(args, "config", None))
    if args.train_size < 12:
        raise RefusedError(f"--train-size {args.train_size} is too small", hint="use 12 or more")
    out = Path(args.out_dir)
    if out.exists() and not out.is_dir():  # said before the build, not as an exit-3 FileExistsError
        raise RefusedError(f"--out-dir {out}: exists and is not a folder", hint="name a folder")
    grammar, lexicon = load_grammar_and_lexicon(cfg.path(cfg.grammar))
    held_out = held_out_texts(cfg)
    probe_filter = ProbeFilter(held_out, grammar.all_forms(), cfg.leaks.window)
    corpus = build_corpus(grammar, lexicon, args.seed, split_sizes(args.train_size), probe_filter.collision)
    for name, records in (("train", corpus.train), ("val", corpus.val), ("test", corpus.test)):
        with refused_if_unwritable(
            f"--out-dir {out}", f"{name}.jsonl", "name a folder you can write to (it is created when missing)"
        ):
            atomic_write_text(out / f"{name}.jsonl", jsonl_text(records))
        print(f"wrote {out / (name + '.jsonl')}: {len(records)} sentences")
    st = corpus.stats
    print(
        f"decontamination against {len(held_out)} probes: dropped {st.dropped_total} candidate sentences "
        f"(exact {st.dropped['exact']}, template {st.dropped['template']}, "
        f"{cfg.leaks.window}-gram {st.dropped['ngram']}); {st.duplicates} repeated draws skipped"
    )
    return 0
