"""``-o/--output`` as kubectl takes it: a command prints its human view (a table, or lines) by
default, ``-o wide`` the same view with more columns or whole texts (only commands that print a
table take it), and ``-o json`` / ``-o yaml`` the command's result as one data structure, the same in
both (YAML as PyYAML's ``safe_dump`` writes it, keys in the command's order). Machine output holds
raw numbers (seconds, bytes); the human views show them as people read them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpufleet.report.json_text import json_text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

JSON, YAML, WIDE = "json", "yaml", "wide"
#: long strings stay on one line, as kubectl's YAML has them (PyYAML folds at 80 columns by default)
YAML_WIDTH = 2**31 - 1
#: the width ``-o wide`` may lay a table out in: any that its rows need
UNLIMITED_WIDTH = 1_000_000
#: the formats every command with a result takes
DATA_FORMATS = (JSON, YAML)


class OutputError(ValueError):
    """An ``--output`` value the command does not take; ``str()`` is the one line to print."""


def output_format(value: str | None, wide: bool = False, as_json: bool = False) -> str | None:
    """The format ``--output`` asks for (None: the human view); ``as_json`` is the deprecated
    ``--json`` flag, the same as ``-o json``. ``OutputError`` for a value the command does not take
    (``wide`` only where it prints a table)."""
    known = (*DATA_FORMATS, WIDE) if wide else DATA_FORMATS
    if as_json and value not in (None, JSON):
        raise OutputError(f"--json: the same as -o json, not with -o {value}")
    if value is None:
        return JSON if as_json else None
    if value not in known:
        raise OutputError(
            f"--output: unknown output format {value!r} (this command takes: {', '.join(known)})"
        )
    return value


def render_data(data: Any, fmt: str) -> str:
    """``data`` as JSON (two-space indent, a final newline) or YAML."""
    if fmt == YAML:
        import yaml  # only for YAML output: not on every command's start

        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=YAML_WIDTH))
    return json_text(data, 2, ensure_ascii=False) + "\n"


def yaml_documents(documents: Iterable[Any]) -> str:
    """Manifests as ``yaml.safe_dump_all(documents, sort_keys=False)`` writes them, by libyaml's emitter
    where PyYAML has it, at a fifth of the CPU (a trace's 8,152 pods: 0.86 s, not 4.1). The text reads
    back as the same documents; it is PyYAML's own emitter's on the manifests gpufleet writes, and may
    be laid out otherwise for odd keys (an empty key is ``'': v``, not ``? ''``)."""
    import yaml  # only where manifests are written

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump_all(documents, Dumper=dumper, sort_keys=False))


def print_data(data: Any, fmt: str) -> None:
    """``data`` on standard output as ``render_data`` writes it, unwrapped whatever the terminal."""
    sys.stdout.write(render_data(data, fmt))
    sys.stdout.flush()


def print_wide(renderable: RenderableType, console: Console) -> None:
    """``renderable`` (a table) as wide as its cells need, whatever the terminal's width: ``-o wide``
    prints every cell whole, on one line, as kubectl's wide lines run past the terminal."""
    from rich.console import Console
    from rich.measure import Measurement

    needed = Measurement.get(console, console.options.update_width(UNLIMITED_WIDTH), renderable).maximum
    wide = Console(file=console.file, width=max(needed, console.width), force_terminal=console.is_terminal)
    wide.print(renderable)
