"""``gpufleet simulate --metrics-out``: the run as dcgm-exporter's, kube-state-metrics',
cluster-autoscaler's and kube-scheduler's series in OpenMetrics text, checked with prometheus_client's
OpenMetrics parser and against the run's summary."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from typer.testing import CliRunner

from conftest import ROOT, write
from gpufleet.cli import app
from gpufleet.kube import load_scenario
from gpufleet.report import finished_summary
from gpufleet.report.openmetrics import DEFAULT_START, openmetrics_text, parse_start
from gpufleet.sim.exporter_scrapes import REPEAT_S, SCRAPE_INTERVAL_S, ExporterScrapes
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

# one L4 node serving a Deployment at 4 of its 10 requests per second; a 2-pod Job makes
# cluster-autoscaler add two nodes, removed empty once the Job is done; a pod deleted at 100 s
SCENARIO = """
apiVersion: v1
kind: Pod
metadata:
  name: probe
  annotations: {gpufleet.io/delete-at: 100s}
spec:
  containers:
  - name: probe
    image: busybox
    resources:
      requests: {cpu: "1"}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: l4}
spec:
  max: 4
  replicas: 1
  template:
    metadata:
      labels: {nvidia.com/gpu.product: NVIDIA-L4}
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
  provisioning: {boot: 60s, devicePlugin: 15s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: server
        image: web:1
        resources:
          requests: {cpu: "2", memory: 8Gi}
          limits: {nvidia.com/gpu: 1}
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: load}
spec:
  target: web
  perReplicaRps: 10
  rps: [{at: 0s, value: 4}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata:
      annotations: {gpufleet.io/duration: 10m, gpufleet.io/gpu-memory: 20Gi}
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: metrics}
spec:
  duration: 40m
  autoscaler: {scaleDownUnneededTime: 2m}
"""
START = parse_start(DEFAULT_START)
END = START + 2400


def _run(paths: list[Path], scraped: bool = True) -> Simulation:
    sim = Simulation(load_scenario(paths))
    if scraped:
        sim.metrics = ExporterScrapes()
    sim.run()
    return sim


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Simulation, str]:
    sim = _run(write(tmp_path_factory.mktemp("metrics"), SCENARIO))
    assert sim.metrics is not None
    return sim, openmetrics_text(sim.metrics.families(), START)


def _samples(text: str) -> tuple[dict[str, str], dict[str, list[Sample]]]:
    types, samples = {}, defaultdict(list)
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for sample in family.samples:
            samples[sample.name].append(sample)
    return types, samples


def _at(samples: list[Sample], t: float, **match: str) -> list[Sample]:
    """The samples written at Unix time ``t`` whose labels include ``match``."""
    return [
        s
        for s in samples
        if s.timestamp is not None
        and float(s.timestamp) == t
        and all(s.labels.get(k) == v for k, v in match.items())
    ]


def test_the_file_is_valid_openmetrics_with_each_exporters_families(run: tuple[Simulation, str]) -> None:
    _, text = run
    assert text.endswith("\n# EOF\n")
    types, samples = _samples(text)
    assert types["DCGM_FI_DEV_GPU_UTIL"] == types["kube_pod_status_phase"] == "gauge"
    assert types["cluster_autoscaler_scaled_up_nodes"] == types["scheduler_schedule_attempts"] == "counter"
    assert types["cluster_autoscaler_unneeded_nodes_count"] == "gauge"
    assert types["cluster_autoscaler_unremovable_nodes_count"] == "gauge"
    assert {"DCGM_FI_DEV_FB_USED", "kube_node_status_allocatable", "scheduler_pending_pods"} <= set(types)
    every = [s for series in samples.values() for s in series]
    assert all(s.timestamp is not None and START <= float(s.timestamp) <= END for s in every)


def test_pods_by_phase_at_the_end_are_the_summarys(run: tuple[Simulation, str]) -> None:
    sim, text = run
    _, samples = _samples(text)
    phases = {
        s.labels["pod"]: s.labels["phase"] for s in _at(samples["kube_pod_status_phase"], END) if s.value
    }
    summary = build_summary(sim)
    assert phases == {p["name"].split("/")[1]: p["phase"] for p in summary["pods"] if p["deleted_s"] is None}
    assert phases == {"web-0": "Running", "train-0": "Succeeded", "train-1": "Succeeded"}


def test_a_deleted_pods_series_end_at_the_last_scrape_before_its_deletion(
    run: tuple[Simulation, str],
) -> None:
    sim, text = run
    _, samples = _samples(text)
    deleted = sim.records["default/probe"].deleted_s
    assert deleted is not None
    for family in ("kube_pod_info", "kube_pod_status_phase", "kube_pod_container_resource_requests"):
        times = [float(s.timestamp or 0) - START for s in samples[family] if s.labels["pod"] == "probe"]
        assert max(times) == SCRAPE_INTERVAL_S * ((deleted - 1e-9) // SCRAPE_INTERVAL_S), family


def test_cluster_autoscaler_counts_the_scale_ups_and_the_empty_scale_downs(
    run: tuple[Simulation, str],
) -> None:
    sim, text = run
    _, samples = _samples(text)
    up = [s.value for s in samples["cluster_autoscaler_scaled_up_nodes_total"]]
    # 0 at the first scrape: the Job's GPU pods, created at 0 s, are very new until 30 s (allPodsAreNew)
    assert up[0] == 0
    assert up[-1] == 2 == sum(len(e.nodes) for e in sim.autoscaler.events if e.kind == "scale-up")
    down = _at(samples["cluster_autoscaler_scaled_down_nodes_total"], END)
    assert [(s.labels["reason"], s.value) for s in down] == [("empty", 2)]
    ready = {
        float(s.timestamp or 0): s.value
        for s in samples["cluster_autoscaler_nodes_count"]
        if s.labels["state"] == "ready"
    }
    assert (
        ready[START] == 1 and ready[START + 105] == 3 and ready[END] == 1
    )  # the new nodes' GPUs ready at 105 s (asked for at 30 s)


# three 1-GPU L4 nodes of a pool with min 2, one serving: the other two are unneeded from the start;
# one goes at the first scan after 10 minutes, the pool's min keeps the other
GAUGES_SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: l4}
spec:
  min: 2
  max: 3
  replicas: 3
  template:
    status:
      capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: server
        image: web:1
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: scale-down-gauges}
spec:
  duration: 15m
"""


