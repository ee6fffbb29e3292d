"""`evalgate probes build --seed 42 [--out-dir data/eval]`: write the shipped probe set.

Writes probes.jsonl (core), adversarial.jsonl and probe_prompt.txt atomically; the same seed
gives byte-identical files. Run it before `evalgate corpus build`, which filters the corpus
against these probes.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from evalgate.config import load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_text
from evalgate.errors import RefusedError
from evalgate.probeset_io import load_grammar_and_lexicon
from evalgate.synth import jsonl_text
from evalgate.synth.probes import build_probes

# For our small LMs the template adds nothing around the sentence: the prompt, then a newline.
PROBE_PROMPT_TEMPLATE = "{prompt}\n"


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(getattr(args, "config", None))
    grammar_path = Path(args.grammar) if getattr(args, "grammar", None) else cfg.path(cfg.grammar)
    grammar, lexicon = load_grammar_and_lexicon(grammar_path)
    core, adversarial = build_probes(grammar, lexicon, args.seed)
    out = Path(args.out_dir)
    files = {
        "probes.jsonl": jsonl_text(p.to_record() for p in core),
        "adversarial.jsonl": jsonl_text(p.to_record() for p in adversarial),
        "probe_prompt.txt": PROBE_PROMPT_TEMPLATE,
    }
    if out.exists() and not out.is_dir():
        raise RefusedError(f"--out-dir {out}: exists and is not a folder", hint="name a folder")
    try:
        for name, text in files.items():
            atomic_write_text(out / name, text)
    except OSError as exc:
        raise RefusedError(
            f"--out-dir {out}: cannot write {exc.filename or 'the probe files'}: {exc.strerror or exc}",
            hint="name a folder you can write to (it is created when missing)",
        ) from None
    langs = Counter(p.language for p in core)
    codes = Counter(p.reason_code for p in adversarial)
    print(f"wrote {out / 'probes.jsonl'}: {len(core)} core probes ({langs['en']} en, {langs['es']} es)")
    print(
        f"wrote {out / 'adversarial.jsonl'}: {len(adversarial)} adversarial probes ("
        + ", ".join(f"{code} {n}" for code, n in sorted(codes.items()))
        + ")"
    )
    print(f"wrote {out / 'probe_prompt.txt'}")
    print("next: `evalgate corpus build --seed 42` filters the corpus against these probes")
    return 0
