"""Gang-aware, PodDisruptionBudget-aware preemption end to end (examples/priority/gang-preemption.yaml):
kube-scheduler 1.34 ``pickOneNodeForPreemption`` (fewest PDB violations first), victims' graceful
termination, ``PodEligibleToPreemptOthers`` while they terminate, and Volcano/KAI whole-gang
preemption."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import pods_by_name, simulated

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "priority" / "gang-preemption.yaml"
WAITING = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
    "no new claims to deallocate, preemption: not eligible due to a terminating pod on the nominated node."
)


def run(duration_s: float | None = None) -> dict[str, dict[str, Any]]:
    return pods_by_name(simulated([EXAMPLE], seed=0, duration_s=duration_s))


def test_the_gang_preempts_both_batch_pods_and_spares_the_pdb_protected_replica() -> None:
    pods = run()
    serve = pods["serve-0"]
    assert serve["phase"] == "Running" and serve["node"] == "gpu-0" and serve["disruptions"] == []
    for name, node in (("batch-0", "gpu-1"), ("batch-1", "gpu-2")):
        victim = pods[name]
        assert (victim["node"], victim["phase"], victim["reason"]) == (node, "Failed", "Preempted")
        assert victim["disruptions"] == [60.0]
        assert victim["deleted_s"] == 660.0  # terminationGracePeriodSeconds 600
    # the gang binds only once its victims are gone, each member on the node it was nominated to
    assert (pods["train-0"]["node"], pods["train-0"]["bound_s"]) == ("gpu-1", 660.0)
    assert (pods["train-1"]["node"], pods["train-1"]["bound_s"]) == ("gpu-2", 660.0)
    # the Job replaces its preempted pods after the pod failure backoff from the preemption, while they
    # terminate (podReplacementPolicy TerminatingOrFailed, the default): both count as failures at 60 s
    # (isPodFailed), 10 s doubled once (DefaultJobPodFailureBackOff, getRemainingTime)
    assert pods["batch-0-r1"]["created_s"] == 80.0 and pods["batch-0-r1"]["bound_s"] == 2460.0


def test_nominated_gang_members_wait_while_their_victims_terminate() -> None:
    """Retried at 360 s (the unschedulable pods' 5-minute flush), each member finds lower-priority
    pods terminating on its nominated node and preempts nothing more."""
    pods = run(duration_s=400.0)
    for name in ("train-0", "train-1"):
        assert pods[name]["phase"] == "Pending"
        assert pods[name]["message"] == WAITING
    assert pods["serve-0"]["disruptions"] == []
    assert pods["batch-0"]["phase"] == "Running" and pods["batch-1"]["phase"] == "Running"
