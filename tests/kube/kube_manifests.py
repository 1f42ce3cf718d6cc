"""Helpers for the manifest loader's tests: YAML written to a temporary directory, then loaded.

(Not a ``conftest.py``: ``tests/conftest.py`` is imported by name elsewhere.)
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.scenario import Scenario


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def load(directory: Path, text: str, name: str = "scenario.yaml") -> Scenario:
    """Load YAML text written to ``directory/name``."""
    return load_scenario([write(directory, name, text)])


def relative(directory: Path, lines: list[str]) -> list[str]:
    return [line.replace(f"{directory}/", "") for line in lines]


def problems(directory: Path, text: str, name: str = "scenario.yaml") -> list[str]:
    """The problem lines of YAML text that must not load, with file names relative to ``directory``."""
    with pytest.raises(ScenarioError) as caught:
        load_scenario([write(directory, name, text)])
    return relative(directory, caught.value.problems)


def warnings(directory: Path, text: str) -> list[str]:
    """The warnings of YAML text that loads, with file names relative to ``directory``."""
    return relative(directory, load(directory, text).warnings)


NODE = """
apiVersion: v1
kind: Node
metadata:
  name: gpu-0
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def pod(spec: str = "", metadata: str = "", name: str = "p") -> str:
    """A Pod manifest with one container; ``spec`` and ``metadata`` lines are added (indented 2)."""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: {name}\n"
        + textwrap.indent(textwrap.dedent(metadata).strip("\n"), "  ")
        + "\nspec:\n  containers:\n  - name: main\n    image: busybox\n"
        + textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
        + "\n"
    )
