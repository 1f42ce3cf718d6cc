"""Host ports a pod asks for, and when two of them conflict on one node.

Mirrors kube-scheduler's ``HostPortInfo`` (``k8s.io/kube-scheduler/framework``, 1.34): an empty
``hostIP`` is ``0.0.0.0`` and an empty protocol ``TCP`` (``sanitize``); a port of 0 or less asks for
nothing. ``CheckConflict``: a wanted ``0.0.0.0`` port conflicts with the same protocol and port on
any IP in use; a wanted specific IP conflicts with the same protocol and port on that IP or on
``0.0.0.0``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

BIND_ALL = "0.0.0.0"  # DefaultBindAllHostIP
DEFAULT_PROTOCOL = "TCP"


class HostPort(NamedTuple):
    ip: str
    protocol: str
    port: int

    @classmethod
    def of(cls, ip: str, protocol: str, port: int) -> HostPort:
        """The port as ``HostPortInfo.Add`` keeps it (``sanitize``: empty IP and protocol defaulted)."""
        return cls(ip or BIND_ALL, protocol or DEFAULT_PROTOCOL, port)


def conflicts(wanted: HostPort, used: Iterable[HostPort]) -> bool:
    """``HostPortInfo.CheckConflict``: ``wanted`` collides with one of the ports ``used`` on a node."""
    if wanted.port <= 0:
        return False
    for other in used:
        if other.protocol != wanted.protocol or other.port != wanted.port:
            continue
        if wanted.ip == BIND_ALL or other.ip in (BIND_ALL, wanted.ip):
            return True
    return False
