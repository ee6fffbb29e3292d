"""Build-time check that the trimmed venv still works: the Dockerfile strips symbols from every shared
library and deletes test folders, so exercise each native extension the gate relies on once.

Runs inside the image build (`python docker/selfcheck.py`); exits non-zero with the failing part named.
"""

import io
import sys
import tempfile


def main() -> int:
    checks = []

    def check(name):
        def wrap(fn):
            checks.append((name, fn))
            return fn

        return wrap

    @check("torch")
    def _torch():
        import torch

        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
        y = torch.nn.functional.log_softmax(torch.nn.Linear(8, 5)(x), dim=-1)
        assert y.shape == (4, 5) and torch.isfinite(y).all()

    @check("numpy (OpenBLAS)")
    def _numpy():
        import numpy as np

        a = np.array([[2.0, 1.0], [1.0, 3.0]])
        assert np.allclose(np.linalg.inv(a) @ a, np.eye(2))

    @check("matplotlib (Agg PNG, kiwisolver)")
    def _matplotlib():
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(layout="constrained")
        ax.errorbar([0, 1], [0.5, 0.7], yerr=[0.1, 0.1])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"

    @check("safetensors, tokenizers, transformers")
    def _hf():
        import torch
        from safetensors.torch import load_file, save_file
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import GPT2Config, GPT2LMHeadModel

        with tempfile.TemporaryDirectory() as tmp:
            save_file({"w": torch.ones(2)}, f"{tmp}/w.safetensors")
            assert load_file(f"{tmp}/w.safetensors")["w"].sum().item() == 2.0
        tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        assert tok.encode("a b c").ids == [0, 1, 2]
        model = GPT2LMHeadModel(
            GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=16, bos_token_id=0, eos_token_id=0)
        )
        assert model(torch.tensor([[1, 2, 3]])).logits.shape == (1, 3, 16)

    @check("jsonschema, PyYAML (C loader), regex, tabulate")
    def _text():
        import jsonschema
        import regex
        import tabulate
        import yaml

        jsonschema.validate({"a": 1}, {"type": "object", "properties": {"a": {"type": "integer"}}})
        assert yaml.load("a: [1, 2]", Loader=yaml.CSafeLoader) == {"a": [1, 2]}
        assert regex.findall(r"\p{L}+", "hablé bien") == ["hablé", "bien"]
        assert "|" in tabulate.tabulate([[1]], tablefmt="github")

    failed = []
    for name, fn in checks:
        try:
            fn()
        except Exception as exc:
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    for line in failed:
        print(f"selfcheck FAILED {line}", file=sys.stderr)
    print(f"selfcheck: {len(checks) - len(failed)}/{len(checks)} parts work")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
