"""``explain`` on a dump with NotReady nodes (``kube.explain_readiness``): a pending pod kept off NotReady
nodes by the node lifecycle controller's taints names them with their Ready condition; where
cluster-autoscaler would be halted (more Unready nodes than ``--ok-total-unready-count``, 3, and than
``--max-total-unready-percentage``, 45 %, of the registered ones: ``clusterstate.IsClusterHealthy``,
cluster-autoscaler 1.34), a pending pod's diagnosis says so, as ``describe pod`` does in a simulation."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from gpufleet.kube import load_scenario
from gpufleet.kube.explain import explain_scenario, render_explanations

T0 = "2026-12-06T05:00:00Z"


def node(name: str, ready: str, created: str = "2026-12-06T03:00:00Z", taint: str | None = None) -> str:
    taints = f"[{{key: {taint}, effect: NoSchedule}}]" if taint else "[]"
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}, creationTimestamp: "{created}"}}
spec: {{taints: {taints}}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
  conditions:
  - {{type: Ready, status: "{ready}", lastHeartbeatTime: "{T0}", lastTransitionTime: "2026-12-06T04:30:00Z"}}
"""


def pod(name: str, node_name: str | None = None, tolerations: str = "[]") -> str:
    bound = f"nodeName: {node_name}" if node_name else "schedulerName: default-scheduler"
    phase = "Running" if node_name else "Pending"
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  {bound}
  tolerations: {tolerations}
  containers:
  - name: c
    image: registry.example.com/train:v1
    resources:
      limits: {{nvidia.com/gpu: 8}}
status: {{phase: {phase}}}
"""


def explained(tmp_path: Path, *documents: str) -> list[dict[str, Any]]:
    path = tmp_path / "dump.yaml"
    path.write_text("\n---\n".join(documents))
    return explain_scenario(load_scenario([path]))


UNREACHABLE = "node.kubernetes.io/unreachable"
DOWN = [node(f"dump-{k}", "Unknown", taint=UNREACHABLE) for k in range(4)]
BUSY = [node("dump-4", "True"), node("dump-5", "True"), pod("a", "dump-4"), pod("b", "dump-5")]
NAMED = (
    "NotReady nodes it cannot use: "
    + ", ".join(f"dump-{k} (Ready=Unknown since 2026-12-06T04:30:00Z; {UNREACHABLE})" for k in range(4))
    + ": the node lifecycle controller's taint keeps kube-scheduler off them until their kubelet reports "
    "Ready"
)
HALTED = (
    "cluster-autoscaler is halted at the dump's time, where it runs (Cluster is not ready for autoscaling): "
    "Health: Unhealthy (ready=2 unready=4 notStarted=0 registered=6); more than 3 nodes "
    "(--ok-total-unready-count) and more than 45% of the 6 nodes (--max-total-unready-percentage) are "
    "Unready: it scales no node group up or down until fewer are"
)


def test_a_pending_pod_names_the_not_ready_nodes_and_the_halted_autoscaler(tmp_path: Path) -> None:
    (record,) = explained(tmp_path, *DOWN, *BUSY, pod("train"))
    assert record["pod"] == "default/train" and record["schedulable_now"] is None
    assert record["diagnosis"]["hints"][-2:] == [NAMED, HALTED]
    out = io.StringIO()
    render_explanations([record], Console(file=out, width=400))
    said = " ".join(out.getvalue().split())
    assert f"- {NAMED} - {HALTED}" in said


def test_nodes_registered_within_fifteen_minutes_do_not_halt_it(tmp_path: Path) -> None:
    """``NotStarted``, not ``Unready``, within ``MaxNodeStartupTime`` of their ``creationTimestamp``
    (04:50, ten minutes before the dump's time): named, but cluster-autoscaler is not halted."""
    recent = [node(f"dump-{k}", "Unknown", "2026-12-06T04:50:00Z", UNREACHABLE) for k in range(4)]
    (record,) = explained(tmp_path, *recent, *BUSY, pod("train"))
    assert record["diagnosis"]["hints"][-1] == NAMED


def test_three_unready_nodes_do_not_halt_it(tmp_path: Path) -> None:
    """Not more than ``--ok-total-unready-count`` (3)."""
    (record,) = explained(tmp_path, *DOWN[:3], *BUSY, pod("train"))
    hints = record["diagnosis"]["hints"]
    assert not any(h.startswith("cluster-autoscaler") for h in hints)
    assert hints[-1].startswith("NotReady nodes it cannot use: dump-0 (Ready=Unknown")


def test_a_pod_that_tolerates_the_taint_names_no_node(tmp_path: Path) -> None:
    """A pod tolerating ``unreachable`` is not kept off by it (here it would be placed): nothing said."""
    tolerates = f"[{{key: {UNREACHABLE}, operator: Exists}}]"
    (record,) = explained(tmp_path, *DOWN[:1], *BUSY, pod("train", tolerations=tolerates))
    assert record["schedulable_now"] == "dump-0"
    assert not any("NotReady" in h for h in record["diagnosis"]["hints"])


def test_a_not_ready_node_without_its_taint_is_named_with_the_taint_it_gets(tmp_path: Path) -> None:
    """Ready False without ``node.kubernetes.io/not-ready`` in the dump: explained as the lifecycle controller
    leaves it, tainted (before, gpufleet placed the pod on it)."""
    (record,) = explained(tmp_path, node("dump-0", "False"), pod("train"))
    assert record["schedulable_now"] is None
    assert record["diagnosis"]["hints"][-1] == (
        "NotReady nodes it cannot use: dump-0 (Ready=False since 2026-12-06T04:30:00Z; "
        "node.kubernetes.io/not-ready): the node lifecycle controller's taint keeps kube-scheduler off them "
        "until their kubelet reports Ready"
    )


def test_a_ready_node_that_still_has_the_not_ready_taint_is_named_ready_not_usable_yet(
    tmp_path: Path,
) -> None:
    """Ready ``True`` with ``node.kubernetes.io/not-ready`` still on it: the node lifecycle controller's
    ``doNoScheduleTaintingPass`` removes the taint once it sees the condition; kube-scheduler reads only
    the taint, so the pod is kept off, but the node is not NotReady."""
    nodes = [node("dump-0", "True", taint="node.kubernetes.io/not-ready"), node("dump-1", "False")]
    (record,) = explained(tmp_path, *nodes, pod("train"))
    hints = record["diagnosis"]["hints"]
    assert record["schedulable_now"] is None
    assert (
        hints[-2].startswith("NotReady nodes it cannot use: dump-1 (Ready=False")
        and "dump-0" not in hints[-2]
    )
    assert hints[-1] == (
        "Ready nodes it cannot use yet: dump-0 (Ready=True since 2026-12-06T04:30:00Z; "
        "node.kubernetes.io/not-ready): their kubelet reports Ready, and the node lifecycle controller takes "
        "the taint off at its next pass over the node"
    )
