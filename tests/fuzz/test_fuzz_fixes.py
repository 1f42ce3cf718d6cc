"""What the fuzzers found, each refused in the reader's own words (the corpus replays the inputs)."""

from __future__ import annotations

import json
import math
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_surfaces import HISTORY_WINDOW, SURFACES, Refused, _Answers

from gpufleet.experiments.commands import load_any_grid
from gpufleet.experiments.grid import GridError, read_grid
from gpufleet.experiments.history_command import gang_stretch, read_priority_classes
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.documents import YamlValueError, yaml_value
from gpufleet.live.client import LiveError, connect
from gpufleet.live.history import build_scenario
from gpufleet.live.history_read import Container, History, PodRecord, read_history
from gpufleet.live.prometheus_api import PrometheusError
from gpufleet.model.named_paths import (
    MISSING,
    CannotCreate,
    file_system_line,
    made_directory,
    stat_or_problem,
)
from gpufleet.model.problem_lines import ProblemLines
from gpufleet.model.quantity import QuantityError, parse_duration, parse_quantity, parse_window
from gpufleet.traces.base import TraceError
from gpufleet.traces.openb import read_pods


def _problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario([path])
    return caught.value.problems


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (math.nan, "finite"),
        (math.inf, "finite"),
        ("1e99999999", "exponents are within"),
        ("9" * 5000, "at most 100 digits"),
        (10**5000, "at most 100 digits"),
    ],
    ids=["nan", "inf", "exponent", "digits", "int"],
)
def test_quantities_beyond_reason_are_refused(value: object, reason: str) -> None:
    with pytest.raises(QuantityError, match=reason):
        parse_quantity(value)


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, 10**400, "9999999999h", "9" * 5000 + "s", "1e9d"],
    ids=["nan", "inf", "int", "hours", "digits", "days"],
)
def test_durations_beyond_go_or_not_finite_are_refused(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_duration(value) if not (isinstance(value, str) and value.endswith("d")) else parse_window(value)


def test_go_durations_and_quantities_still_parse() -> None:
    assert parse_duration("1h30m0.5s") == 5400.5 and parse_duration(".5s") == 0.5
    assert parse_window("1d12h") == 129600 and parse_quantity("1.5Gi") == 1.5 * 2**30
    assert parse_quantity("1e3") == 1000 and parse_quantity("-5m") == parse_quantity("-0.005")


def test_an_integer_longer_than_python_reads_is_a_yaml_or_json_problem(tmp_path: Path) -> None:
    yaml_file, json_file = tmp_path / "a.yaml", tmp_path / "b.json"
    yaml_file.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {x: " + "9" * 5000 + "}\n")
    json_file.write_text('{"apiVersion": "v1", "kind": "Node", "x": ' + "9" * 5000 + "}")
    assert _problems(yaml_file) == [
        f"{yaml_file}: document 1: invalid YAML: an integer of more than 4300 digits at line 4, column 11"
    ]
    assert _problems(json_file) == [
        f"{json_file}: document 1: invalid JSON: an integer of more than 4300 digits"
    ]


def test_capacity_beyond_the_node_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "node.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  capacity: {cpu: 9223372036854775808}\n"
    )
    (line,) = _problems(path)
    assert line.endswith(
        "status.capacity.cpu: Invalid value: 9223372036854775808: must be at most 2^53 (in millicores)"
    )


def test_a_problem_quoting_a_line_break_stays_one_line() -> None:
    assert ProblemLines(["f.csv:1: header: unknown a\nb"]).problems == ["f.csv:1: header: unknown a\\nb"]


def test_a_warning_quoting_a_line_break_stays_one_line(tmp_path: Path) -> None:
    """Warnings are printed a line each, as errors are: a kind named with a line break is escaped."""
    path = tmp_path / "odd.yaml"
    path.write_text(
        'apiVersion: example.com/v1\nkind: "Odd\\nKind"\nmetadata: {name: x}\n---\napiVersion: v1\n'
        'kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
    )
    assert load_scenario([path]).warnings == [
        f"{path}: document 1 (Odd\\nKind/x): kind example.com/v1/Odd\\nKind is not modelled; ignored"
    ]


