"""``gpufleet whatif`` of a snapshot whose pending pod was created an hour before it: both sides count the
pod's time to start and to working from its ``metadata.creationTimestamp`` (on the run's clock,
``model.node_readiness.created_on_clock``; time 0 the latest time the snapshot's Nodes show, their conditions'
``lastHeartbeatTime``), so the hour already waited is in both and the comparison is of the same wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_whatif import node, pod, rows, snapshot, whatif

SNAPSHOT_TIME = "2026-12-06T05:00:00Z"
ADD_ONE_LIKE_GPU_0 = """
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {name: one-more}
spec:
  addNodes:
  - like: gpu-0
    count: 1
"""


def seen_at_snapshot_time(body: dict[str, Any]) -> dict[str, Any]:
    ready = {"type": "Ready", "status": "True", "lastHeartbeatTime": SNAPSHOT_TIME}
    body["status"]["conditions"] = [ready]
    return body


def test_the_hour_a_pod_waited_before_the_snapshot_is_in_both_sides_times_to_start(tmp_path: Path) -> None:
    """The busy pod holds gpu-0's 8 GPUs for the run's first 2 minutes: unchanged, the training pod starts
    then, 3,720 s after its creation; with a node more it starts at once, 3,600 s after it."""
    busy = pod("busy", 8, on="gpu-0")
    busy["metadata"]["annotations"] = {"gpufleet.io/duration": "2m"}
    train = pod("train", 8)
    train["metadata"]["creationTimestamp"] = "2026-12-06T04:00:00Z"
    snap = snapshot(tmp_path / "snap", seen_at_snapshot_time(node("gpu-0")), busy, train)
    code, output, document = whatif(tmp_path, snap, ADD_ONE_LIKE_GPU_0, extra=("--for", "10m"))
    assert code == 0, output
    outcome = rows(document)["ml/train"]
    assert (outcome["baseline"]["time_to_start_s"], outcome["changed"]["time_to_start_s"]) == (3720, 3600)
    assert (outcome["baseline"]["time_to_working_s"], outcome["changed"]["time_to_working_s"]) == (3720, 3600)
    figures = [document[side]["time_to_working_p50_s"] for side in ("baseline", "changed")]
    assert figures == [3720, 3600]
