"""The offline guard tests/conftest.py installs for every test: connections go to loopback only."""

from __future__ import annotations

import ipaddress
import socket


def _loopback(host: str) -> bool:
    """127.0.0.0/8, ::1, or a name that resolves to loopback only ("localhost", the machine's own
    name on hosts that map it to 127.0.1.1). Every GitHub stand-in listens on 127.0.0.1; one test
    plays "another host" on 127.0.0.2, which is still this machine."""
    host = host.split("%", 1)[0]  # an IPv6 zone id
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%", 1)[0]).is_loopback for i in infos)


class NetworkRefused(OSError):
    """A test tried to reach beyond this machine."""


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto

# Set for every test (tests/conftest.py), so that a child process (`python -m evalgate`, the
# Action's steps), which the socket patch cannot reach, and the model hub's libraries stay offline
# too: they read these before opening any connection.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _check(sock: socket.socket, address: object) -> None:
    inet = sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple)
    if inet and not _loopback(str(address[0])):  # type: ignore[index]
        raise NetworkRefused(f"tests are offline: a connection to {address[0]} was refused")


def guarded_connect(self: socket.socket, address: object) -> None:
    _check(self, address)
    return _connect(self, address)


def guarded_connect_ex(self: socket.socket, address: object) -> int:
    _check(self, address)
    return _connect_ex(self, address)


def guarded_sendto(self: socket.socket, data: bytes, *flags_and_address: object) -> int:
    """`sendto(data, address)` or `sendto(data, flags, address)`: a datagram needs no connect."""
    _check(self, flags_and_address[-1])
    return _sendto(self, data, *flags_and_address)  # type: ignore[arg-type]
