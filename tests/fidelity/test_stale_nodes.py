"""A case kube-scheduler decided on stale nodes is told apart (``e2e.fidelity.real.decided_on_stale_nodes``):
its FailedScheduling messages count more nodes with untolerated taints than the case has tainted nodes, which
only a new node's ``node.kubernetes.io/not-ready`` taint, still in kube-scheduler's cache, explains."""

from __future__ import annotations

from typing import Any

from e2e.fidelity.real import FinalPod, RealRun, RealStep, decided_on_stale_nodes


def node(name: str, taints: int = 0, unschedulable: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": [{"key": f"k{i}", "effect": "NoSchedule"} for i in range(taints)]}
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name}, "spec": spec}


def run(message: str | None, final: str | None = None) -> RealRun:
    step = RealStep("default/p", {}, {}, event_message=message, condition_message=message)
    return RealRun([step], {"default/p": FinalPod(None, final, final)})


def test_more_tainted_nodes_in_a_message_than_the_case_has_is_a_stale_view() -> None:
    nodes = [node("a"), node("b", taints=1)]
    stale = "0/2 nodes are available: 2 node(s) had untolerated taint(s). preemption: ..."
    assert decided_on_stale_nodes(nodes, run(stale))
    assert decided_on_stale_nodes(nodes, run(None, final=stale))


def test_a_message_within_the_cases_tainted_nodes_is_not() -> None:
    nodes = [node("a"), node("b", taints=2), node("c", unschedulable=True)]
    fair = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)."
    assert not decided_on_stale_nodes(nodes, run(fair))
    assert not decided_on_stale_nodes(nodes, run(None))
    assert not decided_on_stale_nodes([node("a")], run("0/1 nodes are available: 1 Insufficient cpu."))
