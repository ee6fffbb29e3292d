"""What a pull request changes that the gate reads: the eval-gate workflow's first decision.

    python -P -m evalgate.github.pr_scope --base SHA [--head REF]

Run by .github/workflows/eval-gate.yml with the BASE branch's installed evalgate (never the PR's
code; docs/security.md). The workflow has no `paths:` filter, because a required check skipped by a
path filter stays pending and blocks the merge: this module says whether anything the gate reads
changed, so the job can report success quickly when nothing did.

Prints GITHUB_OUTPUT lines (`relevant=true|false`, `gate-paths=...` as one space-separated line)
and exits 0; exits 2 with the bootstrap steps when the base branch has no evalgate.yml or no
baseline yet (the first PR adding evalgate is never gated against the bundled demo).
"""

from __future__ import annotations

import argparse
import posixpath
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from evalgate.config import CONFIG_FILENAME, default_config_dict
from evalgate.errors import EXIT_REFUSED

# Paths from a PR's evalgate.yml end up in GITHUB_OUTPUT and on a git command line: plain names only
# (no newline, no pathspec magic such as `:(exclude)`, no option such as `--output=`).
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")
# Always part of the gate's yardstick (issue 10, "gate-changes"), wherever evalgate.yml points.
FIXED_PATHS = ("data/eval", "data/corpus", "data/grammar", CONFIG_FILENAME, "baselines")
# The configuration keys that name files the gate reads.
PATH_KEYS = ("probes", "template", "manifest", "grammar", "train", "test", "checkpoint", "baseline")
# What each entry of `suites:` names for itself (docs/suites.md); gathered under SUITE_PATHS.
SUITE_PATH_KEYS = ("probes", "template", "manifest", "grammar", "train", "test")
SUITE_PATHS = "suite_paths"

BOOTSTRAP = """evalgate: refused: no baseline on the base branch yet ({why}).
The first pull request that adds evalgate is not gated (it would be judged against the bundled demo).
To bootstrap, on the base branch ({base}):
  1. add evalgate.yml naming your probes, corpus, checkpoint and `baseline: baselines/NAME.json`
     (start from the file in the evalgate repository; docs/github.md);
  2. pip install "evalgate @ git+https://github.com/OWNER/evalgate@vX.Y.Z"   (the release you pin)
     evalgate probes seal && evalgate validate
  3. evalgate baseline update --checkpoint PATH --name NAME     (writes baselines/NAME.json)
  4. commit evalgate.yml, the sealed probe set and baselines/ to the base branch (directly, or by
     merging this PR once it holds them: this refusal is expected for it);
  5. make eval-gate a required status check in the branch protection (docs/security.md).
Later pull requests are then gated against that baseline."""


def git(*args: str) -> subprocess.CompletedProcess[str]:
    # Hooks off: the workspace is the PR's (docs/security.md).
    return subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args], capture_output=True, text=True, check=False
    )


def read_at(ref: str, path: str) -> str | None:
    shown = git("show", f"{ref}:{path}")
    return shown.stdout if shown.returncode == 0 else None


def exists_at(ref: str, path: str) -> bool:
    return git("cat-file", "-e", f"{ref}:{path}").returncode == 0


def config_at(ref: str) -> dict[str, Any] | None:
    """evalgate.yml at `ref`, merged over the embedded default; None when absent or unreadable."""
    text = read_at(ref, CONFIG_FILENAME)
    if text is None:
        return None
    try:
        user = yaml.safe_load(text)
    except yaml.YAMLError:
        user = None
    data = default_config_dict()
    if isinstance(user, dict):
        data.update({k: v for k, v in user.items() if k in PATH_KEYS and v is not None})
        data[SUITE_PATHS] = suite_paths(user.get("suites"))
    return data


def suite_paths(suites: Any) -> list[str]:
    """The files the suites of a configuration name, with each default manifest (MANIFEST.json
    beside the suite's first probe file, docs/suites.md)."""
    out: list[str] = []
    for suite in suites.values() if isinstance(suites, dict) else ():
        if not isinstance(suite, dict):
            continue
        for key in SUITE_PATH_KEYS:
            value = suite.get(key)
            out += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
        probes = suite.get("probes")
        first = probes[0] if isinstance(probes, list) and probes else probes
        if "manifest" not in suite and isinstance(first, str):
            out.append(posixpath.join(posixpath.dirname(first), "MANIFEST.json"))
    return out


def _clean(path: str) -> str | None:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    path = path.rstrip("/")
    if not _PLAIN.fullmatch(path) or ".." in path.split("/"):
        return None  # outside the repository or not a plain name: the gate refuses it anyway
    return path


def gate_paths(configs: Iterable[dict[str, Any] | None]) -> list[str]:
    """Every path the gate reads under any of these configurations, sorted, without duplicates."""
    paths = set(FIXED_PATHS)
    for cfg in configs:
        for key in (*PATH_KEYS, SUITE_PATHS):
            value = (cfg or {}).get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.lower() != "none":
                    cleaned = _clean(item)
                    if cleaned:
                        paths.add(cleaned)
    return sorted(paths)


def touches(changed: Iterable[str], paths: Sequence[str]) -> list[str]:
    """The changed files that are, or lie under, one of `paths`."""
    return sorted(f for f in changed if any(f == p or f.startswith(p + "/") for p in paths))


def bootstrap_reason(base: str, base_cfg: dict[str, Any] | None) -> str | None:
    if base_cfg is None:
        return f"{CONFIG_FILENAME} is missing on the base branch"
    baseline = base_cfg.get("baseline")
    if not isinstance(baseline, str) or baseline.lower() == "none":
        return f"{CONFIG_FILENAME} on the base branch gates against no baseline"
    cleaned = _clean(baseline)
    if cleaned is None or not exists_at(base, cleaned):
        return f"{baseline} is missing on the base branch"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalgate.github.pr_scope", description=__doc__)
    parser.add_argument("--base", required=True, help="the base branch's commit")
    parser.add_argument("--head", default="HEAD", help="the PR's commit (default HEAD)")
    args = parser.parse_args(argv)
    base_cfg = config_at(args.base)
    why = bootstrap_reason(args.base, base_cfg)
    if why:
        print(BOOTSTRAP.format(why=why, base=args.base), file=sys.stderr)
        return EXIT_REFUSED
    diff = git("diff", "--no-renames", "--name-only", "-z", f"{args.base}...{args.head}")
    if diff.returncode != 0:
        print(f"evalgate: git diff {args.base}...{args.head} failed: {diff.stderr.strip()}", file=sys.stderr)
        return EXIT_REFUSED
    changed = [f for f in diff.stdout.split("\0") if f]
    paths = gate_paths([base_cfg, config_at(args.head)])
    hits = touches(changed, paths)
    for name in hits[:20]:
        print(f"evalgate: the PR changes {name!r}, which the gate reads", file=sys.stderr)
    if not hits:
        print("evalgate: nothing the gate reads changed in this PR", file=sys.stderr)
    print(f"relevant={'true' if hits else 'false'}")
    print("gate-paths=" + " ".join(paths))  # plain names only (_PLAIN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
