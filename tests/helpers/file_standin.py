"""Stand-ins for where a checkpoint by reference lives: a plain HTTPS file server and a Hugging
Face Hub endpoint, real TLS on 127.0.0.1 with a certificate made in the test (openssl).

`evalgate fetch` speaks HTTPS only, so the stand-ins do too: `tls_certificate(folder)` writes a
self-signed certificate for 127.0.0.1, which the client trusts through `SSL_CERT_FILE` (OpenSSL's
own variable, read by `ssl.create_default_context`). Every request is recorded with its headers,
so a test can prove no credential was sent.

- `FileServer.serve(path, data)`: GET `path` answers `data` (Content-Length set); `redirect(path,
  location)` answers 302; `endless(path)` streams bytes forever without a length.
- `HubServer`: the Hub's resolve route, `/{repo}/resolve/{revision}/{filename}`, as the Hub
  answers it for a file kept in LFS: a 302 to a content-addressed CDN path on the same server,
  with the headers huggingface_hub reads (`X-Repo-Commit`, `ETag`/`X-Linked-Etag`,
  `X-Linked-Size`); any other revision (a branch name, another commit) is 404.
"""

from __future__ import annotations

import hashlib
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def tls_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) for 127.0.0.1 and localhost, self-signed, made with openssl."""
    cert, key = folder / "standin-cert.pem", folder / "standin-key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.owner.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        self.server.owner.answer(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FileServer


class FileServer:
    def __init__(self, cert: Path, key: Path):
        self.routes: dict[str, tuple[str, Any]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.owner = self
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FileServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def serve(self, path: str, data: bytes) -> str:
        self.routes[path] = ("data", data)
        return self.base + path

    def redirect(self, path: str, location: str) -> str:
        self.routes[path] = ("redirect", location)
        return self.base + path

    def endless(self, path: str) -> str:
        self.routes[path] = ("endless", None)
        return self.base + path

    def answer(self, h: _Handler) -> None:
        kind, value = self.routes.get(h.path, ("missing", None))
        if kind == "data":
            h.send_response(200)
            h.send_header("Content-Length", str(len(value)))
            h.end_headers()
            h.wfile.write(value)
        elif kind == "redirect":
            h.send_response(302)
            h.send_header("Location", value)
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif kind == "endless":
            h.send_response(200)
            h.end_headers()
            try:
                for _ in range(1 << 16):  # 1 GiB at most, far past any bound under test
                    h.wfile.write(b"\0" * (1 << 14))
            except OSError:
                pass
        else:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()


class HubServer(FileServer):
    """The Hub's resolve route for one repo at one commit (files kept in LFS, served by a CDN)."""

    def __init__(self, cert: Path, key: Path, repo: str, revision: str, files: dict[str, bytes]):
        super().__init__(cert, key)
        self.repo, self.revision, self.files = repo, revision, files
        self.blobs = {hashlib.sha256(d).hexdigest(): d for d in files.values()}

    def answer(self, h: _Handler) -> None:
        prefix = f"/{self.repo}/resolve/{self.revision}/"
        if h.path.startswith(prefix) and h.path[len(prefix) :] in self.files:
            data = self.files[h.path[len(prefix) :]]
            digest = hashlib.sha256(data).hexdigest()
            h.send_response(302)
            h.send_header("Location", f"{self.base}/cdn/{digest}")
            h.send_header("X-Repo-Commit", self.revision)
            h.send_header("X-Linked-Etag", f'"{digest}"')
            h.send_header("X-Linked-Size", str(len(data)))
            h.send_header("ETag", f'"{digest}"')
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif h.path.startswith("/cdn/") and h.path[5:] in self.blobs:
            data = self.blobs[h.path[5:]]
            h.send_response(200)
            h.send_header("Content-Length", str(len(data)))
            h.send_header("ETag", f'"{h.path[5:]}"')
            h.end_headers()
            h.wfile.write(data)
        else:
            super().answer(h)
