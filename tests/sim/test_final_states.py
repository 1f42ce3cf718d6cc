"""Each pod's final state (``model.final_states``): what became of it in the words users recognise, one
reason per test from a small scenario; only a real failure counts in ``pods_failed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import NODE_N0, pods_by_name, simulated, simulated_text
from gpufleet.model.final_states import final_state
from gpufleet.report import summary_table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(path: str) -> dict[str, Any]:
    return simulated([EXAMPLES / path])


def pods_row(summary: dict[str, Any]) -> str:
    console = Console(record=True, width=300)
    console.print(summary_table(summary))
    (row,) = [line for line in console.export_text().splitlines() if line.startswith("│ pods ")]
    return row.split("│")[2].strip()


def assert_counted_once(summary: dict[str, Any]) -> None:
    """Every pod record has a final state, and the totals count each record once."""
    records = summary["pods"]
    counts: dict[str, int] = {}
    for pod in records:
        counts[pod["final_state"]] = counts.get(pod["final_state"], 0) + 1
    assert summary["totals"]["final_states"] == counts
    assert summary["totals"]["pods_failed"] == counts.get("Failed", 0)


def test_pods_an_hpa_scales_down_are_scaled_down_not_failed() -> None:
    summary = example("seed-003/hpa-cold-nodes.yaml")
    pods = pods_by_name(summary)
    assert (pods["ai-inference-10"]["phase"], pods["ai-inference-10"]["final_state"]) == (
        "Failed",
        "ScaledDown",
    )
    assert pods["ai-inference-17"]["phase"] == "Pending"  # deleted before it was bound
    assert pods["ai-inference-17"]["final_state"] == "ScaledDown"
    # (each scale-up 30 s later than without cluster-autoscaler's wait for new GPU pods, allPodsAreNew: the
    # HPA makes fewer pods; it scales 18 -> 9 after the first surge, back to 18 in the second, then to 5)
    assert summary["totals"]["final_states"] == {"Running": 5, "ScaledDown": 22}
    assert summary["totals"]["pods_failed"] == 0
    assert pods_row(summary) == "pending 0 · running 5 · succeeded 0 · scaled down 22 · failed 0"
    assert_counted_once(summary)


def test_a_job_kueue_evicts_is_suspended_and_its_pod_runs_again() -> None:
    summary = example("kueue/cohort-reclaim.yaml")
    pods = pods_by_name(summary, namespaced=True)
    victim, again = pods["team-b/b-borrower-0"], pods["team-b/b-borrower-0-r1"]
    assert (victim["reason"], victim["final_state"]) == ("Suspended", "Suspended")
    assert again["final_state"] == "Succeeded"
    assert summary["totals"]["final_states"] == {"Succeeded": 3, "Suspended": 1}
    assert "suspended 1 · failed 0" in pods_row(summary)
    assert_counted_once(summary)


def test_pods_drained_for_a_mig_change_are_evicted() -> None:
    summary = example("gpu-sharing/mig-reconfigure.yaml")
    (change,) = summary["mig_reconfigurations"]
    pods = pods_by_name(summary, namespaced=True)
    assert {pods[key]["final_state"] for key in change["evicted"]} == {"Evicted"}
    assert summary["totals"]["final_states"]["Evicted"] == len(change["evicted"]) == 4
    assert summary["totals"]["pods_failed"] == 0
    assert "evicted 4 · failed 0" in pods_row(summary)


def test_a_lower_priority_pod_the_scheduler_evicts_is_preempted() -> None:
    summary = example("priority/preemption.yaml")
    pods = pods_by_name(summary)
    assert pods["batch-0"]["final_state"] == "Preempted"
    assert pods["batch-0-r1"]["final_state"] == "Running"  # its Job made it again
    assert summary["totals"]["final_states"] == {"Running": 1, "Succeeded": 1, "Preempted": 1}
    assert pods_row(summary) == "pending 0 · running 1 · succeeded 1 · preempted 1 · failed 0"


def test_cuda_out_of_memory_with_restart_policy_never_is_oom_killed_not_failed() -> None:
    summary = example("gpu-sharing/time-slicing-oom.yaml")
    pods = pods_by_name(summary)
    assert (pods["infer-b"]["phase"], pods["infer-b"]["final_state"]) == ("Failed", "OOMKilled")
    assert summary["totals"]["final_states"] == {"Succeeded": 1, "OOMKilled": 1}
    assert summary["totals"]["pods_failed"] == 0
    assert pods_row(summary) == "pending 0 · running 0 · succeeded 1 · OOMKilled 1 · failed 0"


def bare_pod(name: str, gpus: int, annotations: str = "", spec: str = "") -> str:
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{{annotations}}}
spec:
{spec}  containers:
  - name: main
    image: x
    resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


def test_a_pod_the_kubelet_rejects_is_the_one_real_failure(tmp_path: Path) -> None:
    text = NODE_N0 + bare_pod("too-big", 16, spec="  nodeName: n0\n") + bare_pod("fits", 8)
    summary = simulated_text(
        tmp_path,
        text + "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\n"
        "metadata: {name: s}\nspec: {duration: 10m}\n",
    )
    pods = pods_by_name(summary)
    assert (pods["too-big"]["reason"], pods["too-big"]["final_state"]) == ("OutOfnvidia.com/gpu", "Failed")
    assert pods["fits"]["final_state"] == "Running"
    assert summary["totals"]["final_states"] == {"Running": 1, "Failed": 1}
    assert summary["totals"]["pods_failed"] == 1
    assert pods_row(summary) == "pending 0 · running 1 · succeeded 0 · failed 1"


def test_a_pod_deleted_at_its_delete_at_time_is_deleted(tmp_path: Path) -> None:
    text = NODE_N0 + bare_pod("short-lived", 8, "gpufleet.io/delete-at: 5m") + bare_pod("waiting", 8)
    summary = simulated_text(tmp_path, text)
    pods = pods_by_name(summary)
    # deleted at 5m, gone after its 30 s grace period
    assert (pods["short-lived"]["final_state"], pods["short-lived"]["deleted_s"]) == ("Deleted", 330.0)
    assert pods["waiting"]["final_state"] == "Running"  # bound once the GPUs were free
    assert_counted_once(summary)


@pytest.mark.parametrize(
    ("phase", "reason", "deleted", "state"),
    [
        ("Succeeded", "Completed", False, "Succeeded"),
        ("Running", "CrashLoopBackOff", False, "Running"),  # restarting, still there
        ("Pending", "SchedulingGated", False, "Pending"),
        ("Pending", "ScaledDown", True, "ScaledDown"),  # deleted before it was bound
        ("Failed", "NodeDeleted", True, "Evicted"),  # its node went away (PodGC)
        ("Failed", "RecreateGroup", True, "Deleted"),  # a LeaderWorkerSet recreating the group
        ("Pending", None, True, "Deleted"),
        ("Failed", "OutOfnvidia.com/gpu", False, "Failed"),
        ("Failed", None, False, "Failed"),  # a snapshot's failed pod
        ("Failed", "Error", True, "Failed"),  # a real cluster's container that exited non-zero
    ],
)
def test_final_state_of_phase_and_reason(phase: str, reason: str | None, deleted: bool, state: str) -> None:
    assert final_state(phase, reason, deleted) == state
