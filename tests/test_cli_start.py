"""The CLI starts without the engine: ``gpufleet --help`` and every command's start import the
simulator, the loader and the report only when a command uses them (issue 18: start under 0.3 s of
CPU; the time itself is a benchmark's, ``bench``; this checks what is imported)."""

from __future__ import annotations

import subprocess
import sys

#: the engine, the loader, the report, and what only some commands use (the pod model, YAML output,
#: progress bars)
HEAVY = (
    "gpufleet.sim.simulation",
    "gpufleet.kube.load",
    "gpufleet.report.html",
    "plotly",
    "numpy",
    "gpufleet.model.pod",
    "yaml",
    "rich.progress",
)


def test_importing_the_cli_loads_no_engine_loader_or_report() -> None:
    code = "import sys, gpufleet.cli; print(' '.join(m for m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert not [m for m in HEAVY if m in loaded.split()]


def test_the_lazy_package_names_still_resolve() -> None:
    from gpufleet.kube import ScenarioError, load_scenario
    from gpufleet.report import render_html, validate_summary

    assert callable(load_scenario) and callable(render_html) and callable(validate_summary)
    assert issubclass(ScenarioError, Exception)
