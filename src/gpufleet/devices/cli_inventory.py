"""``gpufleet inventory``: print this machine's GPUs, or write them as a ``v1`` Node manifest.

Without ``nvidia-ml-py``, ``libnvidia-ml.so.1`` or a loaded driver it prints one line,
``no NVIDIA driver found: <reason>``, to stderr and returns 1; any other NVML failure is
one line ``NVML error: <reason>`` and 1 as well.
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
from collections.abc import Callable
from dataclasses import asdict
from types import ModuleType
from typing import Any, TextIO

import yaml

from gpufleet.devices.inventory import format_inventory, node_manifest
from gpufleet.devices.nvml_reader import NvmlUnavailable, read_inventory


def load_pynvml() -> ModuleType:
    """The ``pynvml`` module of ``nvidia-ml-py``; raises ``NvmlUnavailable`` when it is not installed."""
    try:
        return importlib.import_module("pynvml")
    except ImportError as exc:
        raise NvmlUnavailable(f"nvidia-ml-py is not installed ({exc})") from None


def inventory_command(
    as_yaml: bool,
    node_name: str | None,
    *,
    nvml: Callable[[], ModuleType] = load_pynvml,
    out: TextIO | None = None,
    err: TextIO | None = None,
    render: Callable[[Any], str] | None = None,
) -> int:
    """Print the GPU table (or, with ``as_yaml``, a Node manifest named ``node_name`` or the
    host name; with ``render``, the inventory as data, its fields as ``Inventory`` names them, through
    ``render``: ``-o json``/``-o yaml``); returns the exit status: 0, or 1 when NVML cannot be used."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    try:
        module = nvml()
    except NvmlUnavailable as exc:
        print(f"no NVIDIA driver found: {exc.reason}", file=err)
        return 1
    try:
        inv = read_inventory(module)
    except NvmlUnavailable as exc:
        print(f"no NVIDIA driver found: {exc.reason}", file=err)
        return 1
    except module.NVMLError as exc:
        print(f"NVML error: {exc}", file=err)
        return 1
    if as_yaml:
        manifest = node_manifest(inv, node_name or socket.gethostname())
        out.write(yaml.safe_dump(manifest, sort_keys=False))
    elif render is not None:
        out.write(render(json.loads(json.dumps(asdict(inv)))))  # tuples as lists, as YAML takes them
    else:
        out.write(format_inventory(inv))
    return 0