def test_cluster_autoscaler_counts_the_unneeded_nodes_and_the_unremovable_ones_by_reason(
    tmp_path: Path,
) -> None:
    """``metrics.go``: ``cluster_autoscaler_unneeded_nodes_count`` and
    ``cluster_autoscaler_unremovable_nodes_count{reason}``, the reason as ``simulator.UnremovableReason``'s
    number. Web's node is ``NotUnderutilized`` (11) and the two empty nodes unneeded but
    ``NotUnneededLongEnough`` (4); at 610 s l4-1 goes and l4-2 is ``NodeGroupMinSizeReached`` (6); the pool
    then at its min has no candidate: nothing is unneeded, and each reason keeps the count it was last set
    to (``UpdateUnremovableNodesCount`` sets only the reasons a scan counted), the 2 of reason 4 too."""
    sim = _run(write(tmp_path, GAUGES_SCENARIO))
    assert sim.metrics is not None
    families = {
        f.name: f for f in text_string_to_metric_families(openmetrics_text(sim.metrics.families(), START))
    }
    unneeded, unremovable = (
        families[f"cluster_autoscaler_{name}_nodes_count"] for name in ("unneeded", "unremovable")
    )
    assert (unneeded.type, unneeded.documentation) == (
        "gauge",
        "Number of nodes currently considered unneeded by CA.",
    )
    assert (unremovable.type, unremovable.documentation) == (
        "gauge",
        "Number of nodes currently considered unremovable by CA.",
    )

    def by_reason(t: float) -> dict[str, float]:
        return {s.labels["reason"]: s.value for s in _at(unremovable.samples, t)}

    # a standing value is written at its change and every REPEAT_S after (15 s, 75 s, ..., 555 s)
    assert [s.value for t in (315, 555, 900) for s in _at(unneeded.samples, START + t)] == [2, 2, 0]
    assert _at(unneeded.samples, START + 315)[0].labels == {
        "job": "cluster-autoscaler",
        "instance": "cluster-autoscaler:8085",
    }
    assert by_reason(START + 315) == by_reason(START + 555) == {"4": 2, "11": 1}
    assert by_reason(START + 900) == {"4": 2, "6": 1, "11": 1}
    scaled = [
        e for e in sim.autoscaler.events if not e.kind.startswith("soft-taint")
    ]  # (its soft taints aside)
    assert [(e.t_s, e.kind, e.nodes) for e in scaled] == [(610.0, "scale-down", ("l4-1",))]


