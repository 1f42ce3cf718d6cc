"""kubectl's habits on every command: ``-h``, ``--version``, ``-o json|yaml|wide`` (one data structure
in both, a bad value exit 2 in one line), ``-n``/``-A`` on files, ``-`` for standard input (named
``<stdin>`` in problems), a pod named without its namespace, help text without reST markup, and
warnings printed whole when piped."""

from __future__ import annotations

import io
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.main import get_command
from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app
from gpufleet.kube import Problems, read_documents
from gpufleet.model.pod_names import PodNameError, find_pod_key

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "examples" / "explain" / "cluster-dump.yaml"
SCENARIO = """
{apiVersion: v1, kind: Node, metadata: {name: gpu-0},
 status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}}
---
apiVersion: v1
kind: Service
metadata: {name: a-service-with-a-long-name-so-that-the-warning-line-is-longer-than-a-terminal}
spec: {}
"""


def commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group of the CLI (a Click group: its ``commands``): its arguments, itself."""
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*prefix, name), command))
        if hasattr(command, "commands"):
            found += commands(command, (*prefix, name))
    return found


def squeezed(text: str) -> str:
    """``text`` without whitespace and the help panels' borders: what survives rewrapping."""
    return "".join(c for c in text if not c.isspace() and c not in "│╭╮╰╯─")


@pytest.mark.parametrize(
    ("args", "command"), commands(get_command(app)), ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_every_command_takes_dash_h_and_shows_its_help_whole_without_markup(
    args: tuple[str, ...], command: Any
) -> None:
    result = runner.invoke(app, [*args, "-h"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert "``" not in result.output and ":ref:" not in result.output
    assert "<bool>" not in result.output  # a flag takes no value: none shown beside it
    shown = squeezed(result.output)
    for param in command.params:  # nothing eaten as markup (a <tag>, *stars*), nothing cut
        assert squeezed(param.help or "") in shown, param.help
    assert squeezed((command.help or "").split("\n\n")[0]) in shown


def test_version_is_the_package_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"gpufleet {version('gpufleet')}"


def test_json_and_yaml_print_the_same_data(tmp_path: Path) -> None:
    paths = [str(p) for p in write(tmp_path, SCENARIO)]
    as_json = runner.invoke(app, ["validate", *paths, "-o", "json"])
    as_yaml = runner.invoke(app, ["validate", *paths, "--output", "yaml"])
    assert as_json.exit_code == as_yaml.exit_code == 0
    data = json.loads(as_json.stdout)
    assert data == yaml.safe_load(as_yaml.stdout)
    assert (data["valid"], data["nodes"], data["gpus"]) == (True, 1, 8)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["validate", "-o", "xml"], "--output: unknown output format 'xml' (this command takes: json, yaml)"),
        (
            ["validate", "-o", "wide"],
            "--output: unknown output format 'wide' (this command takes: json, yaml)",
        ),
        (["explain", "--json", "-o", "yaml"], "--json: the same as -o json, not with -o yaml"),
    ],
)
def test_a_bad_output_value_is_one_line_and_status_2(tmp_path: Path, args: list[str], line: str) -> None:
    paths = [str(p) for p in write(tmp_path, SCENARIO)]
    result = runner.invoke(app, [*args, *paths])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [line]


def test_deprecated_json_flag_is_output_json() -> None:
    old = runner.invoke(app, ["explain", str(DUMP), "--json"])
    new = runner.invoke(app, ["explain", str(DUMP), "-o", "json"])
    assert old.exit_code == new.exit_code == 0
    assert json.loads(old.stdout) == json.loads(new.stdout)


def test_explain_reads_kubectl_json_from_stdin() -> None:
    dump = {"apiVersion": "v1", "kind": "List", "items": list(yaml.safe_load_all(DUMP.read_text()))}
    result = runner.invoke(app, ["explain", "-", "-o", "json"], input=json.dumps(dump))
    assert result.exit_code == 0, result.output
    pods = [e["pod"] for e in json.loads(result.stdout)]
    assert "ml/train-1" in pods


