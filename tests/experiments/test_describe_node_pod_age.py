"""``gpufleet describe node`` of a simulated scenario: a pod's Age in Non-terminated Pods counts from its
``creationTimestamp`` (kubectl ``describeNodeResource``: ``translateTimestampSince(pod.CreationTimestamp)``),
on the run's clock for a pod of a dump (``model.node_readiness.created_on_clock``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from conftest import write
from gpufleet.cli import app

SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: s}
spec: {duration: 10m, startTime: "2026-12-06T05:00:00Z"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status: {capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: ml, creationTimestamp: "2026-12-06T04:00:00Z"}
spec:
  containers: [{name: c, image: llm, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: ml}
spec:
  containers: [{name: c, image: llm, resources: {limits: {nvidia.com/gpu: "1"}}}]
"""


def test_a_pods_age_on_its_node_counts_from_its_creation_timestamp(tmp_path: Path) -> None:
    """At the run's end (10 minutes): the pod created an hour before the run's start is 70 minutes old
    (kubectl's ``duration.HumanDuration`` writes ``70m``); the one without a ``creationTimestamp``, created
    at the start, 10."""
    result = CliRunner().invoke(app, ["describe", "node", "gpu-0", *map(str, write(tmp_path, SCENARIO))])
    assert result.exit_code == 0, result.output
    rows = [line.split(maxsplit=2)[1:] for line in result.output.splitlines() if line.startswith("  ml ")]
    ages = {name: rest.rsplit("  ", 1)[-1].strip() for name, rest in rows}
    assert ages == {"new": "10m", "old": "70m"}
