"""The README's leak example shows exactly what the command prints."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from helpers.paths import REPO


def test_the_readme_leak_example_is_what_the_command_prints(tmp_path):
    readme = REPO.joinpath("README.md").read_text(encoding="utf-8")
    commands = re.search(r"Then try the regressed checkpoint.*?```bash\n(.*?)```", readme, re.S).group(1)
    echo = next(line for line in commands.splitlines() if line.startswith("echo "))
    record = shlex.split(echo)[1]
    run = next(line for line in commands.splitlines() if "/tmp/leak.jsonl" in line and "--probes" in line)
    shown = re.search(r"<!-- readme-leak-output.*?```text\n(.*?)```", readme, re.S).group(1)

    leak = tmp_path / "leak.jsonl"
    leak.write_text(record + "\n", encoding="utf-8")
    args = [a.replace("/tmp/leak.jsonl", str(leak)) for a in shlex.split(run)[1:]]
    done = subprocess.run(
        [sys.executable, "-m", "evalgate", *args, "--out", str(tmp_path / "out")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "GITHUB_ACTIONS": "false"},
    )
    assert done.returncode == 2
    printed = (done.stderr + done.stdout).replace(str(leak), "/tmp/leak.jsonl")
    if leak.resolve().is_relative_to(REPO.resolve()):  # pytest's --basetemp inside the checkout:
        # evalgate names files under the repository by their relative path
        printed = printed.replace(leak.resolve().relative_to(REPO.resolve()).as_posix(), "/tmp/leak.jsonl")
    timing = re.compile(r"done in [0-9.]+ s")
    assert sorted(timing.sub("done in N s", printed).splitlines()) == sorted(
        timing.sub("done in N s", shown).splitlines()
    )