def test_stdin_problems_name_stdin() -> None:
    result = runner.invoke(app, ["validate", "-"], input='{"apiVersion": "v1",')
    assert result.exit_code == 2
    assert result.output.startswith("<stdin>: document 1: invalid JSON")


def test_stdin_named_twice_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.TextIOWrapper(io.BytesIO(b"apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"))
    monkeypatch.setattr(sys, "stdin", piped)
    problems = Problems()
    documents, sources = read_documents(["-", "-"], problems)
    assert sources == ["<stdin>"]
    assert [d.body["metadata"]["name"] for d in documents] == ["a"]
    assert [d.location.source for d in documents] == ["<stdin>"]


def test_explain_on_files_filters_by_namespace() -> None:
    everything = json.loads(runner.invoke(app, ["explain", str(DUMP), "-o", "json"]).stdout)
    only_ml = json.loads(runner.invoke(app, ["explain", str(DUMP), "-n", "ml", "-o", "json"]).stdout)
    other = json.loads(runner.invoke(app, ["explain", str(DUMP), "-n", "other", "-o", "json"]).stdout)
    assert only_ml == [e for e in everything if e["pod"].startswith("ml/")] and only_ml
    assert other == []


def test_explain_finds_a_pod_named_without_its_namespace() -> None:
    result = runner.invoke(app, ["explain", str(DUMP), "--pod", "train-1", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert "ml/train-1" in [e["pod"] for e in json.loads(result.stdout)]


def test_namespace_and_all_namespaces_together_are_refused() -> None:
    result = runner.invoke(app, ["explain", str(DUMP), "-n", "ml", "-A"])
    assert result.exit_code == 2
    assert result.output.strip() == "--namespace and --all-namespaces: give one of them"


@pytest.mark.parametrize(
    ("name", "namespace", "found"),
    [
        ("ml/a", None, "ml/a"),
        ("a", None, "default/a"),  # kubectl's default namespace first
        ("b", None, "ml/b"),  # else the only pod of that name
        ("a", "ml", "ml/a"),
    ],
)
def test_a_pod_name_is_found_as_kubectl_would(name: str, namespace: str | None, found: str) -> None:
    keys = ["default/a", "ml/a", "ml/b", "x/c", "y/c"]
    assert find_pod_key(name, keys, namespace) == found


def test_a_pod_name_in_several_namespaces_lists_the_candidates() -> None:
    with pytest.raises(PodNameError) as raised:
        find_pod_key("c", ["default/a", "x/c", "y/c"])
    assert str(raised.value) == "c: 2 pods have this name, give one as NS/NAME: x/c, y/c"


def test_warnings_are_printed_whole_when_piped(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", *map(str, write(tmp_path, SCENARIO))])
    assert result.exit_code == 0
    warning = next(line for line in result.output.splitlines() if line.startswith("warning:"))
    assert "a-service-with-a-long-name-so-that-the-warning-line-is-longer-than-a-terminal" in warning
    assert len(warning) > 80


def test_a_trace_is_read_from_stdin(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n")
    pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,1000\n"
    args = [
        "trace",
        "import",
        "--nodes",
        str(nodes),
        "--pods",
        "-",
        "--out",
        str(tmp_path / "o"),
        "-o",
        "json",
    ]
    result = runner.invoke(app, args, input=pods)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pods"] == 1
    bad = runner.invoke(app, [*args[:-2]], input="name\n")
    assert bad.exit_code == 2
    assert bad.output.startswith("<stdin>:1: header: missing")


def test_whatif_wide_prints_whole_messages_and_namespace_chooses_the_pods(tmp_path: Path) -> None:
    snapshot, change = (
        ROOT / "examples" / "whatif" / "snapshot",
        ROOT / "examples" / "whatif" / "urgent-eval.yaml",
    )
    args = ["whatif", str(snapshot), str(change), "--out", str(tmp_path)]
    wide = runner.invoke(app, [*args, "-o", "wide"])
    assert wide.exit_code == 0, wide.output
    row = next(line for line in wide.output.splitlines() if "ml/eval-urgent" in line)
    assert "No preemption victims found for incoming pod." in row  # whole, on the pod's one line
    other = runner.invoke(app, [*args, "-n", "other"])
    assert "the snapshot has no pending pods in namespace other" in other.output
