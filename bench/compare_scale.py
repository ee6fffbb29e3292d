"""How long does `evalgate compare` take on a large suite? (issue 25 §4, "Large suites")

Builds a results.json of N probes (default 100,000) and a baseline from a second run of them, with
the project's own test factories (tests/helpers/factories.py: real entries, content hashes and
slice tables, over two languages, five tenses and three persons), then times the real command
line, `evalgate compare RESULTS BASELINE --out DIR`, in a fresh process, and prints the seconds.
With --profile it prints the cProfile summary of the same comparison run in this process instead.

    .venv/bin/python bench/compare_scale.py [--probes 100000] [--keep DIR] [--profile]

The target is under 30 s for 100,000 probes (it took 3 min 19 s before issue 25). Besides the
wall-clock seconds it prints the command's CPU seconds and peak memory (its maximum resident set):
on a machine shared with other work the CPU seconds are the steadier measure. With --keep DIR
holding the files of an earlier run they are reused, so that two versions of evalgate (an A/B
through PYTHONPATH) compare on the same bytes. Measured figures: docs/gate.md, "What it costs".
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.factories import make_entry, make_results  # noqa: E402

from evalgate.gate.baseline import baseline_from_results  # noqa: E402

TENSES = ("present_simple", "past_simple", "future_simple", "present_perfect", "past_participle")
PERSONS = ("1sg", "3sg", "3pl")


def build(n: int, folder: Path) -> tuple[Path, Path]:
    """results.json and baseline.json of n probes: the new run loses one point on Spanish."""
    base_entries, new_entries = [], []
    for i in range(n):
        lang = ("en", "es")[i % 2]
        meta = {"language": lang, "tense": TENSES[i % 5], "person": PERSONS[i % 3]}
        was = i % 5 != 0
        now = was and not (lang == "es" and i % 97 == 1)
        base_entries.append(make_entry(f"p{i:06d}", was, **meta))
        new_entries.append(make_entry(f"p{i:06d}", now, **meta))
    results, base = folder / "results.json", folder / "baseline.json"
    results.write_text(json.dumps(make_results(new_entries)), encoding="utf-8")
    doc = baseline_from_results(make_results(base_entries), "demo", {"git_commit": None, "pr_number": None})
    base.write_text(json.dumps(doc), encoding="utf-8")
    return results, base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", type=int, default=100_000)
    ap.add_argument("--keep", type=Path, help="build the files here and keep them (or reuse them)")
    ap.add_argument("--profile", action="store_true", help="cProfile the comparison in this process")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        results, base = folder / "results.json", folder / "baseline.json"
        if args.keep and results.is_file() and base.is_file():
            print(f"reusing {results} ({results.stat().st_size:,} bytes) and {base}")
        else:
            results, base = build(args.probes, folder)
            size = results.stat().st_size
            print(f"built {args.probes:,} probes in {time.perf_counter() - t0:.1f} s ({size:,} bytes)")
        argv = ["compare", str(results), str(base), "--out", str(folder / "out")]
        if args.profile:
            from evalgate.cli import main as cli

            prof = cProfile.Profile()
            t0 = time.perf_counter()
            code = prof.runcall(cli, argv)
            print(f"evalgate compare: exit {code}, {time.perf_counter() - t0:.1f} s (profiled)")
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
            return
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "evalgate", *argv], capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(
            f"evalgate compare on {args.probes:,} probes: exit {done.returncode}, {seconds:.1f} s "
            f"({cpu:.1f} s CPU, peak RSS {after.ru_maxrss / 1024:,.0f} MiB)"
        )
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:])


if __name__ == "__main__":
    main()