def test_dcgm_gpu_util_is_the_traffic_share_for_a_server_and_100_for_a_computing_pod(
    run: tuple[Simulation, str],
) -> None:
    _, text = run
    _, samples = _samples(text)
    util = samples["DCGM_FI_DEV_GPU_UTIL"]
    served = [s for s in util if s.labels.get("pod") == "web-0" and float(s.timestamp or 0) > START]
    assert {s.value for s in served} == {40.0}  # 4 of 10 rps (the scrape at 0 s may precede its traffic)
    training = [s for s in util if s.labels.get("pod") == "train-0"]
    assert {s.value for s in training} == {100.0}
    assert training[0].labels["modelName"] == "NVIDIA L4" and training[0].labels["device"] == "nvidia0"
    memory = {s.value for s in samples["DCGM_FI_DEV_FB_USED"] if s.labels.get("pod") == "train-0"}
    assert memory == {20480.0}  # gpufleet.io/gpu-memory 20Gi in MiB
    assert not [s for s in samples["DCGM_FI_DEV_FB_USED"] if s.labels.get("pod") == "web-0"]  # unknown


def test_kube_state_metrics_names_resources_and_units_as_it_does(run: tuple[Simulation, str]) -> None:
    _, text = run
    _, samples = _samples(text)
    requests = _at(samples["kube_pod_container_resource_requests"], END, pod="web-0")
    assert {(s.labels["resource"], s.labels["unit"], s.value) for s in requests} == {
        ("cpu", "core", 2.0),
        ("memory", "byte", 8 * 2**30),
        ("nvidia_com_gpu", "integer", 1.0),
    }
    gpus = _at(samples["kube_node_status_allocatable"], END, resource="nvidia_com_gpu")
    assert [(s.labels["node"], s.value) for s in gpus] == [("l4-0", 1.0)]
    info = _at(samples["kube_pod_info"], END, pod="web-0")
    assert info[0].labels["node"] == "l4-0" and info[0].labels["created_by_kind"] == "Deployment"


def test_a_standing_value_is_repeated_within_the_lookback_and_a_change_is_written_at_its_scrape(
    run: tuple[Simulation, str],
) -> None:
    _, text = run
    _, samples = _samples(text)
    node0 = [float(s.timestamp or 0) for s in samples["kube_node_info"] if s.labels["node"] == "l4-0"]
    assert node0[0] == START and node0[-1] == END
    assert max(b - a for a, b in itertools.pairwise(node0)) == REPEAT_S
    # train-0 bound at 105 s (its node asked for at 30 s, allPodsAreNew's wait for new GPU pods, and ready
    # 75 s later): the scrape at 105 s sees it (a scrape sees the events of its instant)
    first = min(
        float(s.timestamp or 0) for s in samples["DCGM_FI_DEV_GPU_UTIL"] if s.labels.get("pod") == "train-0"
    )
    assert first == START + 7 * SCRAPE_INTERVAL_S


def test_scraping_changes_nothing_in_the_run_and_gives_the_same_bytes_twice(
    tmp_path: Path, run: tuple[Simulation, str]
) -> None:
    paths = write(tmp_path, SCENARIO)
    plain = _run(paths, scraped=False)
    again = _run(paths)
    assert plain.metrics is None
    summary: dict[str, Any] = finished_summary(build_summary(plain))
    assert summary == finished_summary(build_summary(again))
    assert again.metrics is not None and openmetrics_text(again.metrics.families(), START) == run[1]


