"""Comparing a results.json with a stored one, exactly but for float32 noise of the CPU.

results.json keeps 7 significant digits (gate/results.py). The last of them depends on which
vector instructions the CPU's kernels use (AVX2 or AVX-512 sum in different orders), so the
demo's bytes are the same on one machine but not across machines. Everything but the floats
must match exactly; a float within a relative or absolute 1e-5 of the stored one
is the same measurement.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any


def read_golden(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))


def differences(got: Any, want: Any, path: str = "", limit: int = 20) -> list[str]:
    """Where `got` differs from `want` beyond float noise, as "path: got != want" lines."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if (
            isinstance(a, bool)
            or isinstance(b, bool)
            or not (isinstance(a, int | float) and isinstance(b, int | float))
        ):
            if type(a) is not type(b):
                out.append(f"{where}: {a!r} != {b!r}")
            elif isinstance(a, dict):
                if list(a) != list(b):
                    out.append(f"{where}: keys {list(a)} != {list(b)}")
                for k in a:
                    if k in b:
                        walk(a[k], b[k], f"{where}/{k}")
            elif isinstance(a, list):
                if len(a) != len(b):
                    out.append(f"{where}: {len(a)} items != {len(b)}")
                for i, (x, y) in enumerate(zip(a, b, strict=False)):
                    walk(x, y, f"{where}[{i}]")
            elif a != b:
                out.append(f"{where}: {a!r} != {b!r}")
            return
        if isinstance(a, int) and isinstance(b, int):
            if a != b:
                out.append(f"{where}: {a} != {b}")
        elif not math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5):
            out.append(f"{where}: {a!r} != {b!r}")

    walk(got, want, path)
    return out
