"""Tokenizer adapters: native `tokenizers`, Hugging Face `transformers`, and a plugin's own object.

Each gives the scorer the same small surface (`base.TokenizerAdapter`): encode without special
tokens, decode, the special ids, whether the model's sequences start with BOS, and an identity.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from evalgate.console import clean
from evalgate.errors import CheckpointError

# A fixed bilingual text whose encoding fingerprints a tokenizer that has no file to hash.
FINGERPRINT_TEXT = "Ayer fui al mercado y compré pan. She went home; he works. ¿Qué año? ñ á é í ó ú ü 12"


class TokenizersAdapter:
    """A `tokenizers.Tokenizer` (the native format): the ids come from the checkpoint's config."""

    def __init__(
        self,
        tok: Any,
        *,
        bos_id: int,
        eos_id: int,
        pad_id: int,
        unk_id: int | None,
        sha256: str,
        source: str = "tokenizer.json",
    ):
        self.tok = tok
        self.bos_id, self.eos_id, self.pad_id, self.unk_id = bos_id, eos_id, pad_id, unk_id
        self.uses_bos = True  # native models are trained on [bos] + sentence + [eos]
        self.sha256 = sha256
        self.source = source  # the tokenizer file, for errors

    def encode(self, text: str) -> list[int]:
        try:
            return list(self.tok.encode(text, add_special_tokens=False).ids)
        except BaseException as exc:  # a Rust panic is a BaseException
            reraise_interrupts(exc)
            raise CheckpointError(
                f"{clean(self.source, 300)}: the tokenizer cannot encode {clean(repr(text[:60]))} "
                f"({_first_line(exc)})",
                hint="the tokenizer's normalizer or pre-tokenizer fails on ordinary text; re-save it",
            ) from None

    def decode(self, ids: Sequence[int]) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=False)


class HFTokenizerAdapter:
    """A `transformers` tokenizer.

    BOS is used when the tokenizer's own default adds it (Llama-style; a token its template puts
    before every text counts as BOS even when undeclared); GPT-2-style tokenizers add
    nothing, so contexts are encoded bare and an empty context is the BOS/EOS prefix token, as in
    lm-evaluation-harness. GPT-2 declares its end-of-text token as "unknown" although byte-level
    BPE never produces an unknown token: an unk id equal to BOS/EOS is therefore not an unk id.
    """

    def __init__(self, tok: Any, *, sha256: str, source: str = "the tokenizer"):
        self.tok = tok
        self.source = source  # the tokenizer file, for errors
        self.bos_id = tok.bos_token_id
        self.eos_id = tok.eos_token_id
        self.pad_id = tok.pad_token_id
        unk = tok.unk_token_id
        self.unk_id = None if unk is not None and unk in (self.bos_id, self.eos_id) else unk
        self.sha256 = sha256
        plain = self.encode("a")
        default = self._call(tok.encode, "a", "encode", verbose=False)
        lead_only = len(default) > len(plain) and default[1 : 1 + len(plain)] == plain
        if self.bos_id is None and plain and lead_only:
            # the tokenizer's own template prepends a token it does not declare as bos_token
            # ("<s> $A" with no bos_token in tokenizer_config.json): that token is its BOS
            self.bos_id = default[0]
            if self.unk_id == self.bos_id:
                self.unk_id = None
        self.uses_bos = (
            self.bos_id is not None
            and len(default) > len(plain)
            and default[0] == self.bos_id
            and (not plain or plain[0] != self.bos_id)
        )

    def _call(self, fn: Any, arg: Any, what: str, **kwargs: Any) -> Any:
        """A tokenizer that fails on some text (a WordLevel model without an unk token raises
        "Missing [UNK] token") is a broken checkpoint (exit 2) naming the file, not exit 3."""
        try:
            return fn(arg, **kwargs)
        except BaseException as exc:  # a Rust panic (PanicException) included
            reraise_interrupts(exc)
            shown = repr(arg[:60]) if isinstance(arg, str) else f"ids {list(arg)[:20]}"
            raise CheckpointError(
                f"{clean(self.source, 300)}: the tokenizer cannot {what} {clean(shown)} ({_first_line(exc)})",
                hint="a tokenizer must encode any text: give a word-level vocabulary an unk_token, "
                "or use a byte-level BPE",
            ) from None

    def encode(self, text: str) -> list[int]:
        # verbose=False: no "sequence length is longer than the specified maximum" warning on
        # stderr for a tokenizer whose model_max_length is small; windows handle long texts.
        return list(self._call(self.tok.encode, text, "encode", add_special_tokens=False, verbose=False))

    def decode(self, ids: Sequence[int]) -> str:
        options = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
        return self._call(self.tok.decode, list(ids), "decode", **options)


