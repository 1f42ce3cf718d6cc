"""cluster-autoscaler and the pending pods of a scheduler the run does not simulate (cluster-autoscaler
1.34.5, ``utils/kubernetes/listers.go``).

``UnschedulablePods`` lists every pod for which ``isUnschedulable`` holds: not bound (``spec.nodeName``),
not being deleted (``deletionTimestamp``), its ``PodScheduled`` condition ``False`` with reason
``Unschedulable``, whatever its ``schedulerName``. A dump's pod of another scheduler (``schedulerName:
other``, which no scheduler of the run serves) keeps the condition the dump shows (nothing in the run
writes it): with reason ``Unschedulable`` cluster-autoscaler lists it at every loop, scales up for it, and
once a node fits it ``FilterOutSchedulable`` packs it there in its snapshot (no second scale-up, and the
node, holding it in that snapshot, is not unneeded); with any other reason (``SchedulerError``,
``SchedulingGated``, a custom one) it is never listed. ``SchedulerUnprocessedPods``
(``--bypassed-scheduler-names``) lists a pod of a bypassed scheduler only without a condition or with one
without a reason: a dump's ``SchedulerError`` pod of a simulated scheduler waits for that scheduler's first
attempt (kube-scheduler retries it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import run_simulation, simulated, write
from gpufleet.cli import app
from gpufleet.model.scheduler_records import Recorded
from gpufleet.scheduling.messages import no_scheduler, not_simulated
from gpufleet.sim.simulation import Simulation

T0 = "2026-12-06T05:00:00Z"
FIT_ERROR = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."

NODE = f"""
apiVersion: v1
kind: Node
metadata:
  name: dump-1
  creationTimestamp: "2026-12-01T00:00:00Z"
status:
  capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
  conditions:
  - {{type: Ready, status: "True", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-01T00:01:00Z"}}
"""

POOL = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  max: 2
  gpu: {model: H100-80GB, count: 8}
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110"}
"""


def simulation(autoscaler: str = "", duration: str = "30m") -> str:
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: {duration}, autoscaler: {{{autoscaler}}}}}
"""


def gpu_pod(scheduler: str, reason: str | None, deleting: bool = False) -> str:
    """A pending 8-GPU pod of the dump, created 5 minutes before it, that no node of the dump fits, with a
    ``PodScheduled=False`` condition of ``reason`` (None: no condition); ``deleting``: being deleted."""
    condition = (
        ""
        if reason is None
        else f"""
  conditions:
  - type: PodScheduled
    status: "False"
    reason: {reason}
    message: "{FIT_ERROR}"
    lastTransitionTime: "{T0}\""""
    )
    deletion = '\n  deletionTimestamp: "2026-12-06T05:10:00Z"' if deleting else ""
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: default
  creationTimestamp: "2026-12-06T04:55:00Z"{deletion}
  annotations: {{gpufleet.io/duration: 1m}}
spec:
  schedulerName: {scheduler}
  restartPolicy: Never
  containers:
  - name: main
    image: main:1
    resources: {{limits: {{nvidia.com/gpu: 8}}}}
status:
  phase: Pending{condition}