def test_a_scenario_grid_naming_a_file_no_path_can_hold_is_refused_at_the_field(tmp_path: Path) -> None:
    """A NUL byte cannot be in a path: the file does not exist (not ``ValueError: embedded null byte``)."""
    path = tmp_path / "grid.yaml"
    path.write_text('scenario: "\\0"\nseeds: [1]\n')
    with pytest.raises(GridError) as caught:
        load_any_grid(path)
    assert caught.value.problems == [f"{path}: scenario: no such file or directory {tmp_path}/\0"]


LONG_NAME = "9" * 400  # longer than a file name may be (NAME_MAX, 255 bytes)


def test_a_path_is_stat_or_what_is_wrong_with_it(tmp_path: Path) -> None:
    assert stat_or_problem(tmp_path / "absent") == MISSING
    assert stat_or_problem(tmp_path / "a\0b") == MISSING
    assert stat_or_problem(tmp_path / LONG_NAME) == "file name too long"
    found = stat_or_problem(tmp_path)
    assert not isinstance(found, str) and stat.S_ISDIR(found.st_mode)


def test_a_manifest_path_the_file_system_refuses_is_refused_as_a_missing_file_is(tmp_path: Path) -> None:
    """``os.stat`` raises ``ENAMETOOLONG`` where ``Path.is_dir`` was asked (a traceback from ``simulate``,
    ``explain``, ``describe``, ``startup``, ``validate``): now one line naming the path."""
    name = str(tmp_path / LONG_NAME)
    with pytest.raises(ScenarioError) as caught:
        load_scenario([name])
    assert caught.value.problems == [f"{name}: file name too long"]


@pytest.mark.parametrize(
    "grid",
    [
        f"scenario: '{LONG_NAME}'\nseeds: [1]\n",
        f"nodes: '{LONG_NAME}'\ntraces: ['{LONG_NAME}']\npolicies: [FGD]\n",
    ],
    ids=["scenario-grid", "trace-grid"],
)
def test_a_grid_naming_a_path_the_file_system_refuses_is_refused_at_the_field(
    tmp_path: Path, grid: str
) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text(grid)
    with pytest.raises(GridError) as caught:
        load_any_grid(path)
    assert [line for line in caught.value.problems if "too long" in line] == [
        f"{path}: {field}: file name too long {tmp_path / LONG_NAME}"
        for field in (("scenario",) if grid.startswith("scenario") else ("nodes", "traces[0]"))
    ]


def test_a_kubeconfig_named_beyond_the_file_systems_limit_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LiveError) as caught:
        connect(tmp_path / LONG_NAME)
    assert str(caught.value) == f"--kubeconfig: {tmp_path / LONG_NAME}: file name too long"


def test_an_output_directory_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    for path, words in (
        (tmp_path / "file" / "out", "not a directory"),
        (tmp_path / LONG_NAME, "file name too long"),
    ):
        with pytest.raises(CannotCreate) as caught:
            made_directory(path)
        assert str(caught.value) == f"{path}: cannot make this directory: {words}"
    assert made_directory(tmp_path / "a" / "b").is_dir()


def test_simulate_out_through_a_file_exits_2_with_one_line(tmp_path: Path) -> None:
    """``--out`` below a file: the command's one line and exit 2, not ``NotADirectoryError``'s traceback."""
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "out"
    command = [sys.executable, "-m", "gpufleet", "simulate", "--no-progress", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        f"{out}: cannot make this directory: not a directory",
    )


def test_simulate_into_a_directory_where_its_summary_is_a_directory_exits_2_with_one_line(
    tmp_path: Path,
) -> None:
    """An ``--out`` that exists but where a file cannot be written (here ``summary.json`` is a
    directory; no permission or a full disk alike): one line naming the file, exit 2, no traceback."""
    (tmp_path / "summary.json").mkdir()
    command = [sys.executable, "-m", "gpufleet", "simulate", "--no-progress", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr.strip()) == (2, f"{tmp_path / 'summary.json'}: is a directory")


def test_a_file_system_error_names_its_files_and_only_where_it_has_one() -> None:
    assert file_system_line(PermissionError(13, "Permission denied", "out/a.json")) == (
        "out/a.json: permission denied"
    )
    assert file_system_line(OSError(18, "Invalid cross-device link", "a", None, "b")) == (
        "a -> b: invalid cross-device link"
    )
    assert file_system_line(OSError(28, "No space left on device")) is None