def test_simulate_writes_the_file_from_the_start_it_is_given(tmp_path: Path) -> None:
    paths = write(tmp_path, SCENARIO)
    out = tmp_path / "metrics.om"
    args = ["simulate", *map(str, paths), "--out", str(tmp_path / "out"), "--metrics-out", str(out)]
    result = CliRunner().invoke(app, [*args, "--metrics-start", "2026-03-01T01:00:00+01:00"])
    assert result.exit_code == 0, result.output
    assert "(OpenMetrics, 2026-03-01T00:00:00Z to 2026-03-01T00:40:00Z)" in result.output
    _, samples = _samples(out.read_text())
    assert min(float(s.timestamp or 0) for s in samples["kube_node_info"]) == parse_start(
        "2026-03-01T00:00:00Z"
    )


@pytest.mark.parametrize("start", ["yesterday", "2026-03-01T00:00:00"])
def test_a_bad_metrics_start_is_one_line_and_exit_2(tmp_path: Path, start: str) -> None:
    paths = write(tmp_path, SCENARIO)
    args = ["simulate", *map(str, paths), "--metrics-out", str(tmp_path / "m.om"), "--metrics-start", start]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.startswith("--metrics-start: ") and result.output.count("\n") == 1
    assert not (tmp_path / "m.om").exists()


def _dcgm_holders(example: str) -> set[tuple[str, str, str]]:
    sim = _run([ROOT / "examples" / "gpu-sharing" / example])
    assert sim.metrics is not None
    _, samples = _samples(openmetrics_text(sim.metrics.families(), START))
    return {
        (s.labels["Hostname"], s.labels["gpu"], s.labels.get("pod", ""))
        for s in samples["DCGM_FI_DEV_GPU_UTIL"]
    }


def test_a_shared_gpu_has_a_series_per_pod_holding_part_of_it() -> None:
    on_gpu0 = {pod for node, gpu, pod in _dcgm_holders("fractions.yaml") if (node, gpu) == ("a100-0", "0")}
    assert {"half-a", "quarter-b"} <= on_gpu0


def test_a_mig_node_has_no_dcgm_series_rather_than_a_free_gpu() -> None:
    assert _dcgm_holders("mig-reconfigure.yaml") == set()


# a dump's 8-GPU pod of ``schedulerName: other`` (a scheduler the run does not simulate), no node fits it
OTHER_SCHEDULER_POD = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 2m, autoscaler: {{{knobs}}}}}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: h100}}
spec:
  max: 1
  gpu: {{model: H100-80GB, count: 8}}
  template:
    status:
      capacity: {{cpu: "96", memory: 768Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {{name: train, namespace: default}}
spec:
  schedulerName: other
  containers:
  - {{name: main, image: main:1, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
status:
  phase: Pending{condition}
"""


@pytest.mark.parametrize(
    ("reason", "knobs", "counts"),
    [
        ("Unschedulable", "", {"unschedulable": 1, "scheduler_unprocessed": 0}),
        ("SchedulerError", "", {"unschedulable": 0, "scheduler_unprocessed": 0}),
        (None, "", {"unschedulable": 0, "scheduler_unprocessed": 0}),
        (None, "bypassedSchedulerNames: [other]", {"unschedulable": 0, "scheduler_unprocessed": 1}),
    ],
)
def test_cluster_autoscaler_counts_the_pods_list_pods_lists_whatever_their_scheduler(
    tmp_path: Path, reason: str | None, knobs: str, counts: dict[str, int]
) -> None:
    """``UpdateUnschedulablePodsCount(len(unschedulablePods), len(schedulerUnprocessed))`` (``RunOnce``):
    the ``other`` pod, ``Unschedulable`` in the dump, counts as unschedulable though the run does not simulate
    its scheduler (``isUnschedulable``); with ``SchedulerError`` or no condition it is in neither count, and
    without a condition it is unprocessed only where ``--bypassed-scheduler-names`` names ``other``
    (``SchedulerUnprocessedPods``, zero when none is bypassed)."""
    condition = (
        ""
        if reason is None
        else f'\n  conditions:\n  - {{type: PodScheduled, status: "False", reason: {reason}, message: full}}'
    )
    sim = _run(write(tmp_path, OTHER_SCHEDULER_POD.format(knobs=knobs, condition=condition)))
    assert sim.metrics is not None
    _, samples = _samples(openmetrics_text(sim.metrics.families(), START))
    last = {s.labels["type"]: s.value for s in samples["cluster_autoscaler_unschedulable_pods_count"]}
    assert last == counts