def reraise_interrupts(exc: BaseException) -> None:
    """Ctrl-C and exit() keep their meaning; any other BaseException from a tokenizer (pyo3's
    PanicException derives from BaseException) is the checkpoint's fault, refused by the caller."""
    if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
        raise exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {clean(text[0]) if text else ''}".rstrip(": ")


def first_int_attr(obj: Any, names: Sequence[str]) -> int | None:
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _as_int_list(value: Any, what: str) -> list[int]:
    shown = type(value).__name__
    if isinstance(value, Mapping) and "input_ids" in value:  # a BatchEncoding: tokenizer(text)
        value = value["input_ids"]
    if hasattr(value, "ids") and not isinstance(value, list | tuple):  # a `tokenizers.Encoding`
        value = value.ids
    if hasattr(value, "tolist"):  # torch tensor / numpy array
        value = value.tolist()
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], list | tuple):
        value = value[0]  # a batch of one row: encode(text, return_tensors="pt")
    ids = None
    if isinstance(value, list | tuple) and not any(isinstance(v, bool) for v in value):
        try:
            ids = [operator.index(v) for v in value]  # ints, numpy ints, 0-d integer tensors
        except TypeError:
            ids = None
    if ids is None:
        raise CheckpointError(
            f"{what} returned {shown}, expected a flat list of token ids",
            hint="tokenizer.encode(text) must return a list of ints (or a 1-D tensor)",
        )
    if any(i < 0 for i in ids):
        raise CheckpointError(f"{what} returned a negative token id ({min(ids)})")
    return ids


class PluginTokenizerAdapter:
    """Whatever a `--loader` function returned: `encode(str) -> ids` and `decode(ids) -> str`.

    Sequences are used as the plugin's `encode` returns them, except for a BOS (EOS) it puts at the
    start (end) of every text: that one is taken off, and BOS is added by the scorer. An empty
    context uses its `bos_token_id` (or `bos_id`), else `eos_token_id` (or `eos_id`), when it has one.
    """

    def __init__(self, tok: Any, *, loader: str):
        self.tok = tok
        self.loader = loader
        for method in ("encode", "decode"):
            if not callable(getattr(tok, method, None)):
                raise CheckpointError(
                    f"--loader {loader}: the tokenizer it returned has no {method}() method",
                    hint="return (model, tokenizer) where tokenizer.encode(str) -> ids and "
                    "tokenizer.decode(ids) -> str (the boundary check decodes every continuation)",
                )
        self.bos_id = first_int_attr(tok, ("bos_token_id", "bos_id"))
        self.eos_id = first_int_attr(tok, ("eos_token_id", "eos_id"))
        self.pad_id = first_int_attr(tok, ("pad_token_id", "pad_id"))
        self.unk_id = first_int_attr(tok, ("unk_token_id", "unk_id"))
        self.uses_bos = False
        self.sha256: str | None = None  # set by the loader from a behavioural fingerprint
        # A tokenizer that adds its own specials (a Hugging Face one: "<s> a", "a </s>") would
        # put a second BOS before every sentence and perplexity text (a prediction of BOS
        # counted as a token) and an EOS at the end of every context: they are taken off here,
        # and BOS is then added by the scorer, as for a Hugging Face checkpoint.
        self._strip_bos = self._strip_eos = False
        samples = [self.encode("a"), self.encode(FINGERPRINT_TEXT)]
        if self.bos_id is not None and all(len(s) > 1 and s[0] == self.bos_id for s in samples):
            self._strip_bos = self.uses_bos = True
        if self.eos_id is not None and all(len(s) > 1 and s[-1] == self.eos_id for s in samples):
            self._strip_eos = True

    def encode(self, text: str) -> list[int]:
        try:
            ids = self.tok.encode(text)
        except BaseException as exc:  # the user's code (or a panic under it): named
            reraise_interrupts(exc)
            raise CheckpointError(
                f"--loader {self.loader}: tokenizer.encode raised {_first_line(exc)} on {text[:60]!r}"
            ) from None
        out = _as_int_list(ids, f"--loader {self.loader}: tokenizer.encode")
        if self._strip_bos and out and out[0] == self.bos_id:
            out = out[1:]
        if self._strip_eos and out and out[-1] == self.eos_id:
            out = out[:-1]
        return out

    def decode(self, ids: Sequence[int]) -> str:
        try:
            out = self.tok.decode(list(ids))
        except Exception as exc:
            raise CheckpointError(
                f"--loader {self.loader}: tokenizer.decode raised {_first_line(exc)} on ids {list(ids)[:20]}"
            ) from None
        if not isinstance(out, str):
            raise CheckpointError(
                f"--loader {self.loader}: tokenizer.decode returned {type(out).__name__}, expected str"
            )
        return out
