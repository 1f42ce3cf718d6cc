"""cluster-autoscaler's ``cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"`` on a NodePool's
template (``eligibility.HasNoScaleDownAnnotation``): its nodes stay when they fall empty, while the
same pool without it is scaled down after ``scale-down-unneeded-time``."""

from __future__ import annotations

from dataclasses import replace

from test_cluster_autoscaler import events, gpu_job, run, t4_pool


def test_nodes_of_a_pool_marked_scale_down_disabled_stay_when_empty() -> None:
    pool = t4_pool()
    kept = replace(pool, template=replace(pool.template, scale_down_disabled=True))
    summary = run([kept], [gpu_job("train", 2, 1800)])
    assert [n for e in events(summary, "scale-up") for n in e["nodes"]] == ["t4-0", "t4-1"]
    assert events(summary, "scale-down") == []
    assert all(n["deleted_s"] is None for n in summary["nodes"])


def test_the_same_pool_without_the_annotation_is_scaled_down() -> None:
    summary = run([t4_pool()], [gpu_job("train", 2, 1800)])
    assert sorted(n for e in events(summary, "scale-down") for n in e["nodes"]) == ["t4-0", "t4-1"]
