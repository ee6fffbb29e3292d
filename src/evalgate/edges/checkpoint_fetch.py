"""`evalgate fetch`: a checkpoint by reference into the local cache, verified while it streams.

The reference (edges/checkpoint_ref.py) is PR data and may name any address, so the download is
built to learn nothing from where it goes (docs/github.md, "Where the checkpoint lives"):

- HTTPS only, the first request and every redirect (urllib's handler would follow a redirect to
  http:// or file://); at most `MAX_REDIRECTS` of them;
- no credential is ever sent: plain urllib, no Authorization header, no netrc, no HF_TOKEN (the
  Hugging Face library, which would add one, only shapes nothing here: the resolve URL is built
  as `huggingface_hub.hf_hub_url` builds it, with `HF_ENDPOINT` honoured; tests compare them);
- bounded: the reference's total size against `max_bytes` before anything is requested, each
  file cut at its declared size + 1 byte, a socket timeout and a deadline for the whole fetch;
- only the hashes decide: each file's size and SHA-256 are checked as it arrives, into a staging
  folder inside the cache; the folder is renamed into place only when every file matched, so a
  wrong file leaves nothing in the cache. A warm cache (the folder verifies) downloads nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import ssl
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

from evalgate.console import clean
from evalgate.edges.checkpoint_ref import CheckpointRef, RefFile, problems_in
from evalgate.errors import CheckpointError

HF_DEFAULT_ENDPOINT = "https://huggingface.co"
MAX_REDIRECTS = 5
DEFAULT_MAX_BYTES = 64 << 30  # a checkpoint a CPU runner can score is far below this
DEFAULT_TIMEOUT_S = 3600.0  # the whole fetch
SOCKET_TIMEOUT_S = 60.0  # one connect or read
_CHUNK = 1 << 20
USER_AGENT = "evalgate-fetch"


def hub_url(repo: str, revision: str, filename: str, endpoint: str | None = None) -> str:
    """`{endpoint}/{repo}/resolve/{revision}/{filename}`: huggingface_hub.hf_hub_url's shape
    (revision quoted with no safe character, the file name with '/' kept), `HF_ENDPOINT` honoured."""
    base = (endpoint or os.environ.get("HF_ENDPOINT", "").strip() or HF_DEFAULT_ENDPOINT).rstrip("/")
    return f"{base}/{repo}/resolve/{quote(revision, safe='')}/{quote(filename)}"


def _https_or_refuse(url: str, what: str) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
        raise CheckpointError(
            f"{what}: {clean(url, 300)}: only https:// URLs without credentials are fetched; refused",
            hint="a checkpoint reference names https:// URLs or a Hub repo (HF_ENDPOINT https://...)",
        )


class _HttpsRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to another https:// URL, at most MAX_REDIRECTS times."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        _https_or_refuse(newurl, f"a redirect from {clean(req.full_url, 300)}")
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            new.remove_header("Authorization")  # never set; never carried either
        return new


def _opener() -> urllib.request.OpenerDirector:
    # A fresh default context each time: SSL_CERT_FILE / SSL_CERT_DIR name extra trust (a mirror
    # with its own CA; the tests' stand-in servers), certificates and host names always checked.
    context = ssl.create_default_context()
    return urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _HttpsRedirects())


def source_url(ref: CheckpointRef, f: RefFile) -> str:
    if f.url is not None:
        return f.url
    assert ref.hub_repo is not None and ref.hub_revision is not None
    return hub_url(ref.hub_repo, ref.hub_revision, f.path)


def _download(url: str, f: RefFile, target: Path, deadline: float, ref: CheckpointRef) -> None:
    """`url` into `target` (created), refusing a size or SHA-256 other than the reference's."""
    where = f"{ref.shown}: files.{clean(f.path, 200)}"
    _https_or_refuse(url, where)
    request = urllib.request.Request(
        url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}, method="GET"
    )
    try:
        response = _opener().open(request, timeout=SOCKET_TIMEOUT_S)
    except CheckpointError:
        raise
    except urllib.error.HTTPError as exc:
        raise CheckpointError(
            f"{where}: {clean(url, 300)}: HTTP {exc.code} {clean(exc.reason, 100)}"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", None) or exc
        raise CheckpointError(f"{where}: {clean(url, 300)}: cannot be fetched ({clean(why, 200)})") from None
    with response:
        length = response.headers.get("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) != f.bytes:
            raise CheckpointError(
                f"{where}: {clean(url, 300)} sends {int(length):,} bytes, the reference says "
                f"{f.bytes:,}; nothing was kept"
            )
        h, n = hashlib.sha256(), 0
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as out:
            while True:
                if time.monotonic() > deadline:
                    raise CheckpointError(f"{where}: the fetch ran past its time limit; nothing was kept")
                try:
                    chunk = response.read(min(_CHUNK, f.bytes + 1 - n))
                except (OSError, ValueError) as exc:
                    raise CheckpointError(
                        f"{where}: {clean(url, 300)}: the download broke off ({clean(exc, 200)})"
                    ) from None
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
                out.write(chunk)
                if n > f.bytes:
                    break
            out.flush()
            os.fsync(out.fileno())
    digest = h.hexdigest()
    if n != f.bytes or digest != f.sha256:
        size = f"{n:,} bytes" if n <= f.bytes else f"more than {f.bytes:,} bytes"
        raise CheckpointError(
            f"{where}: {clean(url, 300)}: expected sha256 {f.sha256} ({f.bytes:,} bytes), got sha256 "
            f"{digest} ({size}); nothing was kept",
            hint="only the hashes decide what is scored: fix the reference or its source",
        )


def fetch(
    ref: CheckpointRef,
    cache: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    log: Callable[[str], None] = lambda _m: None,
) -> tuple[Path, int]:
    """(the verified cache folder, bytes downloaded: 0 for a warm cache)."""
    folder = cache / ref.key
    if not problems_in(folder, ref):
        log(f"evalgate: {ref.shown}: {len(ref.files)} file(s) already in {folder}, all verified")
        return folder, 0
    if ref.total_bytes > max_bytes:
        raise CheckpointError(
            f"{ref.shown}: {ref.total_bytes:,} bytes in {len(ref.files)} file(s), over the "
            f"{max_bytes:,}-byte limit of this fetch; nothing was fetched",
            hint="raise it with --max-bytes if this checkpoint is meant to be that large",
        )
    deadline = time.monotonic() + timeout_s
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{ref.key[:16]}.", suffix=".fetching", dir=cache))
    try:
        for f in ref.files:
            url = source_url(ref, f)
            log(f"evalgate: fetching {clean(f.path, 200)} ({f.bytes:,} bytes) from {clean(url, 300)}")
            _download(url, f, staging / f.path, deadline, ref)
        if os.path.lexists(folder):  # a stale or damaged entry: replaced whole
            stale = Path(tempfile.mkdtemp(prefix=f".{ref.key[:16]}.", suffix=".stale", dir=cache))
            os.rename(folder, stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(staging, folder)
        except OSError:
            # another fetch of the same files got there first: theirs counts only if it verifies
            if problems_in(folder, ref):
                raise CheckpointError(
                    f"{ref.shown}: cannot move the fetched files into {clean(folder, 300)}; nothing was kept"
                ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"evalgate: {ref.shown}: {len(ref.files)} file(s), {ref.total_bytes:,} bytes, verified into {folder}")
    return folder, ref.total_bytes
