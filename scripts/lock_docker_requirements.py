"""Add `--hash` pins to docker/requirements.txt, so the image's pip runs with `--require-hashes`.

    python scripts/lock_docker_requirements.py [--wheels DIR]

Downloads (with pip, the ordinary client, from whatever index pip is configured with) the wheel of
each `name==version` line for the image's target (CPython 3.11, Linux x86_64) and writes the sha256
of each onto its line. torch comes from DIR (default /opt/wheels, the local CPU build) or the PyTorch
CPU index. Lines keep their order and comments; re-running on a locked file refreshes the hashes.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

REQUIREMENTS = Path(__file__).resolve().parents[1] / "docker" / "requirements.txt"
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "linux_x86_64"]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s]+)")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(pins: list[str], into: Path) -> None:
    platform_args = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", *platform_args,
         "-d", str(into), *pins],
        check=True,
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", default="/opt/wheels", help="folder holding the torch CPU wheel")
    args = parser.parse_args()
    lines = REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    pins = {}
    for line in lines:
        m = PIN.match(line)
        if m:
            pins[canonicalize_name(m.group(1))] = (m.group(1), m.group(2))
    hashes: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        download([f"{n}=={v}" for key, (n, v) in pins.items() if key != "torch"], Path(tmp))
        found = list(Path(tmp).glob("*.whl"))
        torch_version = pins["torch"][1]
        found += sorted(Path(args.wheels).glob(f"torch-{torch_version}[+-]*cp311*x86_64.whl"))[:1]
        for wheel in found:
            name, version, _, _ = parse_wheel_filename(wheel.name)
            if str(version).split("+")[0] == pins.get(name, ("", ""))[1]:
                hashes.setdefault(name, []).append(sha256(wheel))
    missing = sorted(set(pins) - set(hashes))
    if missing:
        print(f"no wheel found for: {', '.join(missing)}", file=sys.stderr)
        return 1
    out = []
    for line in lines:
        m = PIN.match(line)
        if m:
            key = canonicalize_name(m.group(1))
            line = f"{m.group(1)}=={m.group(2)}" + "".join(f" --hash=sha256:{h}" for h in sorted(hashes[key]))
        out.append(line)
    REQUIREMENTS.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{REQUIREMENTS}: {len(pins)} pins hashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
