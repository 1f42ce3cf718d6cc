"""The CLI starts without the engine: ``gpufleet --help`` and every command's start import the
simulator, the loader and the report only when a command uses them (issue 18: start under 0.3 s of
CPU; the time itself is a benchmark's, ``bench``; this checks what is imported)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

#: the engine, the loader, the report, and what only some commands use (the pod model, YAML output,
#: progress bars, rich's consoles)
HEAVY = (
    "gpufleet.sim.simulation",
    "gpufleet.kube.load",
    "gpufleet.report.html",
    "plotly",
    "numpy",
    "gpufleet.model.pod",
    "yaml",
    "rich.progress",
    "rich.console",
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


def test_reading_and_checking_valid_manifests_and_a_summary_leaves_jsonschema_unimported() -> None:
    """The schemas' compiled predicates answer for valid documents; jsonschema (0.05 s to import) only
    words the errors of a rejected one, so a valid scenario and its summary never import it."""
    code = (
        "import sys; from gpufleet.kube import load_scenario; from gpufleet.report import validate_summary; "
        "from gpufleet.sim.simulation import Simulation; from gpufleet.sim.summary import build_summary; "
        "from gpufleet.report.run_summary import finished_summary; "
        "sim = Simulation(load_scenario(['examples/whatif/snapshot'])); sim.run(); "
        "validate_summary(finished_summary(build_summary(sim))); print('jsonschema' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert result.stdout.split() == ["False"]


def printing_at_exit(args: list[str], printed: str) -> list[str]:
    """The lines ``gpufleet ARGS`` prints in a fresh interpreter (in the repository's root), then
    ``print(<printed>)`` as the interpreter exits (``atexit``: after the command's own last step)."""
    code = (
        "import atexit, sys; "
        f"atexit.register(lambda: print({printed})); "
        f"sys.argv = {['gpufleet', *args]!r}; "
        "from gpufleet.cli import main; main()"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def validate_printing_at_exit(printed: str) -> list[str]:
    """``printing_at_exit`` of ``gpufleet validate examples/whatif/snapshot``."""
    return printing_at_exit(["validate", "examples/whatif/snapshot"], printed)


def test_a_command_ends_with_what_it_holds_frozen_for_the_interpreters_last_collection() -> None:
    """As the process shuts down, CPython collects once more, the collector on or off, walking every
    object still alive; frozen (``collector.frozen_for_exit``) they are left to the process's end."""
    lines = validate_printing_at_exit("'frozen at exit:', __import__('gc').get_freeze_count() > 0")
    assert lines[-1] == "frozen at exit: True"


def test_a_command_that_prints_only_lines_never_imports_rich() -> None:
    """``validate`` prints lines (``cli.say``): rich (0.02 s to import) is left to the commands that render
    tables, bars and summaries."""
    lines = validate_printing_at_exit("'rich imported:', 'rich' in sys.modules")
    assert lines[-2:] == ["valid", "rich imported: False"]


def test_a_line_is_printed_as_it_is_markup_and_emoji_codes_included(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A line holds what a user named (a path with brackets, a name with colons): ``say`` prints it whole,
    where rich's console would have read ``[bold]`` as a style and ``:smile:`` as an emoji."""
    from gpufleet.cli import say

    say("wrote runs[bold]/x :smile:/replay.json")
    say("warning: [red]kept[/red]", stderr=True)
    captured = capsys.readouterr()
    assert captured.out == "wrote runs[bold]/x :smile:/replay.json\n"
    assert captured.err == "warning: [red]kept[/red]\n"


def test_the_commands_annotations_are_objects_that_typer_reads_without_compiling() -> None:
    """typer reads every command's annotations at each start; as strings (``from __future__ import
    annotations``) each would be compiled and evaluated there, 10 ms of every command's start."""
    from gpufleet import cli

    commands = [
        info.callback
        for group in (cli.app, *(g.typer_instance for g in cli.app.registered_groups))
        if group is not None
        for info in group.registered_commands
    ]
    assert len(commands) > 10
    strings = [
        f"{f.__name__}: {name}"
        for f in commands
        if f is not None
        for name, a in f.__annotations__.items()
        if isinstance(a, str)
    ]
    assert strings == []


def test_a_line_is_flushed_as_it_is_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As rich's console did: a line on standard error reaches it before what standard output holds
    next (``explain``'s "read N objects" line, then its JSON, in one captured stream)."""
    from gpufleet.cli import say

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(raw, encoding="utf-8"))
    say("read 3 objects in 0.1 s", stderr=True)
    assert raw.getvalue() == b"read 3 objects in 0.1 s\n"


def test_a_replay_loads_only_the_plugins_its_profile_names(tmp_path: Path) -> None:
    """``gpufleet replay`` builds one profile of kube-scheduler's default plugins and the policy's: the
    registry imports those plugins' modules (``registry.MODULES``), not the gang and queue plugins with the
    workload kinds they read, nor DRA's model and allocator, nor the device ledger (a pod with
    ResourceClaims, or a cluster with devices, loads them where it needs them)."""
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,32000,131072,2,V100M16\n")
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,4000,1024,1,500\np2,8000,2048,1,1000\n")
    gangs_and_devices = (
        "gpufleet.scheduling.plugins.coscheduling",
        "gpufleet.scheduling.plugins.volcano",
        "gpufleet.scheduling.plugins.kai_queue",
        "gpufleet.scheduling.plugins.fgd_policies",
        "gpufleet.model.workloads",
        "gpufleet.model.dra",
        "gpufleet.gpus.dra.allocator",
        "gpufleet.gpus.devices",
    )
    args = [
        "replay",
        "--nodes",
        str(nodes),
        "--pods",
        str(pods),
        "--policy",
        "FGD",
        "--out",
        str(tmp_path / "out"),
    ]
    lines = printing_at_exit(args, f"sorted(m for m in sys.modules if m in {gangs_and_devices!r})")
    assert (tmp_path / "out" / "replay.json").exists()
    assert lines[-1] == "[]"
