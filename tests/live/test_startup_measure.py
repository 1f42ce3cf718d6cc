"""Start-up time measured from Kubernetes objects (``gpufleet.live.startup``), on hand-written dumps in
the shape ``kubectl get pods,nodes,events -A -o json`` gives; no control plane needed.

Upstream rules the dumps follow: the kubelet's ``Pulling``/``Pulled`` events and the Pulled message
format (k8s.io/kubernetes v1.34.10 ``pkg/kubelet/images/image_manager.go``, ``pkg/kubelet/events``),
``Started`` events (``pkg/kubelet/kuberuntime/kuberuntime_container.go``: "Started container NAME"),
cluster-autoscaler 1.34.5's ``TriggeredScaleUp`` event (``processors/status/eventing_scale_up_processor.go``
with ``ScaleUpInfo.String``: ``pod triggered scale-up: [{group 0->1 (max: 4)}]``), conditions'
``lastTransitionTime`` (``metav1.Time``, 1 s resolution) and Events' ``eventTime``
(``metav1.MicroTime``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.live.startup import Observations, StartupInputError, measure, summary
from gpufleet.live.startup_calibrate import calibration_yaml
from gpufleet.report import finished_summary, render_html, validate_summary
from gpufleet.report.startup_table import stage_rows

T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC).timestamp()
IMAGE = "registry.example/llm-serve:v1"
PULLED = (
    f'Successfully pulled image "{IMAGE}" in 12.5s (13.1s including waiting). Image size: 8123456789 bytes.'
)
SCALE_UP = "pod triggered scale-up: [{a100 0->1 (max: 4)}]"


def at(seconds: float, micro: bool = False) -> str:
    """T0 + seconds in RFC 3339: whole seconds as metav1.Time, microseconds as metav1.MicroTime."""
    moment = datetime.fromtimestamp(T0 + seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def node(
    name: str, created: float, ready: float | None, gpus: int = 8, group: str = "a100"
) -> dict[str, Any]:
    conditions = (
        [] if ready is None else [{"type": "Ready", "status": "True", "lastTransitionTime": at(ready)}]
    )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": at(created),
            "labels": {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p4d.24xlarge"},
            "annotations": {"cluster-autoscaler.kwok.nodegroup/name": group},
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "96", "memory": "1152Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
            "allocatable": {"cpu": "96", "memory": "1152Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
            "conditions": conditions,
        },
    }


def pod(
    name: str,
    created: float,
    *,
    on: str | None = None,
    scheduled: float | None = None,
    started: float | None = None,
    ready: float | None = None,
    unschedulable: str | None = None,
    restarts: int = 0,
) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = []
    if scheduled is not None:
        conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": at(scheduled)})
    elif unschedulable is not None:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
                "lastTransitionTime": at(created),
            }
        )
    if ready is not None:
        conditions.append({"type": "Ready", "status": "True", "lastTransitionTime": at(ready)})
    state: dict[str, Any] = {"waiting": {"reason": "ContainerCreating"}}
    if started is not None:
        state = {"running": {"startedAt": at(started)}}
    status: dict[str, Any] = {
        "phase": "Running" if started is not None else "Pending",
        "conditions": conditions,
    }
    if on is not None:
        status["containerStatuses"] = [{"name": "server", "restartCount": restarts, "state": state}]
    spec: dict[str, Any] = {
        "containers": [
            {"name": "server", "image": IMAGE, "resources": {"limits": {"nvidia.com/gpu": "1"}}},
        ]
    }
    if on is not None:
        spec["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}", "creationTimestamp": at(created)},
        "spec": spec,
        "status": status,
    }


def event(pod_name: str, reason: str, message: str, seconds: float, shape: str = "v1") -> dict[str, Any]:
    """A core/v1 Event (kubectl get events -o json; the kubelet's and cluster-autoscaler's recorders
    fill first/lastTimestamp) or an events.k8s.io/v1 Event (the scheduler's: eventTime, microseconds)."""
    target = {"kind": "Pod", "namespace": "ml", "name": pod_name, "uid": f"uid-{pod_name}"}
    metadata = {"name": f"{pod_name}.{reason}", "namespace": "ml", "creationTimestamp": at(seconds)}
    if shape == "events.k8s.io/v1":
        return {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": metadata,
            "regarding": target,
            "reason": reason,
            "note": message,
            "eventTime": at(seconds, micro=True),
        }
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": metadata,
        "involvedObject": target,
        "reason": reason,
        "message": message,
        "firstTimestamp": at(seconds),
        "lastTimestamp": at(seconds),
        "eventTime": None,
    }


