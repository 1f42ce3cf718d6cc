"""``gpufleet whatif``'s ``addNodes``: a node cluster-autoscaler is deleting or may delete carries its taints
(``ToBeDeletedByClusterAutoscaler:NoSchedule``, ``DeletionCandidateOfClusterAutoscaler:PreferNoSchedule``);
the nodes made like it do not, as cluster-autoscaler drops them when it makes a template from a node
(``utils/taints/taints.go``, ``SanitizeTaints``, 1.34.5)."""

from __future__ import annotations

from pathlib import Path

from test_whatif import ADD_TWO_LIKE_GPU_0, node, pod, rows, snapshot, whatif


def test_nodes_like_a_node_being_scaled_down_carry_none_of_cluster_autoscalers_taints(tmp_path: Path) -> None:
    """gpu-0, full, is being deleted (and was a deletion candidate before): the two nodes like it start the
    two pending 8-GPU pods at once, their templates without those taints (a copied ``ToBeDeleted`` taint
    would keep both pods pending)."""
    marked = node("gpu-0")
    marked["spec"] = {
        "taints": [
            {
                "key": "DeletionCandidateOfClusterAutoscaler",
                "value": "1700000000",
                "effect": "PreferNoSchedule",
            },
            {"key": "ToBeDeletedByClusterAutoscaler", "value": "1700000600", "effect": "NoSchedule"},
        ]
    }
    snap = snapshot(
        tmp_path / "snap",
        marked,
        pod("serve", 8, on="gpu-0"),
        pod("train-0", 8, job="train"),
        pod("train-1", 8, job="train"),
    )
    code, output, document = whatif(tmp_path, snap, ADD_TWO_LIKE_GPU_0, extra=("--for", "1h"))
    assert code == 0, output
    by_pod = rows(document)
    assert {r["changed"]["node"] for r in by_pod.values()} == {"gpu-0-whatif-0", "gpu-0-whatif-1"}
    assert all(r["changed"]["time_to_start_s"] == 0 for r in by_pod.values())
