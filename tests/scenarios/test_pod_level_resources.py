"""examples/scheduling/pod-level-resources.yaml: a pod's own ``spec.resources`` request counts in place
of its containers' sum (``resourcehelper.PodRequests``, ``PodLevelResources`` on in Kubernetes 1.34),
and pod-level limits default the request (``defaultPodRequests``). The fidelity suite holds the same
file against the real kube-scheduler."""

from __future__ import annotations

from pathlib import Path

from conftest import pods_by_name, simulated

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scheduling" / "pod-level-resources.yaml"


def test_the_pod_level_request_leaves_no_room_for_a_pod_the_container_sums_would_fit() -> None:
    pods = pods_by_name(simulated([EXAMPLE], duration_s=300.0))
    assert (pods["trainer"]["node"], pods["eval"]["node"]) == ("node-a", "node-a")
    loader = pods["loader"]
    assert (loader["phase"], loader["node"]) == ("Pending", None)
    assert loader["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    )