def served_on_existing_node() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """ml/serve-0: created at 0, bound at 2 to an old node, image pulled (13.1 s including waiting),
    container started at 17, Ready at 47."""
    pods = [pod("serve-0", 0, on="old-0", scheduled=2, started=17, ready=47)]
    nodes = [node("old-0", -3600, -3500)]
    events = [
        event("serve-0", "Pulling", f'Pulling image "{IMAGE}"', 3),
        event("serve-0", "Pulled", PULLED, 16),
        event("serve-0", "Started", "Started container server", 17),
    ]
    return pods, nodes, events


def scaled_up() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """ml/train-0: created at 0, TriggeredScaleUp at 4, node gpu-new created at 20, Ready at 50, GPUs
    allocatable at 62 (a watch), bound at 63, image already present, started at 65, Ready at 95."""
    pods = [pod("train-0", 0, on="gpu-new", scheduled=63, started=65, ready=95)]
    nodes = [node("gpu-new", 20, 50)]
    events = [
        event(
            "train-0",
            "FailedScheduling",
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
            0.25,
            "events.k8s.io/v1",
        ),
        event("train-0", "TriggeredScaleUp", SCALE_UP, 4),
        event("train-0", "Pulled", f'Container image "{IMAGE}" already present on machine', 64),
        event("train-0", "Started", "Started container server", 65),
    ]
    return pods, nodes, events


def test_pod_on_an_existing_node_is_scheduling_image_pull_from_the_pulled_message_and_readiness() -> None:
    """PodScheduled's lastTransitionTime ends scheduling; image_pull is the Pulled message's "including
    waiting" duration (kubelet image_manager.go); readiness runs from state.running.startedAt to Ready."""
    measured = measure(*served_on_existing_node())
    (serve,) = measured.pods
    assert serve.stages == {
        "scheduling": 2.0,
        "image_pull": 13.1,
        "readiness": 30.0,
        "other": pytest.approx(1.9),
    }
    assert (serve.pulls[0].pull_s, serve.pulls[0].waiting_s, serve.pulls[0].size_bytes) == (
        12.5,
        13.1,
        8123456789,
    )
    assert serve.node == "old-0" and serve.scale_up is None


def test_stages_add_up_to_working_minus_created() -> None:
    """DESIGN.md's output contract: a pod's stages add up to working_s - created_s."""
    for pods, nodes, events in (served_on_existing_node(), scaled_up()):
        for observed in (None, Observations(gpu_allocatable={"gpu-new": T0 + 62})):
            for measured_pod in measure(pods, nodes, events, observed).pods:
                assert measured_pod.working is not None
                total = measured_pod.working - measured_pod.created
                assert sum(measured_pod.stages.values()) == pytest.approx(total, abs=1e-5)


def test_a_pod_that_triggered_a_scale_up_waits_for_its_node_until_its_gpus_are_allocatable() -> None:
    """cluster-autoscaler's TriggeredScaleUp event starts node_provisioning; a watch's GPU-allocatable
    moment ends it; the scheduler's next attempt (62 -> 63) is scheduling again."""
    pods, nodes, events = scaled_up()
    observed = Observations(gpu_allocatable={"gpu-new": T0 + 62}, node_ready={"gpu-new": T0 + 50})
    (train,) = measure(pods, nodes, events, observed).pods
    assert train.scale_up is not None and train.scale_up.groups == ("a100 0->1 (max: 4)",)
    assert train.stages == {"scheduling": 5.0, "node_provisioning": 58.0, "readiness": 30.0, "other": 2.0}


