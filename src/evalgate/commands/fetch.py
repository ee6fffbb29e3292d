"""`evalgate fetch [--checkpoint REF_FILE] [--cache DIR]`: a checkpoint by reference into the
local cache, every file's size and SHA-256 verified as it streams (edges/checkpoint_fetch.py).

The one evalgate step with network. In CI it runs from the trusted install before the scoring
container, which mounts the cache read-only and verifies it again (docs/github.md, "Checkpoint by
reference"). A configuration whose checkpoint is a folder has nothing to fetch: exit 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalgate.commands._args import cli_path
from evalgate.config import load_config
from evalgate.console import Console, clean
from evalgate.edges.checkpoint_fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_S, fetch
from evalgate.edges.checkpoint_ref import default_cache, is_reference_path, read_reference
from evalgate.errors import EXIT_PASS, RefusedError


def main(args: argparse.Namespace, console: Console) -> int:
    cfg = load_config(args.config, {"checkpoint": cli_path(args.checkpoint)})
    if not cfg.checkpoint:  # a plugin loader that needs none: nothing to fetch, not a refusal
        print("evalgate: no checkpoint configured: nothing to fetch", file=sys.stderr)
        return EXIT_PASS
    path = cfg.path(cfg.checkpoint)
    shown = args.checkpoint or cfg.checkpoint
    if not is_reference_path(path):
        print(
            f"evalgate: {clean(shown, 300)} is not a checkpoint reference (a .json file): nothing to fetch",
            file=sys.stderr,
        )
        return EXIT_PASS
    if args.max_bytes is not None and args.max_bytes < 0:
        raise RefusedError(f"--max-bytes {args.max_bytes}: expected a number of bytes, 0 or more")
    if args.timeout is not None and not args.timeout > 0:
        raise RefusedError(f"--timeout {args.timeout}: expected a number of seconds above 0")
    ref = read_reference(path, roots=cfg.roots(), shown=str(shown))
    cache = Path(args.cache) if args.cache else default_cache()
    folder, fetched = fetch(
        ref,
        cache,
        max_bytes=DEFAULT_MAX_BYTES if args.max_bytes is None else args.max_bytes,
        timeout_s=args.timeout or DEFAULT_TIMEOUT_S,
        log=lambda m: print(m, file=sys.stderr),
    )
    print(f"checkpoint-folder={folder}")
    print(f"fetched-bytes={fetched}")
    return EXIT_PASS