"""


def events(sim: Simulation, kind: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e.t_s, e.nodes) for e in sim.autoscaler.events if e.kind == kind]


def test_another_scheduler_s_unschedulable_pod_triggers_a_scale_up_at_the_first_loop(tmp_path: Path) -> None:
    """``isUnschedulable`` does not ask which scheduler wrote the condition: the ``schedulerName: other`` pod,
    ``Unschedulable`` in the dump, is listed by the loop at 0 s, which grows the pool. Its condition stays the
    dump's (the run does not simulate ``other``), so every later loop lists it again; ``FilterOutSchedulable``
    packs it on the new node in its snapshot: no second scale-up, and the node, which holds it there, is not
    scaled down in 30 minutes. The pod stays Pending: gpufleet does not place a pod of a scheduler it does not
    run."""
    sim = run_simulation(write(tmp_path, simulation(), NODE, POOL, gpu_pod("other", "Unschedulable")))
    assert events(sim, "scale-up") == [(0.0, ("h100-0",))]
    assert events(sim, "scale-down") == []
    assert "h100-0" in sim.state.index
    assert [p.key for p in sim.unschedulable_pods()] == ["default/train"]
    rec = sim.records["default/train"]
    assert (rec.phase, rec.node, rec.reason) == ("Pending", None, None)
    assert rec.message == not_simulated("other", Recorded("", FIT_ERROR, None, "Unschedulable"))


@pytest.mark.parametrize("reason", ["SchedulerError", "SchedulingGated", "WaitingForQuota", None])
def test_another_scheduler_s_pod_without_reason_unschedulable_is_never_listed(
    tmp_path: Path, reason: str | None
) -> None:
    """``isUnschedulable`` wants reason ``Unschedulable``: the same pod with ``SchedulerError`` (its scheduler
    retries it), ``SchedulingGated``, a custom reason, or no condition at all, is never listed (without
    ``--bypassed-scheduler-names``): no scale-up. The dump's reason and message stay the pod's."""
    sim = run_simulation(write(tmp_path, simulation(), NODE, POOL, gpu_pod("other", reason)))
    assert events(sim, "scale-up") == []
    assert sim.unschedulable_pods() == []
    rec = sim.records["default/train"]
    assert rec.reason == reason
    expected = (
        no_scheduler("other")
        if reason is None
        else not_simulated("other", Recorded("", FIT_ERROR, None, reason))
    )
    assert rec.message == expected


def test_another_scheduler_s_unschedulable_pod_being_deleted_is_not_listed(tmp_path: Path) -> None:
    """``isUnschedulable``: a pod with a ``deletionTimestamp`` (``isDeleted``) is not listed, whatever its
    condition: no scale-up."""
    sim = run_simulation(write(tmp_path, simulation(), NODE, POOL, gpu_pod("other", "Unschedulable", True)))
    assert events(sim, "scale-up") == []


@pytest.mark.parametrize(("node", "scale_up"), [("dump-1", []), ("gone", [(0.0, ("h100-0",))])])
def test_another_scheduler_s_unschedulable_pod_nominated_to_a_node_waits_there(
    tmp_path: Path, node: str, scale_up: list[tuple[float, tuple[str, ...]]]
) -> None:
    """``isUnschedulable`` ignores ``status.nominatedNodeName``: the pod is listed, then
    ``FilterOutExpendableAndSplit`` (``core/utils/expendable.go``) keeps a pod nominated to a node the
    cluster has off scale-up (it waits for the preemption there, ``addPreemptingPodsToSnapshot``);
    nominated to a node that is gone, it stays a candidate: the loop at 0 s scales up. The dump's
    nomination stays: no scheduler of the run would change it."""
    pod = gpu_pod("other", "Unschedulable").replace(
        "  phase: Pending", f"  phase: Pending\n  nominatedNodeName: {node}"
    )
    sim = run_simulation(write(tmp_path, simulation(), NODE, POOL, pod))
    assert events(sim, "scale-up") == scale_up
    assert sim.nominated_nodes() == {"default/train": node}


def test_a_simulated_scheduler_s_scheduler_error_pod_waits_for_that_scheduler_s_attempt(
    tmp_path: Path,
) -> None:
    """``SchedulerUnprocessedPods`` (``--bypassed-scheduler-names: default-scheduler``) takes a pod with no
    ``PodScheduled`` condition or one without a reason: the dump's ``SchedulerError`` pod is in neither list
    at the loop at 0 s (nor is it ``Unschedulable``). The run's kube-scheduler retries it at 0 s and finds it
    ``Unschedulable``; the loop at 10 s scales up. Without a condition it is unprocessed: the loop at 0 s
    scales up."""
    knobs = "bypassedSchedulerNames: [default-scheduler]"
    errored = run_simulation(
        write(tmp_path, simulation(knobs), NODE, POOL, gpu_pod("default-scheduler", "SchedulerError"))
    )
    assert events(errored, "scale-up") == [(10.0, ("h100-0",))]
    fresh = run_simulation(write(tmp_path, simulation(knobs), NODE, POOL, gpu_pod("default-scheduler", None)))
    assert events(fresh, "scale-up") == [(0.0, ("h100-0",))]


def test_a_simulated_scheduler_s_scheduler_error_pod_that_fits_is_bound_and_the_dump_s_reason_goes(
    tmp_path: Path,
) -> None:
    """kube-scheduler retries a ``SchedulerError`` pod; the dump's reason and message are the pod's until
    then. A 1-cpu pod that the dump's node fits is bound there at 0 s: its ``PodScheduled`` condition is True,
    no reason or message left (``bindingCycle``); the summary says Running, not SchedulerError."""
    pod = gpu_pod("default-scheduler", "SchedulerError").replace("nvidia.com/gpu: 8", 'cpu: "1", memory: 1Gi')
    sim = run_simulation(write(tmp_path, simulation(duration="20s"), NODE, POOL, pod))
    rec = sim.records["default/train"]
    assert (rec.node, rec.bound_s, rec.reason, rec.message) == ("dump-1", 0.0, None, None)
    assert events(sim, "scale-up") == []


@pytest.mark.parametrize(("reason", "scale_up"), [(None, [(0.0, ("h100-0",))]), ("SchedulerError", [])])
def test_bypassed_scheduler_names_list_another_scheduler_s_pod_only_without_a_reason(
    tmp_path: Path, reason: str | None, scale_up: list[tuple[float, tuple[str, ...]]]
) -> None:
    """``--bypassed-scheduler-names: other``: ``SchedulerUnprocessedPods`` lists the pod of ``other`` that has
    no ``PodScheduled`` condition (a scale-up at 0 s), not one whose condition has reason
    ``SchedulerError``."""
    knobs = "bypassedSchedulerNames: [other]"
    sim = run_simulation(write(tmp_path, simulation(knobs), NODE, POOL, gpu_pod("other", reason)))
    assert events(sim, "scale-up") == scale_up


def test_bypassed_scheduler_names_keep_listing_another_scheduler_s_unschedulable_pod_once(
    tmp_path: Path,
) -> None:
    """With ``other`` bypassed, its ``Unschedulable`` pod is listed once, as unschedulable
    (``SchedulerUnprocessedPods`` leaves out what ``isUnschedulable`` takes): one scale-up, at 0 s."""
    knobs = "bypassedSchedulerNames: [other]"
    sim = run_simulation(write(tmp_path, simulation(knobs), NODE, POOL, gpu_pod("other", "Unschedulable")))
    assert events(sim, "scale-up") == [(0.0, ("h100-0",))]
    assert [p.key for p in sim.scheduler_unprocessed_pods(frozenset({"other"}))] == []


def test_the_summary_and_describe_say_the_scheduler_is_not_simulated(tmp_path: Path) -> None:
    """The pod's record in ``summary.json`` carries the dump's condition in gpufleet's words: its scheduler is
    not simulated, cluster-autoscaler lists it, and gpufleet cannot say whether that scheduler would place
    it on the node added for it; ``describe pod`` shows that message."""
    paths = write(tmp_path, simulation(duration="5m"), NODE, POOL, gpu_pod("other", "Unschedulable"))
    (pod,) = simulated(paths)["pods"]
    assert pod["phase"] == "Pending"
    assert pod["message"].startswith(
        'scheduler "other" is not simulated: the pod keeps its dump\'s PodScheduled'
    )
    result = CliRunner().invoke(app, ["describe", "pod", "train", *map(str, paths)])
    assert result.exit_code == 0, result.output
    assert 'scheduler "other" is not simulated' in " ".join(result.output.split())


def test_a_whatif_shows_another_scheduler_s_pod_pending_with_gpufleet_s_reservation(tmp_path: Path) -> None:
    """``gpufleet whatif``: on both sides cluster-autoscaler grows the pool at 0 s for the ``other`` pod; the
    pod's outcome is pending with the statement that gpufleet cannot say whether ``other`` would place it on
    the new node, never a placement."""
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "dump.yaml").write_text(
        "---".join((simulation(duration="5m"), NODE, POOL, gpu_pod("other", "Unschedulable")))
    )
    change = tmp_path / "change.yaml"
    change.write_text(POOL.replace("max: 2", "max: 3"))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["whatif", str(snap), str(change), "--out", str(out)])
    assert result.exit_code == 0, result.output
    expected = not_simulated("other", Recorded("", FIT_ERROR, None, "Unschedulable"))
    for side in ("baseline", "changed"):
        summary = json.loads((out / side / "summary.json").read_text())
        assert [(e["t_s"], e["kind"]) for e in summary["autoscaler_events"]] == [(0.0, "scale-up")]
        (pod,) = summary["pods"]
        assert (pod["phase"], pod["node"], pod["message"]) == ("Pending", None, expected)


def test_explain_gives_no_verdict_on_a_scheduler_gpufleet_does_not_run(tmp_path: Path) -> None:
    """``gpufleet explain``: the ``other`` pod's recorded condition is its scheduler's, not kube-scheduler's;
    gpufleet says it cannot judge that scheduler and whether cluster-autoscaler lists the pod
    (``isUnschedulable``), and gives no verdict on the recorded message."""
    paths = write(tmp_path, NODE, gpu_pod("other", "Unschedulable"))
    result = CliRunner().invoke(app, ["explain", *map(str, paths), "-o", "json"])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.output)
    assert entry["scheduler_simulated"] is False
    assert entry["verdict"] is None and entry["schedulable_now"] is None
    assert entry["message"] == not_simulated("other", Recorded("", FIT_ERROR, None, "Unschedulable"))
    text = CliRunner().invoke(app, ["explain", *map(str, paths)])
    lines = " ".join(text.output.split())
    assert f'scheduler "other", PodScheduled=False (Unschedulable): {FIT_ERROR}' in lines
    assert "kube-scheduler" not in lines
    assert "cannot say whether that scheduler would place the pod" in lines