def test_trace_times_must_be_finite(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np,1,1,0,0,nan,inf\n"
    )
    with pytest.raises(TraceError) as caught:
        read_pods(path)
    assert caught.value.problems == [
        f"{path}:2: creation_time: 'nan' is not a finite number of seconds",
        f"{path}:2: deletion_time: 'inf' is not a finite number of seconds",
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "a: &a [[], [], [], []]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]",
            "aliases expand",
        ),
        ("a: &a [*a]", "refers to the node that contains it"),
        ("[" * 200 + "]" * 200, "nested more than 100 levels deep"),
        ("a: \x03", "unacceptable character #x0003"),
    ],
)
def test_embedded_yaml_is_guarded_as_documents_are(text: str, reason: str) -> None:
    with pytest.raises(YamlValueError, match=reason):
        yaml_value(text)


def test_a_grid_file_that_is_not_utf8_is_a_grid_error(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_bytes(b"seeds: [1]\nscenario: \xff\n")
    with pytest.raises(GridError, match="not UTF-8"):
        read_grid(path)


def test_a_seed_range_of_quadrillions_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text("scenario: a.yaml\nseeds: 1-3333333333333333\n")
    with pytest.raises(GridError) as caught:
        load_any_grid(path)
    assert f"{path}: seeds: '1-3333333333333333': at most 10,000 seeds" in caught.value.problems


def _prometheus(answer: object) -> PrometheusError:
    with pytest.raises(PrometheusError) as caught:
        read_history(_Answers.of(json.dumps(answer).encode()), *HISTORY_WINDOW)
    return caught.value


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("a\nb", "not a Prometheus HTTP API answer: a\\nb"),
        ({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": 1}]}}, "not a series"),
        (
            {
                "status": "success",
                "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1]]}]},
            },
            'not a [time, "value"] point',
        ),
        (
            {
                "status": "success",
                "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, "NaN"]]}]},
            },
            "a point that is not finite",
        ),
    ],
    ids=["line-break", "metric", "point", "nan"],
)
def test_a_prometheus_answer_not_in_the_api_format_is_one_line_naming_the_url(
    answer: object, reason: str
) -> None:
    message = str(_prometheus({"seen:kube_pod_created": answer}))
    assert len(message.splitlines()) == 1
    assert message.startswith(("http://prometheus.fuzz: ", "/api/v1/query_range: "))
    assert reason in message


def test_history_writes_a_gpu_limit_equal_to_the_request_the_series_give(tmp_path: Path) -> None:
    """kube-state-metrics without the limit series: the API server holds GPU limits equal to requests."""
    container = Container("main", "img", requests={"nvidia.com/gpu": 4.0, "cpu": 1.0})
    pod = PodRecord(
        "ml", "p", "u", created=1_000_100.0, last_seen=1_003_600.0, containers={(False, "main"): container}
    )
    history = History(*HISTORY_WINDOW, pods={"u": pod})
    (manifest,) = build_scenario(history, gang_stretch).files["pods.yaml"]
    assert manifest["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "4"}


def test_a_startup_dump_with_a_field_of_the_wrong_type_is_refused_at_the_field(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": "a\nb",  # quoted in the problem: its line break escaped
    }
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    with pytest.raises(Refused) as caught:
        SURFACES["startup"].read(dump)
    assert caught.value.problems == [
        f'{dump}: document 1 (Pod/default/p): spec: Invalid value: "a\\nb": must be an object'
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: high\nvalue: 1\n",
            "must be an object",
        ),
        ("a: &a [[], [], []]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b]\n", "aliases expand"),
        ("kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: x}\nvalue: a\n", "integer"),
        (  # (a record separator: a line break to ``str.splitlines``, escaped in the line)
            'kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {"\\x1e": 1}\nvalue: 1\n',
            r"metadata\.\\x1e: Additional properties",
        ),
    ],
    ids=["metadata", "alias-bomb", "value", "record-separator"],
)
def test_a_priority_class_file_is_read_as_manifests_are(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "classes.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^--priority-classes {path}: document 1.*{reason}") as caught:
        read_priority_classes(path)
    assert len(str(caught.value).splitlines()) == 1
