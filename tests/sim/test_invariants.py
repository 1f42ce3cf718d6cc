"""The invariants of ``gpufleet simulate --check-invariants`` (``sim.invariants``): they hold over the
examples, and each one, broken on purpose in a run's state, names itself, the object and the time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import invariants_checked
from gpufleet import cli
from gpufleet.kube import load_scenario
from gpufleet.model.gpu_share import MILLI
from gpufleet.sim import invariants
from gpufleet.sim.invariants import InvariantViolation, Progress
from gpufleet.sim.simulation import Simulation
from gpufleet.workloads.replicas import KeepsReplicas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GPU = "nvidia.com/gpu"


def checked(example: str, duration_s: float | None = None) -> Simulation:
    """The example run with every invariant checked after every event."""
    scenario = load_scenario([EXAMPLES / example])
    if duration_s is not None:
        scenario = replace(scenario, simulation=replace(scenario.simulation, duration_s=duration_s))
    return invariants_checked(scenario)


def violation(check: object, *args: object) -> InvariantViolation:
    with pytest.raises(InvariantViolation) as caught:
        check(*args)  # type: ignore[operator]
    return caught.value


@pytest.mark.parametrize(
    "example",
    [
        "seed-004/coscheduling.yaml",
        "seed-003/hpa-warm-nodes.yaml",
        "gpu-sharing/fractions.yaml",
        "gpu-sharing/mig-reconfigure.yaml",
        "dra/claim-h100.yaml",
        "priority/gang-preemption.yaml",
        "kueue/cohort-reclaim.yaml",
        "kueue/fair-sharing.yaml",
        "kueue/wait-for-pods-ready.yaml",
        "kueue/provisioning-admission-check.yaml",
        "serving/bounded-queue.yaml",
        "serving/lws-hpa.yaml",
        "serving/statefulset-hpa.yaml",
        "training/raycluster-autoscaling.yaml",
        "seed-001",
    ],
)
def test_examples_keep_every_invariant_after_every_event(example: str) -> None:
    sim = checked(example)
    assert sim.invariants is not None and sim.invariants.events == sim.loop.steps


def test_requests_beyond_a_nodes_allocatable_name_the_node_and_resource() -> None:
    sim = checked("seed-004/coscheduling.yaml")
    state = sim.state
    col = state.res_index[GPU]
    state.requested[0, col] = state.alloc[0, col] + 1
    broken = violation(invariants.resources_within_allocatable, sim)
    assert (broken.invariant, broken.subject) == (
        "resources-within-allocatable",
        f"node {state.nodes[0].name}",
    )
    assert broken.at_s == sim.loop.now and GPU in broken.detail


def test_a_device_held_by_a_pod_not_on_its_node_is_reported() -> None:
    sim = checked("seed-004/coscheduling.yaml")
    name, devices = next((n, d) for n, d in sorted(sim.ledger.nodes.items()) if d.units.get(GPU))
    devices.taken[devices.units[GPU][0].id] = "default/ghost"
    broken = violation(invariants.devices_held_once, sim)
    assert (broken.invariant, broken.subject) == ("devices-held-once", f"node {name}")
    assert "default/ghost" in broken.detail


def test_fractions_beyond_a_shared_gpu_are_reported() -> None:
    sim = checked("gpu-sharing/fractions.yaml", duration_s=60.0)
    shares = sim.state.shares
    assert shares is not None and shares.placed
    key = sorted(shares.placed)[0]
    shares.placed[key] = [replace(p, compute=MILLI + 1) for p in shares.placed[key]]
    broken = violation(invariants.devices_held_once, sim)
    assert broken.invariant == "devices-held-once" and "compute" in broken.detail


def test_a_pod_that_ended_but_holds_its_node_is_in_two_states() -> None:
    sim = checked("seed-004/coscheduling.yaml")
    key = sorted(sim.state.assignments)[0]
    sim.records[key].phase = "Succeeded"
    broken = violation(invariants.one_state_per_pod, sim)
    assert (broken.invariant, broken.subject) == ("one-state-per-pod", f"pod {key}")


def test_a_pod_counted_pending_twice_is_reported() -> None:
    sim = checked("seed-004/coscheduling.yaml")
    sim.lifecycle.pending += 1
    broken = violation(invariants.one_state_per_pod, sim)
    assert broken.subject == "the run's pods" and "Pending" in broken.detail


def test_a_gang_computing_below_min_member_is_partly_running() -> None:
    sim = checked("priority/gang-preemption.yaml", duration_s=1200.0)  # the gang computes from 11m
    key = "default/train"
    assert any(sim.records[m].working for m in sim.gangs.members[key])
    sim.gangs.groups[key] = replace(sim.gangs.groups[key], min_member=len(sim.gangs.members[key]) + 1)
    broken = violation(invariants.gangs_whole, sim)
    assert (broken.invariant, broken.subject) == ("gang-whole", f"PodGroup {key}")


def test_checkpointed_progress_that_falls_is_lost() -> None:
    sim = checked("seed-004/coscheduling.yaml")
    seen: dict[str, Progress] = {}
    invariants.checkpoints_kept(sim, seen)
    key = sorted(sim.records)[0]
    seen[key] = replace(seen[key], done_s=sim.records[key].done_s + 60.0)
    broken = violation(invariants.checkpoints_kept, sim, seen)
    assert (broken.invariant, broken.subject) == ("checkpoint-kept", f"pod {key}")


#: one replica spec of the PyTorchJob below: 40 min of training on a GPU, checkpointed every 10 min
PYTORCH_REPLICA = """
    {role}:
      replicas: 1
      template:
        metadata:
          annotations: {{gpufleet.io/duration: 40m, gpufleet.io/checkpoint-interval: 10m}}
        spec:
          containers:
          - {{name: pytorch, image: trainer, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}"""
PYTORCHJOB_LOSES_A_WORKER = f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: pool}}
spec:
  replicas: 3
  gpu: {{model: A100-80GB, count: 1}}
  template:
    status:
      capacity: {{cpu: "64", memory: 512Gi, pods: "110"}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: pt}}
spec:
  runPolicy: {{backoffLimit: 2}}
  pytorchReplicaSpecs:{"".join(PYTORCH_REPLICA.format(role=role) for role in ("Master", "Worker"))}
---
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: faults}}
spec:
  faults: [{{at: 15m, node: pool-1, gpu: 0, kind: xid-79}}]
---
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{duration: 2h}}
"""


def test_a_pod_made_again_under_its_name_counts_its_own_work_lost(tmp_path: Path) -> None:
    """The training operator makes a failed replica again under its name (``pt-worker-0``): the work the
    failed pod lost stays with it (``PodLifecycle.replaced``, in the run's total), the new pod's count
    starts at 0 and it resumes from the checkpoint, so ``checkpoint-kept`` holds through the
    replacement."""
    path = tmp_path / "pytorchjob.yaml"
    path.write_text(PYTORCHJOB_LOSES_A_WORKER)
    sim = invariants_checked(load_scenario([path]))
    ((old),) = sim.lifecycle.replaced
    new = sim.records["default/pt-worker-0"]
    assert (old.pod.key, old.phase, old.done_s, old.work_lost_gpu_s) == (
        "default/pt-worker-0",
        "Failed",
        600,
        300,
    )
    assert (new.phase, new.done_s, new.work_lost_gpu_s) == ("Succeeded", 2400, 0)
    assert sim.work_lost_gpu_s == 600  # the worker's 300 s since its checkpoint, and the master's wait


def test_a_work_item_whose_checkpointed_progress_falls_is_reported() -> None:
    # (items in progress, Jobs running; their nodes asked for at 30 s: allPodsAreNew waits for new GPU pods)
    sim = checked("seed-001", duration_s=270.0)
    ((name, work),) = sim.lifecycle.work_lists.items()
    item = next(iter(work.in_progress.values()))
    seen = {(name, item.id): 7200.0}
    broken = violation(invariants.items_keep_progress, sim, seen)
    assert (broken.invariant, broken.subject) == ("checkpoint-kept", f"work item {item.id} of list {name}")


def test_replicas_an_hpa_set_beyond_its_max_are_reported() -> None:
    sim = checked("seed-003/hpa-warm-nodes.yaml")
    (hpa,) = sim.workload_autoscalers.hpas
    seen: dict[str, int] = {}
    invariants.replicas_within_bounds(sim, seen)
    controller = sim.scale_target(hpa.target)
    assert isinstance(controller, KeepsReplicas)
    controller.replicas = hpa.hpa.spec.max_replicas + 1
    broken = violation(invariants.replicas_within_bounds, sim, seen)
    assert (broken.invariant, broken.subject) == ("replicas-within-bounds", hpa.target)


def test_a_cost_the_nodes_do_not_add_up_to_is_reported() -> None:
    sim = checked("seed-003/hpa-warm-nodes.yaml")
    first = sorted(sim.nodes)[0]
    sim.nodes[first].created_s += 600.0
    broken = violation(invariants.metering_adds_up, sim)
    assert (broken.invariant, broken.subject) == ("metering-adds-up", "the run's cost")


def test_kueue_usage_beyond_the_cohorts_quota_is_reported() -> None:
    sim = checked("kueue/fair-sharing.yaml", duration_s=1200.0)  # team-a and team-b hold all 24 GPUs
    invariants.kueue_within_quota(sim)
    wl = next(w for _, w in sorted(sim.kueue.workloads.items()) if w.admitted is not None)
    assert wl.admitted is not None
    queue = wl.admitted.workload.cluster_queue
    usage = {fr: v + 8 for fr, v in wl.admitted.usage.items()}
    wl.admitted = replace(wl.admitted, usage=usage)
    broken = violation(invariants.kueue_within_quota, sim)
    assert (broken.invariant, broken.subject) == ("kueue-within-quota", f"ClusterQueue {queue}")
    assert "summary" in broken.detail  # its usage steps no longer end at what its workloads hold
    sim.kueue._usage_changed(queue)
    broken = violation(invariants.kueue_within_quota, sim)
    assert (broken.invariant, broken.subject) == ("kueue-within-quota", "cohort research")
    assert "above the tree's nominal quota 24" in broken.detail


def test_a_kueue_pod_off_its_flavors_nodes_is_reported() -> None:
    sim = checked("kueue/fair-sharing.yaml", duration_s=1200.0)
    flavors = sim.kueue.objects.flavors
    flavors["h100"] = replace(flavors["h100"], node_labels={"nvidia.com/gpu.product": "NVIDIA-B200"})
    broken = violation(invariants.kueue_pods_on_flavors, sim)
    assert broken.invariant == "kueue-pods-on-flavors" and "of pod set main" in broken.detail


def test_simulate_check_invariants_says_they_held(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli.app, ["simulate", "--check-invariants", "--no-progress", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "invariants held after each of 28 events" in result.output


def test_a_violation_stops_simulate_with_one_line_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(sim: Simulation, *_: object) -> None:
        if sim.loop.now >= 10:
            raise InvariantViolation("gang-whole", "PodGroup default/t16", 10.0, "1 of 2 run")

    monkeypatch.setattr(invariants, "gangs_whole", broken)
    result = CliRunner().invoke(
        cli.app, ["simulate", "--check-invariants", "--no-progress", "--out", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "invariant gang-whole violated by PodGroup default/t16 at 10 s (10 s): 1 of 2 run"
    )
    assert "Traceback" not in result.output and not (tmp_path / "summary.json").exists()