def test_a_node_launched_for_a_pod_is_created_at_the_launch_request_and_has_its_start_chain() -> None:
    """DESIGN.md's summary contract: a node's created_s is its launch request (here the pod's
    TriggeredScaleUp at 4); the Node object (20) is registered_s; the pod carries its node's chain in
    NodePool.spec.provisioning's names (boot, join, devicePlugin)."""
    pods, nodes, events = scaled_up()
    observed = Observations(gpu_allocatable={"gpu-new": T0 + 62}, node_ready={"gpu-new": T0 + 50})
    result = summary(measure(pods, nodes, events, observed))
    (gpu_new,) = result["nodes"]
    assert (gpu_new["created_s"], gpu_new["registered_s"], gpu_new["ready_s"], gpu_new["gpu_ready_s"]) == (
        4.0,
        20.0,
        50.0,
        62.0,
    )
    assert result["pods"][0]["node_stages"] == {"boot": 16.0, "join": 30.0, "devicePlugin": 12.0}
    chain = result["startup"]["node_chain"]["a100"]
    assert (chain["boot"]["p50"], chain["join"]["p50"], chain["devicePlugin"]["p50"]) == (16.0, 30.0, 12.0)


def test_from_a_dump_node_provisioning_ends_at_ready_and_the_gpu_time_is_said_not_recorded() -> None:
    """A dump has no time for an allocatable change: Ready (50) ends node_provisioning, Ready -> binding
    is other, and the measurement says so instead of inventing a device-plugin time."""
    measured = measure(*scaled_up())
    (train,) = measured.pods
    assert train.stages == {"scheduling": 4.0, "node_provisioning": 46.0, "readiness": 30.0, "other": 15.0}
    assert any(note.startswith("gpu allocatable time not recorded in a dump") for note in measured.notes)
    (gpu_new,) = measured.nodes
    assert (gpu_new.ready, gpu_new.gpu_ready, gpu_new.group) == (T0 + 50, None, "a100")


def test_a_node_made_just_before_the_scale_up_event_came_with_it_as_kwoks_provider_makes_them() -> None:
    """cluster-autoscaler records TriggeredScaleUp after IncreaseSize (orchestrator.go, then
    EventingScaleUpStatusProcessor); the kwok provider creates the Node inside IncreaseSize, so the
    Node is a second older than the event: the scale-up began at the Node's creation."""
    pods, nodes, events = scaled_up()
    events[1] = event("train-0", "TriggeredScaleUp", SCALE_UP, 21)  # node gpu-new created at 20
    (train,) = measure(pods, nodes, events).pods
    assert (train.stages["scheduling"], train.stages["node_provisioning"]) == (20.0, 30.0)


def test_a_pod_bound_to_a_node_older_than_its_scale_up_waited_in_scheduling_and_says_so() -> None:
    pods, _, events = scaled_up()
    (train,) = measure(pods, [node("gpu-new", -600, -570)], events).pods
    assert train.stages["scheduling"] == 63.0 and "node_provisioning" not in train.stages
    assert train.notes == (
        "triggered a scale-up (a100 0->1 (max: 4)) but was bound to node gpu-new, which existed before",
    )


def test_an_image_already_present_on_the_machine_is_a_zero_pull() -> None:
    """kubelet: 'Container image "X" already present on machine' (reason Pulled) means no pull."""
    (train,) = measure(*scaled_up()).pods
    assert "image_pull" not in train.stages
    assert [(p.image, p.present, p.pull_s) for p in train.pulls] == [(IMAGE, True, 0.0)]


@pytest.mark.parametrize(
    ("message", "pulled"),
    [
        (PULLED, (12.5, 13.1, 8123456789)),
        (f'Successfully pulled image "{IMAGE}" in 1m2.5s (1m3.001s including waiting)', (62.5, 63.001, None)),
        (f'Successfully pulled image "{IMAGE}" in 2.035263346s', (2.035263346, 2.035263346, None)),
    ],
)
def test_the_pulled_message_of_this_and_older_kubelets_gives_the_pull_time(
    message: str, pulled: tuple[float, float, int | None]
) -> None:
    """image_manager.go v1.34 ("... in %v (%v including waiting). Image size: %v bytes."), its earlier
    form without the size, and the oldest "... in %v" (time.Since the pull began: waiting included)."""
    pods, nodes, _ = served_on_existing_node()
    (serve,) = measure(pods, nodes, [event("serve-0", "Pulled", message, 16)]).pods
    (pull,) = serve.pulls
    assert (pull.pull_s, pull.waiting_s, pull.size_bytes) == pulled


