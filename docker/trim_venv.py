"""Build step: drop what no gate run can use, then byte-compile exactly what a run imports.

Pruned (docs/docker.md, "What the build does"): transformers' model folders of architectures
that are not causal language models (AutoModelForCausalLM cannot load them, so the gate could
only refuse them; such a checkpoint is still refused, by its config), keeping every folder a kept
one imports; transformers' `modular_*.py` (the sources its model files are generated from, never
imported); type stubs (`*.pyi`) and Cython sources (`*.c`, `*.pyx`, `*.pxd`); the parts of
fontTools matplotlib needs only for PDF, PS and SVG output and font editing (the gate draws PNG),
torch's test helpers, and the subpackages of torch's compiler back end and ONNX exporter that
eager scoring never imports: there, only the folders (and for the test helpers, files) a run
imported stay.

The venv holds about 160 MB of `.pyc` when every module is compiled, most of it for code a run
never imports (sympy's solvers, torch's compiler stack, transformers' other architectures). The
image cannot write bytecode at run time (an arbitrary `--user`, read-only layers), so a module
without a `.pyc` is compiled in memory on each import: fine for the rare ones, slow for the
hundreds every run needs. This script runs the bundled demo gate in-process and a forward pass
of the two transformers architectures the loaders are tested with, then compiles every module
file those imported (plus every evalgate module, so that each command starts fast), with
unchecked hashes as the Dockerfile explains. docs/docker.md, "What the build does".

Usage (Dockerfile): python trim_venv.py DEMO_DIR
"""

from __future__ import annotations

import contextlib
import io
import os
import py_compile
import re
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path


def exercise(demo: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import torch
    from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig

    from evalgate.cli import main

    with tempfile.TemporaryDirectory() as out:
        os.chdir(demo)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for argv in (["validate"], ["run", "--out", out]):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = exc.code
                if code not in (0, None):
                    raise SystemExit(f"trim_venv: `evalgate {' '.join(argv)}` exited {code}")
    import evalgate.scorers.hf_loader  # noqa: F401  (the transformers loader, for any checkpoint)

    for config in (
        GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=16),
        LlamaConfig(
            hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2, vocab_size=16
        ),
    ):
        model = AutoModelForCausalLM.from_config(config)
        with torch.inference_mode():
            model(torch.tensor([[1, 2, 3]]))


_MODEL_REF = re.compile(r"(?:from\s+\.\.|transformers\.models\.|from\s+\.\.\.models\.)(\w+)")


def _unimported_folders(root: Path, imported: set[Path], only: tuple[str, ...] = ()) -> list[Path]:
    """The subfolders of `root` (not root itself) that hold no imported module, outermost only;
    with `only`, just those of these names directly under `root`."""
    used = {parent for path in imported for parent in path.parents}
    out: list[Path] = []
    found = [root / name for name in only] if only else root.rglob("*")
    for folder in sorted(p for p in found if p.is_dir() and p.name != "__pycache__"):
        if folder.resolve() not in used and not any(parent in out for parent in folder.parents):
            out.append(folder)
    return out


def prune(site: Path, imported: set[Path]) -> int:
    """Remove what no run can use (module docstring); returns the bytes freed."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    models = site / "transformers" / "models"
    keep = {"auto"} | {model_type_to_module_name(t) for t in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES}
    keep |= {p.relative_to(models).parts[0] for p in imported if models in p.parents}
    todo = sorted(keep)
    while todo:  # every folder a kept folder's code names stays too
        folder = models / todo.pop()
        for path in folder.glob("*.py") if folder.is_dir() else ():
            for name in _MODEL_REF.findall(path.read_text(encoding="utf-8", errors="replace")):
                if name not in keep and (models / name).is_dir():
                    keep.add(name)
                    todo.append(name)
    doomed = [d for d in models.iterdir() if d.is_dir() and d.name not in keep and d.name != "__pycache__"]
    # fontTools: whole subpackages no run imported; torch's test helpers: every file too
    doomed += _unimported_folders(site / "fontTools", imported)
    helpers = site / "torch" / "testing" / "_internal"
    doomed += _unimported_folders(helpers, imported)
    # torch's compiler back end and ONNX exporter: eager scoring imports a handful of their
    # modules (configuration), never the code generators, kernels or export passes below them
    doomed += _unimported_folders(site / "torch" / "_inductor", imported)
    doomed += _unimported_folders(site / "torch" / "onnx", imported)
    # torch's benchmarking and model-dump tools: developer utilities, whole, when not imported
    doomed += _unimported_folders(site / "torch" / "utils", imported, only=("benchmark", "model_dump"))
    doomed_files = list(models.rglob("modular_*.py")) + list(site.rglob("*.pyi"))
    doomed_files += [f for f in helpers.glob("*.py") if f.resolve() not in imported]
    # Cython sources shipped beside their compiled modules (fontTools): never read at run time
    doomed_files += [f for ext in ("*.c", "*.pyx", "*.pxd") for f in site.rglob(ext)]
    freed = sum(f.stat().st_size for d in doomed for f in d.rglob("*") if f.is_file())
    freed += sum(f.stat().st_size for f in doomed_files if f.exists())
    for d in doomed:
        shutil.rmtree(d)
    for f in doomed_files:
        f.unlink(missing_ok=True)
    removed = f"{len(doomed)} folders and {len(doomed_files)} files"
    print(f"trim_venv: {removed} removed, {freed / 1e6:.1f} MB")
    return freed


def main(argv: list[str]) -> int:
    exercise(Path(argv[0]).resolve())
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    imported = {
        Path(m.__file__).resolve()
        for m in list(sys.modules.values())
        if getattr(m, "__file__", None) and str(m.__file__).endswith(".py")
    }
    prune(site, imported)
    files = {p for p in imported if p.exists()} | set((site / "evalgate").rglob("*.py"))
    compiled = 0
    for path in sorted(files):
        if site in path.parents:
            py_compile.compile(
                str(path), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
            )
            compiled += 1
    print(f"trim_venv: {compiled} modules compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
