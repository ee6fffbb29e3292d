"""The autouse guard of tests/conftest.py: a test reaches loopback and nothing else."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest
from helpers.network import NetworkRefused

# TEST-NET-1 (RFC 5737): never routed, so even without the guard nothing would leave the machine.
OUTSIDE = "192.0.2.1"


def test_a_connection_beyond_loopback_is_refused():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkRefused):
        sock.connect((OUTSIDE, 443))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkRefused):
        sock.connect_ex((OUTSIDE, 443))
    with pytest.raises(NetworkRefused):
        socket.create_connection((OUTSIDE, 80), timeout=1)
    with pytest.raises(OSError, match="tests are offline"):
        urllib.request.urlopen(f"http://{OUTSIDE}/", timeout=1)


def test_a_datagram_beyond_loopback_is_refused():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        with pytest.raises(NetworkRefused):
            sock.sendto(b"x", (OUTSIDE, 53))
        with pytest.raises(NetworkRefused):
            sock.sendto(b"x", 0, (OUTSIDE, 53))


def test_a_datagram_to_loopback_is_allowed():
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client,
    ):
        server.bind(("127.0.0.1", 0))
        server.settimeout(5)
        assert client.sendto(b"ok", server.getsockname()) == 2
        assert server.recv(2) == b"ok"


def test_child_processes_inherit_the_hub_offline_switches():
    # A child process is not patched; the model hub's libraries in it read these instead.
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    code = "import os; print(os.environ['HF_HUB_OFFLINE'], os.environ['TRANSFORMERS_OFFLINE'])"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert child.stdout.split() == ["1", "1"]


def test_loopback_is_allowed():
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        port = server.server_address[1]
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy from the env
        for host in ("127.0.0.1", "localhost"):
            assert direct.open(f"http://{host}:{port}/", timeout=5).read() == b"ok"
    finally:
        server.shutdown()
        server.server_close()
