"""The openb trace format (Alibaba cluster-trace-gpu-v2023): all 26 files of ../shared/traces load,
and a bad row is reported with its file, line and column."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.model.resources import GPU
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary
from gpufleet.traces.base import Rows, TraceError
from gpufleet.traces.openb import POD_COLUMNS, POD_TIME_COLUMNS, read_nodes, read_pods
from shared_files import TRACES, needs_traces

POD_HEADER = ",".join(
    (
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli",
        "gpu_spec,qos,pod_phase",
        "creation_time,deletion_time,scheduled_time\n",
    )
)


@needs_traces
def test_every_openb_file_loads_with_the_counts_of_its_readme() -> None:
    files = sorted(TRACES.glob("*.csv"))
    assert len(files) == 26
    gpu_nodes = read_nodes(TRACES / "openb_node_list_gpu_node.csv")
    assert len(gpu_nodes) == 1213 and sum(n.capacity.get(GPU, 0) for n in gpu_nodes) == 6212
    assert len(read_nodes(TRACES / "openb_node_list_all_node.csv")) == 1523
    default = read_pods(TRACES / "openb_pod_list_default.csv")
    assert len(default) == 8152
    shares = [p for p in default if p.pod.gpu_share is not None]
    assert len(shares) == 3078  # one-GPU pods asking for a fraction (README: 3078)
    cpu_only = [p for p in default if p.pod.gpu_share is None and not p.pod.gpus]
    assert len(cpu_only) == 1088
    total = sum(p.pod.gpus for p in default) + sum(p.pod.gpu_share.compute_milli or 0 for p in shares) / 1000  # type: ignore[union-attr]
    assert total == pytest.approx(6086.8, abs=0.05)
    assert len(read_pods(TRACES / "openb_pod_list_multigpu50.csv")) == 9061  # the five-column files
    for f in files:
        assert read_nodes(f) if "node_list" in f.name else read_pods(f)


@needs_traces
def test_gpu_spec_becomes_required_affinity_on_the_gfd_product() -> None:
    pods = read_pods(TRACES / "openb_pod_list_gpuspec33.csv")
    constrained = [p.pod for p in pods if p.pod.required_terms]
    assert len(constrained) == 2388  # README
    v100 = next(p for p in constrained if "Tesla-V100-SXM2-16GB" in p.required_terms[0].expressions[0].values)  # type: ignore[index]
    assert v100.required_terms[0].expressions[0].key == "nvidia.com/gpu.product"  # type: ignore[index]


def test_trace_rows_map_to_requests_shares_and_times(tmp_path: Path) -> None:
    (tmp_path / "pods.csv").write_text(
        POD_HEADER
        + "half,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
        + "eight,64000,262144,8,1000,V100M16|V100M32,LS,Running,10,20,10\n"
        + "cpu,1000,1024,0,0,,BE,Succeeded,5,6,5\n"
    )
    half, eight, cpu = read_pods(tmp_path / "pods.csv")
    assert half.pod.gpu_share is not None and half.pod.gpu_share.compute_milli == 460 and not half.pod.gpus
    assert (half.created_s, half.deleted_s) == (427061.0, 12902960.0)
    assert eight.pod.requests[GPU] == 8 and eight.pod.gpu_share is None
    assert eight.pod.required_terms[0].expressions[0].values == (
        "Tesla-V100-SXM2-16GB",
        "Tesla-V100-SXM2-32GB",
    )  # type: ignore[index]
    assert cpu.pod.requests == {"cpu": 1000, "memory": 1024 * 2**20}


def test_a_pod_list_of_five_columns_reads_as_pods_without_times_or_model_constraints(tmp_path: Path) -> None:
    """The ``multigpu*`` files have only ``POD_COLUMNS``: the columns they lack read as empty."""
    path = tmp_path / "pods.csv"
    path.write_text(",".join(POD_COLUMNS) + "\nhalf,6000,12288,1,460\n\neight,64000,262144,8,1000\n")
    half, eight = read_pods(path)
    assert (half.created_s, half.deleted_s, half.pod.required_terms) == (None, None, None)
    assert half.pod.gpu_share is not None and eight.pod.requests[GPU] == 8
    assert list(Rows(path, POD_COLUMNS, POD_TIME_COLUMNS).picked(("name", "gpu_spec", "num_gpu"))) == [
        (2, ("half", "", "1")),
        (3, ("eight", "", "8")),  # (a blank line is not counted, as csv.DictReader counts)
    ]


def test_bad_rows_name_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "pods.csv").write_text(
        POD_HEADER
        + "ok,1000,1024,1,500,,LS,Running,0,10,0\n"
        + "bad-gpu,1000,1024,two,500,,LS,Running,0,10,0\n"
        + "bad-milli,1000,1024,2,500,,LS,Running,0,10,0\n"
        + "bad-spec,1000,1024,1,1000,H900,LS,Running,0,10,0\n"
        + "bad-time,1000,1024,1,1000,,LS,Running,20,10,0\n"
    )
    with pytest.raises(TraceError) as err:
        read_pods(tmp_path / "pods.csv")
    path = tmp_path / "pods.csv"
    lines = err.value.problems
    assert lines[0] == f"{path}:3: num_gpu: 'two' is not a whole number"
    assert lines[1] == f"{path}:4: gpu_milli: 500: a pod of 2 GPUs takes whole GPUs (1000)"
    assert lines[2].startswith(f"{path}:5: gpu_spec: unknown GPU model 'H900'")
    assert lines[3] == f"{path}:6: deletion_time: 10 is before creation_time 20"


def test_rows_asking_alike_get_pods_of_their_own_and_each_bad_row_its_own_problem(tmp_path: Path) -> None:
    """The request columns are parsed once per distinct text: pods of equal rows hold equal requests but
    not one shared map, and a bad row seen twice is reported at both of its lines."""
    path = tmp_path / "pods.csv"
    path.write_text(
        POD_HEADER
        + "a,1000,1024,1,500,,LS,Running,0,10,0\n"
        + "b,1000,1024,1,500,,LS,Running,5,6,5\n"
        + "c,2000,1024,2,1000,V100M16,LS,Running,0,10,0\n"
        + "d,2000,1024,2,1000,V100M16,LS,Running,0,10,0\n"
    )
    a, b, c, d = read_pods(path)
    assert a.pod.requests == b.pod.requests and a.pod.requests is not b.pod.requests
    assert a.pod.gpu_share == b.pod.gpu_share and a.pod.gpu_share is not None
    assert (b.created_s, b.deleted_s) == (5.0, 6.0)
    assert c.pod.required_terms == d.pod.required_terms and c.pod.requests[GPU] == d.pod.requests[GPU] == 2
    c.pod.requests[GPU] = 4
    assert d.pod.requests[GPU] == 2
    path.write_text(POD_HEADER + "x,1000,1024,two,500,,LS,Running,0,10,0\n" * 2)
    with pytest.raises(TraceError) as err:
        read_pods(path)
    assert err.value.problems == [f"{path}:{line}: num_gpu: 'two' is not a whole number" for line in (2, 3)]


def test_rows_of_the_wrong_width_are_named_by_line_and_blank_lines_are_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + "\nshort,1000,1024,1,500\n\nlong,1000,1024,1,500,,LS,Running,0,10,0,9\n")
    with pytest.raises(TraceError) as err:
        read_pods(path)
    assert err.value.problems == [f"{path}:{line}: row: 11 columns expected" for line in (2, 3)]


def test_a_wrong_header_is_one_clear_problem(tmp_path: Path) -> None:
    (tmp_path / "nodes.csv").write_text("sn,cpu,memory_mib,gpu,model\nn1,1,1,0,\n")
    with pytest.raises(TraceError, match=r"nodes.csv:1: header: missing cpu_milli"):
        read_nodes(tmp_path / "nodes.csv")


def test_a_trace_is_read_with_the_garbage_collector_off_and_left_as_it_was(tmp_path: Path) -> None:
    """``gpufleet.collector``: the objects made of a trace's rows live as long as the trace, so no
    collection runs while they are read; the collector is as it was after, also after a bad header."""
    good, bad = tmp_path / "pods.csv", tmp_path / "bad.csv"
    good.write_text(POD_HEADER + "p1,1000,1024,1,1000,,,,0,10,\np2,2000,2048,0,0,,,,5,,\n")
    bad.write_text("name,cpu\np1,1000\n")
    collecting = [gc.isenabled() for _ in Rows(good, POD_COLUMNS, POD_TIME_COLUMNS)]
    enabled_after = gc.isenabled()
    with pytest.raises(TraceError):
        list(Rows(bad, POD_COLUMNS, POD_TIME_COLUMNS))
    enabled_after_bad = gc.isenabled()
    gc.disable()
    try:
        read_pods(good)
        disabled_after = not gc.isenabled()
    finally:
        gc.enable()
    assert collecting == [False, False] and enabled_after and enabled_after_bad and disabled_after


def test_trace_import_writes_manifests_that_simulate_in_time(tmp_path: Path) -> None:
    """``gpufleet trace import``: nodes and pods become v1 manifests; each pod arrives at its
    creation time and is gone at its deletion time: done if it started at once, deleted if not."""
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,T4\n")
    (tmp_path / "pods.csv").write_text(
        POD_HEADER
        + "frac,1000,1024,1,460,,LS,Running,10,610,10\nwhole,1000,1024,1,1000,T4,LS,Running,20,80,20\n"
    )
    result = CliRunner().invoke(
        app,
        [
            "trace",
            "import",
            "--nodes",
            str(tmp_path / "nodes.csv"),
            "--pods",
            str(tmp_path / "pods.csv"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    sim = Simulation(load_scenario([tmp_path / "out"]))
    sim.run()
    pods = {p["name"]: p for p in build_summary(sim)["pods"]}
    frac, whole = pods["default/frac"], pods["default/whole"]
    assert (frac["bound_s"], frac["devices"], frac["reason"]) == (10.0, ["0:460m"], "Completed")
    assert frac["finished_s"] == 610.0  # started at once: its trace lifetime ends at its deletion time
    # the only GPU is shared until frac leaves at 610 s; the trace deletes the waiting pod at 80 s
    assert (whole["bound_s"], whole["deleted_s"], whole["phase"]) == (None, 80.0, "Pending")
    assert sim.end_time == 641.0  # the last deletion, its grace period and a second


def test_trace_import_reports_bad_rows_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,Z9\n")
    (tmp_path / "pods.csv").write_text(POD_HEADER + "p,1000,1024,x,460,,LS,Running,10,610,10\n")
    args = ["trace", "import", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv")]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "nodes.csv:2: model: unknown GPU model 'Z9'" in result.output
    assert "pods.csv:2: num_gpu: 'x' is not a whole number" in result.output


def test_a_file_that_is_not_utf8_text_is_one_clear_problem(tmp_path: Path) -> None:
    (tmp_path / "pods.csv").write_bytes(
        b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,\xff\xfe\n"
    )
    with pytest.raises(TraceError, match=r"pods.csv: not UTF-8 text"):
        read_pods(tmp_path / "pods.csv")


def test_replay_onto_a_node_list_without_gpus_exits_2(tmp_path: Path) -> None:
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\ncpu-1,64000,262144,0,\n")
    (tmp_path / "pods.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,1024,1,500\n")
    args = ["replay", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv")]
    result = CliRunner().invoke(app, [*args, "--policy", "FGD", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "no GPU nodes" in result.output


def test_delete_at_deletes_a_running_pod_with_its_grace_period(tmp_path: Path) -> None:
    """``gpufleet.io/delete-at``: at that time the pod is deleted wherever it is; a running one gets
    SIGTERM and its 30 s grace period."""
    (tmp_path / "s.yaml").write_text(
        """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: long
  annotations: {gpufleet.io/duration: 1h, gpufleet.io/delete-at: 5m}
spec:
  containers: [{name: c, image: app:v1, resources: {requests: {cpu: "1"}}}]
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 10m}
"""
    )
    sim = Simulation(load_scenario([tmp_path / "s.yaml"]))
    sim.run()
    pod = build_summary(sim)["pods"][0]
    assert (pod["bound_s"], pod["reason"], pod["finished_s"]) == (0.0, "Deleted", 330.0)
