#!/usr/bin/env bash
# The GPU path checked on a real GPU (issue 29, section 3; docs/scoring.md, "Device"). Builds
# nothing: it runs the evalgate installed in PYTHON's environment (default: .venv/bin/python, else
# python3) from this checkout's root, with its CUDA build of torch.
#
#   bench/gpu_check.sh            the demo and a ~1.1B Llama shape, each on cpu and on cuda
#   bench/gpu_check.sh --dry-run  everything but the device: the "cuda" runs run on the CPU too
#
# 1. The demo: `evalgate run` of the demo checkpoint and of demo-regressed on each device (no
#    baseline), then each device's regressed run gated against its own demo run (`evalgate
#    compare`): the verdicts must be equal (fail) and so must each run's against itself (pass);
#    every candidate's log-likelihood must agree with the CPU's to 1e-3.
# 2. A Llama shape with random weights (TinyLlama's: 2048 wide, 22 layers, 32000 tokens; ~1.1B
#    parameters, ~4.4 GB in float32), written as a Hugging Face checkpoint and loaded by evalgate's
#    loader: the log-likelihoods of the shipped probes' candidates on cuda against the CPU's, to
#    1e-3. EVALGATE_GPU_CHECK_SHAPE=tiny shrinks it (64 wide, 2 layers) for a quick run; the test
#    (tests/e2e/test_gpu_check_dry_run.py) runs it so with --dry-run.
#    EVALGATE_GPU_CHECK_REQUESTS caps the requests scored (default 256).
#
# Prints the wall time of every step on each device. Exit 0 when every check holds, 1 when one
# fails (what differs is printed), 2 when it cannot run (no CUDA device without --dry-run).
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/.." && pwd)
dry=0
for arg in "$@"; do
  case $arg in
    --dry-run) dry=1 ;;
    -h | --help) sed -n '2,21p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "gpu_check: unknown argument $arg (expected --dry-run)" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x "$root/.venv/bin/python" ]; then python=$root/.venv/bin/python; else python=python3; fi
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/evalgate-gpu-check.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd -- "$root"
GPU_CHECK_DRY=$dry GPU_CHECK_WORK=$work GPU_CHECK_ROOT=$root "$python" - <<'PY'
import json
import os
import subprocess
import sys
import time
from pathlib import Path

dry = os.environ["GPU_CHECK_DRY"] == "1"
work, root = Path(os.environ["GPU_CHECK_WORK"]), Path(os.environ["GPU_CHECK_ROOT"])
tiny = os.environ.get("EVALGATE_GPU_CHECK_SHAPE", "") == "tiny"
n_requests = int(os.environ.get("EVALGATE_GPU_CHECK_REQUESTS", "256"))
TOL = 1e-3
failed: list[str] = []

import torch  # noqa: E402

if not dry and not torch.cuda.is_available():
    print(f"gpu_check: torch {torch.__version__} sees no CUDA device; run it on a GPU, or pass --dry-run")
    sys.exit(2)
# The device under test: cuda, or the CPU again in a dry run ("cpu" then stands in for it).
device = "cpu" if dry else "cuda"
label = "cuda (dry run: cpu)" if dry else f"cuda ({torch.cuda.get_device_name(0)})"
print(f"gpu_check: torch {torch.__version__}; the device under test: {label}")


def config_for(dev: str) -> Path:
    """A copy of evalgate.yml with scoring.device, beside it (its paths are relative to its folder,
    and inputs must stay inside the repository); removed when the check ends."""
    path = root / f".evalgate-gpu-check-{os.getpid()}-{dev}.yml"
    if not path.exists():
        text = (root / "evalgate.yml").read_text("utf-8")
        assert "\nscoring:\n" in text, "evalgate.yml has no scoring section"
        path.write_text(text.replace("\nscoring:\n", f"\nscoring:\n  device: {dev}\n", 1), encoding="utf-8")
        written.append(path)
    return path


written: list[Path] = []


def evalgate(*args: str) -> tuple[int, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "evalgate", *args], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        print(done.stdout[-3000:] + done.stderr[-3000:])
    return done.returncode, time.perf_counter() - started


# 1. The demo on each device.
import atexit  # noqa: E402

atexit.register(lambda: [p.unlink(missing_ok=True) for p in written])
runs: dict[tuple[str, str], dict] = {}
for tag, dev in (("cpu", "cpu"), ("dut", device)):
    config = config_for(dev if tag == "cpu" else device)
    for ckpt in ("demo", "demo-regressed"):
        out = work / f"{tag}-{ckpt}"
        code, took = evalgate("run", "--config", str(config), "--baseline", "none", "--out", str(out),
                              "--checkpoint", str(root / "data" / "checkpoints" / ckpt))
        if code != 0:
            failed.append(f"the {ckpt} run on {tag} ended with exit code {code}")
            continue
        runs[tag, ckpt] = json.loads((out / "results.json").read_text("utf-8"))
        print(f"  demo {ckpt:15} on {'cpu' if tag == 'cpu' else label}: {took:7.1f} s")