def test_a_pending_pod_has_its_stage_so_far_and_the_schedulers_message() -> None:
    """A pod never scheduled: scheduling up to the reading, then node_provisioning since its
    TriggeredScaleUp; its message is the PodScheduled=False condition's, verbatim."""
    message = (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    pods = [pod("wait-0", 0, unschedulable=message), pod("wait-1", 10, unschedulable=message)]
    events = [event("wait-1", "TriggeredScaleUp", SCALE_UP, 12)]
    measured = measure(pods, [node("old-0", -3600, -3500)], events, now=T0 + 100)
    wait0, wait1 = measured.pods
    assert (wait0.stages, wait0.message, wait0.reason, wait0.working) == (
        {"scheduling": 100.0},
        message,
        "Unschedulable",
        None,
    )
    assert wait1.stages == {"scheduling": 2.0, "node_provisioning": 88.0}
    assert "which node is meant for it is not recorded" in wait1.notes[0]


def test_events_k8s_io_v1_events_and_microsecond_event_times_are_read() -> None:
    """events.k8s.io/v1 (regarding, note, eventTime as metav1.MicroTime) reads as core/v1 does."""
    pods, nodes, _ = served_on_existing_node()
    events = [event("serve-0", "Pulled", PULLED, 15.5, "events.k8s.io/v1")]
    (serve,) = measure(pods, nodes, events).pods
    assert serve.pulls[0].at == T0 + 15.5
    assert serve.stages["image_pull"] == 13.1


def test_a_restarted_pod_is_timed_from_its_first_started_event_and_says_ready_may_be_later() -> None:
    """After a restart state.running.startedAt is the last start; the Started event's firstTimestamp is
    the first (client-go's event correlator keeps it while counting repeats)."""
    pods, nodes, events = served_on_existing_node()
    pods[0]["status"]["containerStatuses"][0].update(
        restartCount=1, state={"running": {"startedAt": at(200)}}
    )
    (serve,) = measure(pods, nodes, events).pods
    assert serve.running == T0 + 17
    assert any("first Ready is not recorded" in note for note in serve.notes)


def test_since_keeps_the_pods_created_in_the_span_before_the_reading() -> None:
    pods = [pod("old", 0, unschedulable="x"), pod("new", 50, unschedulable="x")]
    measured = measure(pods, [], [], now=T0 + 100, lookback_s=60)
    assert [p.name for p in measured.pods] == ["ml/new"]
    assert measured.origin == T0 + 40


def test_a_field_that_is_not_a_time_is_a_problem_naming_the_object_and_field() -> None:
    pods, nodes, events = served_on_existing_node()
    pods[0]["metadata"]["creationTimestamp"] = "yesterday"
    with pytest.raises(StartupInputError) as raised:
        measure(pods, nodes, events)
    (problem,) = raised.value.problems
    assert (problem.label, problem.path) == ("Pod/ml/serve-0", "metadata.creationTimestamp")
    assert problem.message == 'Invalid value: "yesterday": not an RFC 3339 time with a zone (Z or +hh:mm)'


def test_the_summary_validates_and_the_report_shows_the_measured_stages() -> None:
    """Same schema as a simulation's summary (gpufleet.summary/v1), plus the startup spread."""
    pods = served_on_existing_node()[0] + scaled_up()[0]
    nodes = served_on_existing_node()[1] + scaled_up()[1]
    events = served_on_existing_node()[2] + scaled_up()[2]
    result = finished_summary(summary(measure(pods, nodes, events)))
    validate_summary(result)
    startup = result["startup"]
    assert startup["source"] == "dump" and startup["origin"] == "2026-12-02T06:00:00Z"
    assert startup["stages"]["readiness"] == {
        "p50": 30.0,
        "p90": 30.0,
        "p95": 30.0,
        "p99": 30.0,
        "max": 30.0,
        "count": 2,
    }
    assert startup["pending_to_working_s"]["max"] == 95.0
    assert startup["node_chain"]["a100"]["join"]["p50"] == 30.0
    by_name = {p["name"]: p for p in result["pods"]}
    assert (by_name["ml/train-0"]["bound_s"], by_name["ml/train-0"]["working_s"]) == (63.0, 95.0)
    html = render_html(result)
    assert "Start-up, measured" in html and "<h3>Waterfall</h3>" in html and "node group a100: join" in html


def test_a_measured_pod_has_its_final_state_and_an_evicted_one_is_not_failed() -> None:
    pods, nodes, events = served_on_existing_node()
    evicted = pod("evicted", 0.0, on=pods[0]["spec"]["nodeName"], scheduled=1.0)
    evicted["status"] = {**evicted["status"], "phase": "Failed", "reason": "Evicted"}
    result = finished_summary(summary(measure([*pods, evicted], nodes, events)))
    by_name = {p["name"]: p for p in result["pods"]}
    assert by_name["ml/evicted"]["final_state"] == "Evicted"
    assert result["totals"]["final_states"] == {"Running": 1, "Evicted": 1}
    assert result["totals"]["pods_failed"] == 0


def test_startup_tables_show_durations_as_people_read_them() -> None:
    result = finished_summary(summary(measure(*scaled_up())))
    (total,) = [row for row in stage_rows(result["startup"]) if row[0] == "pending to serving"]
    assert total[2:] == ["1m 35s"] * 5  # p50 .. max of the one pod: 95 s


def test_calibration_is_a_scenario_fragment_whose_nodepool_has_the_measured_provisioning() -> None:
    """join (creation -> Ready) from 3 nodes as a lognormal {median, p95} (lifecycle.distributions),
    devicePlugin from the one the watch saw as a fixed duration; gpufleet's own reader accepts it."""
    nodes = [node("gpu-a", 10, 40), node("gpu-b", 12, 57), node("gpu-c", 20, 80)]
    pods, _, events = scaled_up()
    observed = Observations(gpu_allocatable={"gpu-a": T0 + 52}, node_ready={"gpu-a": T0 + 40})
    text = calibration_yaml(measure(pods, nodes, events, observed), None)
    assert "    join: {median: 45s, p95: 60s}  # 3 samples, lognormal" in text
    assert "    devicePlugin: 12s  # 1 sample: a single value, fixed" in text
    pool = next(doc for doc in yaml.safe_load_all(text) if doc)
    assert pool["spec"]["template"]["metadata"]["labels"] == {
        "node.kubernetes.io/instance-type": "p4d.24xlarge"
    }
    assert "gpufleet.io/warmup: 30s" in text


def test_calibration_nodepools_load_with_gpufleets_scenario_reader_its_change_is_for_whatif(
    tmp_path: Path,
) -> None:
    """The NodePools are scenario documents; the pods' start-up is a Change, which only gpufleet
    whatif takes (tests/experiments/test_whatif_calibration.py applies it)."""
    nodes = [node("gpu-a", 10, 40), node("gpu-b", 12, 57)]
    text = calibration_yaml(measure(scaled_up()[0], nodes, scaled_up()[2]), None)
    (tmp_path / "calibration.yaml").write_text(text)
    with pytest.raises(ScenarioError) as refused:
        load_scenario([tmp_path / "calibration.yaml"])
    (line,) = refused.value.problems
    assert line.endswith(
        "(Change/startup-calibration): kind: a Change edits a snapshot: give it to gpufleet whatif SNAPSHOT"
        " CHANGE.yaml"
    )
    path = tmp_path / "pools.yaml"
    path.write_text(yaml.safe_dump_all(d for d in yaml.safe_load_all(text) if d and d["kind"] == "NodePool"))
    (pool,) = load_scenario([path]).node_pools
    assert (pool.name, pool.max, pool.template.capacity["nvidia.com/gpu"]) == ("a100", 2, 8)
    assert dict(pool.provisioning) == {"join": {"median": "30s", "p95": "45s"}}


def _dump(tmp_path: Path, *objects: dict[str, Any], name: str = "dump.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return path


def test_startup_command_writes_summary_report_and_calibration_from_a_dump(tmp_path: Path) -> None:
    pods, nodes, events = scaled_up()
    dump = _dump(tmp_path, *pods, *nodes, *events)
    result = CliRunner().invoke(app, ["startup", str(dump), "--out", str(tmp_path / "out"), "--calibrate"])
    assert result.exit_code == 0, result.output
    assert "node_provisioning" in result.output and "pending to serving" in result.output
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["pods"][0]["stages"]["node_provisioning"] == 46.0
    assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "out" / "calibration.yaml").exists()


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        (
            "{not json",
            [],
            "dump.json: document 1: invalid JSON: Expecting property name enclosed in double quotes "
            "at line 1, column 2",
        ),
        (
            None,
            ["--since", "last tuesday"],
            "--since: 'last tuesday': neither a duration (90s, 2h, 7d) nor an RFC 3339 time with a zone",
        ),
        (
            None,
            ["--kubeconfig", "kc"],
            "give DUMP files or a cluster (--kubeconfig, --context, --watch), not both",
        ),
        (
            "no-pods",
            [],
            "dump.json: no pods: nothing to measure (a dump is kubectl get pods,nodes,events -A -o json)",
        ),
        (
            "bad-time",
            [],
            "dump.json: document 1 (Pod/ml/serve-0): metadata.creationTimestamp: "
            'Invalid value: "yesterday": not an RFC 3339 time with a zone (Z or +hh:mm)',
        ),
    ],
)
def test_bad_dump_files_and_options_are_one_line_errors_with_exit_2(
    tmp_path: Path, content: str | None, args: list[str], expected: str
) -> None:
    pods, nodes, events = served_on_existing_node()
    if content == "no-pods":
        path = _dump(tmp_path, *nodes)
    elif content == "bad-time":
        pods[0]["metadata"]["creationTimestamp"] = "yesterday"
        path = _dump(tmp_path, *pods, *nodes, *events)
    elif content is not None:
        path = tmp_path / "dump.json"
        path.write_text(content)
    else:
        path = _dump(tmp_path, *pods, *nodes, *events)
    result = CliRunner().invoke(app, ["startup", str(path), *args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(expected), result.output
    assert "Traceback" not in result.output


def test_the_example_dump_measures_as_docs_startup_md_shows(tmp_path: Path) -> None:
    """examples/startup/cluster-dump.json, the example of docs/startup.md."""
    example = Path(__file__).resolve().parents[2] / "examples" / "startup" / "cluster-dump.json"
    result = CliRunner().invoke(app, ["startup", str(example), "--out", str(tmp_path), "--calibrate"])
    assert result.exit_code == 0, result.output
    startup = json.loads((tmp_path / "summary.json").read_text())["startup"]
    stages = startup["stages"]
    assert (stages["node_provisioning"]["p50"], stages["readiness"]["max"]) == (43.0, 118.0)
    assert startup["node_chain"]["a100"]["join"] == {
        "p50": 45.0, "p90": 61.0, "p95": 61.0, "p99": 61.0, "max": 61.0, "count": 3
    }  # fmt: skip
    assert (
        "batch/batch-0 not serving after 1m 8s (scheduling 1m 8s): 0/5 nodes are available" in result.output
    )
    assert startup["node_chain"]["a100"]["boot"]["p50"] == 6.0  # TriggeredScaleUp at 25, Nodes at 30, 31, 33
    calibration = (tmp_path / "calibration.yaml").read_text()
    assert "    boot: {median: 6s, p95: 8s}  # 3 samples, lognormal" in calibration
    assert "    join: {median: 45s, p95: 61s}  # 3 samples, lognormal" in calibration


def test_a_snapshot_directory_and_a_namespace_are_read_other_kinds_left_aside(tmp_path: Path) -> None:
    """gpufleet snapshot's directory (one kind: List per kind, SNAPSHOT.md beside them) is a dump too;
    -n keeps one namespace's pods."""
    pods, nodes, events = scaled_up()
    other = pod("elsewhere", 0, unschedulable="x")
    other["metadata"]["namespace"] = "team-b"
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    _dump(snapshot, *pods, other, name="pods.json")
    _dump(snapshot, *nodes, name="nodes.json")
    _dump(snapshot, *events, name="events.json")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"}}
    _dump(snapshot, deployment, name="deployments.json")
    (snapshot / "SNAPSHOT.md").write_text("# snapshot\n")
    result = CliRunner().invoke(app, ["startup", str(snapshot), "-n", "ml", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [p["name"] for p in written["pods"]] == ["ml/train-0"]


def test_a_node_a_watch_saw_start_counts_in_its_groups_chain_even_if_made_before_the_first_pod() -> None:
    """The chain is over nodes that started in the measured window: created after time 0, or seen
    turning Ready by a watch (a first transition, which the objects do not keep)."""
    pods = [pod("late", 100, on="early", scheduled=101, started=102, ready=103)]
    nodes = [node("early", 40, 70), node("old", 10, 20)]
    observed = Observations(node_ready={"early": T0 + 70}, gpu_allocatable={"early": T0 + 75})
    chain = summary(measure(pods, nodes, [], observed))["startup"]["node_chain"]["a100"]
    assert chain["nodes"] == ["early"]
    assert (chain["join"]["max"], chain["devicePlugin"]["max"], chain["boot"]["count"]) == (30.0, 5.0, 0)
