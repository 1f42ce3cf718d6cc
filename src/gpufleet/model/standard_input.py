"""``-`` as a file name: standard input, as ``kubectl apply -f -`` reads it.

Every reader of paths (manifests, kubectl dumps, trace CSVs) takes ``-`` for standard input and names
it ``<stdin>`` in its problem lines; a command reads standard input at most once.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the file name that means standard input
STDIN = "-"
#: how problem lines name standard input
STDIN_NAME = "<stdin>"


def is_stdin(path: str | Path) -> bool:
    return str(path) == STDIN


def display_name(path: str | Path) -> str:
    """The name problem lines give ``path``: ``<stdin>`` for ``-``."""
    return STDIN_NAME if is_stdin(path) else str(path)


def read_stdin() -> bytes:
    """All of standard input, as bytes (decoded by the reader, as it decodes a file)."""
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer.read() if buffer is not None else sys.stdin.read().encode()