verdicts: dict[str, tuple[str, str]] = {}
for tag in ("cpu", "dut"):
    config = config_for("cpu" if tag == "cpu" else device)
    got = []
    for ckpt in ("demo", "demo-regressed"):
        out = work / f"{tag}-{ckpt}-gated"
        code, _ = evalgate("compare", str(work / f"{tag}-{ckpt}" / "results.json"),
                           str(work / f"{tag}-demo" / "results.json"), "--config", str(config), "--out", str(out))
        path = out / "results.json"
        got.append(json.loads(path.read_text("utf-8"))["verdict"] if path.is_file() else f"exit {code}")
    verdicts[tag] = (got[0], got[1])
print(f"  verdicts (demo, demo-regressed) against the device's own demo run: cpu {verdicts['cpu']}, "
      f"{label} {verdicts['dut']}")
if verdicts["cpu"] != verdicts["dut"]:
    failed.append(f"the verdicts differ: cpu {verdicts['cpu']}, {label} {verdicts['dut']}")
if verdicts["cpu"] != ("pass", "fail"):
    failed.append(f"the CPU verdicts are {verdicts['cpu']}, not (pass, fail): the check itself is broken")
worst = 0.0
for ckpt in ("demo", "demo-regressed"):
    a, b = runs.get(("cpu", ckpt)), runs.get(("dut", ckpt))
    if a is None or b is None:
        continue
    if "device" in a["manifest"] or b["manifest"].get("device") != (None if dry else "cuda"):
        failed.append(f"{ckpt}: the manifests do not record the devices: {a['manifest'].get('device')}, "
                      f"{b['manifest'].get('device')}")
    left = {(p["id"], c["text"]): c["loglik"] for p in a["probes"] for c in p.get("candidates") or []}
    right = {(p["id"], c["text"]): c["loglik"] for p in b["probes"] for c in p.get("candidates") or []}
    if left.keys() != right.keys() or not left:
        failed.append(f"{ckpt}: the runs scored different candidates")
        continue
    diff = max(abs(left[k] - right[k]) for k in left)
    worst = max(worst, diff)
    if diff > TOL:
        failed.append(f"{ckpt}: a log-likelihood differs by {diff:.2e} (> {TOL})")
print(f"  demo: largest log-likelihood difference {worst:.2e} (tolerance {TOL})")

# 2. A Llama shape with random weights.
import tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402

from evalgate.scorers.device import place  # noqa: E402
from evalgate.scorers.loaders import load_scorer  # noqa: E402
from evalgate.types import LoglikRequest  # noqa: E402

probes = [json.loads(line) for line in (root / "data" / "eval" / "probes.jsonl").read_text("utf-8").splitlines()]
requests = []
for p in probes:
    context = p["prompt"].split("___")[0].rstrip()
    requests += [LoglikRequest(context, " " + c) for c in p["candidates"] if context]
requests = requests[:n_requests]
vocab = 512 if tiny else 32000
shape = dict(hidden_size=64, intermediate_size=172, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=4) if tiny else dict(hidden_size=2048, intermediate_size=5632,
             num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4)
model_dir = work / "llama"
bpe = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = tokenizers.decoders.ByteLevel()
trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"],
                                         initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
bpe.train_from_iterator([r.context + r.continuation for r in requests] * 2, trainer)
tok = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
torch.manual_seed(0)
config = LlamaConfig(vocab_size=len(tok), max_position_embeddings=2048, bos_token_id=tok.bos_token_id,
                     eos_token_id=tok.eos_token_id, tie_word_embeddings=False, **shape)
started = time.perf_counter()
model = LlamaForCausalLM(config).eval()
n_params = sum(p.numel() for p in model.parameters())
model.save_pretrained(model_dir, safe_serialization=True)
tok.save_pretrained(model_dir)
del model
print(f"  llama shape: {n_params / 1e9:.2f}B parameters ({'tiny, ' if tiny else ''}random weights), "
      f"written in {time.perf_counter() - started:.1f} s; {len(requests)} requests")
scores = {}
for tag, dev in (("cpu", "cpu"), ("dut", device)):
    scorer = load_scorer(model_dir, None, root=work, roots=[work])
    if tag == "dut":
        # The run's own path: scorers/device.py, as `scoring.device: cuda` takes it. In a dry run
        # the wrapper is applied on the CPU (scorers/device.on_device), so it is exercised too.
        from evalgate.scorers.device import on_device

        scorer = place(scorer, dev) if dev != "cpu" else on_device(scorer, torch.device("cpu"))
    started = time.perf_counter()
    scores[tag] = [r.logprob for r in scorer.loglikelihood(requests)]
    print(f"  llama on {'cpu' if tag == 'cpu' else label}: {time.perf_counter() - started:7.1f} s")
    del scorer
diff = max(abs(a - b) for a, b in zip(scores["cpu"], scores["dut"], strict=True))
print(f"  llama: largest log-likelihood difference {diff:.2e} (tolerance {TOL})")
if diff > TOL:
    failed.append(f"llama: a log-likelihood differs by {diff:.2e} (> {TOL})")

if failed:
    print("gpu_check: FAILED\n  " + "\n  ".join(failed))
    sys.exit(1)
print("gpu_check: ok" + (" (dry run: the device under test was the CPU)" if dry else ""))
PY
