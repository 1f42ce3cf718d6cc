"""cluster-autoscaler 1.34.5's scale-down of a node that runs a StatefulSet's pod: the pod is replicated
(``simulator/drainability/rules/replicated``: a StatefulSet is one of the kinds
``--skip-nodes-with-custom-controller-pods`` accepts), so the node is drained and the pod moved; the
StatefulSet makes it again under its name once the evicted pod is gone (``processReplica``); a
PodDisruptionBudget that allows no disruption blocks the drain (``rules/pdb``: ``NotEnoughPdb``)."""

from __future__ import annotations

from pathlib import Path

from test_cluster_autoscaler_tuning_flags import PREFERS_THE_POOL, SPARE, events, pool, simulation

from conftest import run_simulation, write
from gpufleet.model.simulation import AutoscalerSettings

STATEFUL = f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: serve}}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: serve}}
  template:
    metadata:
      labels: {{app: serve}}
    spec:
      terminationGracePeriodSeconds: 60
      {PREFERS_THE_POOL}
      containers:
      - name: serve
        image: server:1
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

NO_DISRUPTION = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: serve}
spec:
  maxUnavailable: 0
  selector:
    matchLabels: {app: serve}
"""


def test_a_stateful_sets_pod_is_moved_and_made_again_under_its_name_once_gone(tmp_path: Path) -> None:
    """The pool node, whose only pod is ``serve-0``, is drained from ``--node-delete-delay-after-taint``
    (5 s) after its scale-down (``deleteNodesAsync``); ``serve-0`` is evicted and, once its 60 s grace period
    is over, made again as ``serve-0`` on the spare node; the pool node is deleted."""
    sim = run_simulation(write(tmp_path, simulation("1h"), pool(1, 1), SPARE, STATEFUL))
    (scaled_down_at, (node,)) = events(sim, "scale-down")[0]
    drained_at = scaled_down_at + AutoscalerSettings().node_delete_delay_after_taint_s
    (evicted,) = [r for r in sim.lifecycle.replaced if r.pod.key == "default/serve-0"]
    assert (evicted.reason, evicted.node, evicted.finished_s) == ("Evicted", node, drained_at + 60.0)
    again = sim.records["default/serve-0"]
    assert again.created_s == drained_at + 60.0 and again.node == "spare"
    assert sim.nodes[node].deleted_s is not None


def test_a_budget_that_allows_no_disruption_keeps_the_stateful_sets_node(tmp_path: Path) -> None:
    """``maxUnavailable: 0`` over the StatefulSet's pods: the drain simulation finds ``NotEnoughPdb``, and the
    pool node stays."""
    sim = run_simulation(write(tmp_path, simulation("1h"), pool(1, 1), SPARE, STATEFUL, NO_DISRUPTION))
    assert events(sim, "scale-down") == []
    assert all(r.reason != "Evicted" for r in sim.records.values())
