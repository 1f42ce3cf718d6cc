"""cluster-autoscaler 1.34.5's soft taint on unneeded nodes (``core/scaledown/actuation/softtaint.go``,
``UpdateSoftDeletionTaints``, called at the end of each scan's scale-down by ``updateSoftDeletionTaints``):
the scan that finds a node unneeded puts ``DeletionCandidateOfClusterAutoscaler=<unix time>:PreferNoSchedule``
on it, kube-scheduler's TaintToleration then scores it lower (weight 3 of the default profile), so a new pod
goes to a busier node instead and the unneeded node stays empty until it goes; a scan that finds it needed
again (a pod landed on it anyway) takes the taint off."""

from __future__ import annotations

from pathlib import Path

from conftest import run_simulation, write
from gpufleet.autoscaling.soft_taints import DELETION_CANDIDATE_TAINT_KEY, deletion_candidate_taint
from gpufleet.model.node import PREFER_NO_SCHEDULE, Taint
from gpufleet.sim.simulation import Simulation

POOLS = """
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: busy}
spec:
  replicas: 1
  template:
    metadata:
      labels: {role: busy}
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: spare}
spec:
  replicas: 1
  min: 0
  max: 2
  template:
    status:
      capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def job(name: str, at: str, gpus: int, cpu: int, duration: str = "2h", selector: str = "") -> str:
    placed = f"\n      nodeSelector: {{{selector}}}" if selector else ""
    return f"""---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations: {{gpufleet.io/submit-at: {at}}}
spec:
  template:
    metadata:
      annotations: {{gpufleet.io/duration: {duration}}}
    spec:
      restartPolicy: Never{placed}
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "{cpu}", memory: {cpu * 8}Gi}}
          limits: {{nvidia.com/gpu: {gpus}}}
"""


SIMULATION = (
    "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 9m}\n"
)


def taint_events(sim: Simulation) -> list[tuple[float, str, tuple[str, ...], str]]:
    return [
        (e.t_s, e.kind, e.nodes, e.reason) for e in sim.autoscaler.events if e.kind.startswith("soft-taint")
    ]


def node_of(sim: Simulation, job_name: str) -> str | None:
    (rec,) = [r for r in sim.records.values() if r.pod.name.startswith(f"{job_name}-")]
    return rec.node


def taints_of(sim: Simulation, node: str) -> tuple[Taint, ...]:
    return sim.state.nodes[sim.state.index[node]].taints


def test_the_scan_that_finds_a_node_unneeded_puts_the_soft_taint_on_it(tmp_path: Path) -> None:
    """The busy node runs a half of its cpu from 0 s; the spare node is empty, unneeded from the scan at 0 s
    (scale-down's ``unneededNodes`` updated, then ``updateSoftDeletionTaints`` in the same ``RunOnce``): it
    carries ``DeletionCandidateOfClusterAutoscaler=0:PreferNoSchedule`` from then, the Unix time of the
    simulation's start, and keeps it while unneeded; the busy node, of a pool that does not autoscale, never
    gets one."""
    sim = run_simulation(
        write(tmp_path, POOLS + job("long", "0s", 4, 48, selector="role: busy") + SIMULATION)
    )
    taint = f"{DELETION_CANDIDATE_TAINT_KEY}=0:{PREFER_NO_SCHEDULE}"
    assert taint_events(sim)[0] == (0.0, "soft-taint", ("spare-0",), taint)
    assert sim.autoscaler.unneeded_since == {"spare-0": 0.0}
    assert taints_of(sim, "spare-0") == (Taint(DELETION_CANDIDATE_TAINT_KEY, "0", PREFER_NO_SCHEDULE),)
    assert taints_of(sim, "busy-0") == ()


def test_the_taint_value_is_the_unix_time_of_the_scan() -> None:
    """``DeletionCandidateTaint``: ``strconv.FormatInt(time.Now().Unix(), 10)``, whole seconds."""
    assert deletion_candidate_taint(1_700_000_123.9) == Taint(
        DELETION_CANDIDATE_TAINT_KEY, "1700000123", PREFER_NO_SCHEDULE
    )


def test_a_new_pod_goes_to_the_busy_node_rather_than_the_soft_tainted_one(tmp_path: Path) -> None:
    """At 300 s a 1-GPU pod fits both nodes. NodeResourcesFit (LeastAllocated) prefers the empty spare node
    by 50 points (weight 1); TaintToleration scores the spare node's untolerated ``PreferNoSchedule`` taint 0
    and the busy node 100 (weight 3): the pod goes to the busy node, and the spare one stays unneeded."""
    texts = POOLS + job("long", "0s", 4, 48, selector="role: busy") + job("late", "300s", 1, 8) + SIMULATION
    sim = run_simulation(write(tmp_path, texts))
    assert node_of(sim, "late") == "busy-0"
    assert sim.autoscaler.unneeded_since == {"spare-0": 0.0}
    assert [e[1] for e in taint_events(sim)] == ["soft-taint"]


def test_the_soft_taint_goes_when_a_pod_lands_on_the_node_anyway(tmp_path: Path) -> None:
    """At 300 s an 8-GPU pod fits only the spare node (the busy one has 4 GPUs left): it lands there despite
    the taint, the next scan (at 300 s, after the scheduling pass, with the node now needed: GPU utilisation
    1 > 0.5) finds it needed and takes the taint off (``CleanDeletionCandidate``)."""
    texts = POOLS + job("long", "0s", 4, 48, selector="role: busy") + job("whole", "300s", 8, 8) + SIMULATION
    sim = run_simulation(write(tmp_path, texts))
    assert node_of(sim, "whole") == "spare-0"
    events = taint_events(sim)
    assert [(e[1], e[2]) for e in events] == [
        ("soft-taint", ("spare-0",)),
        ("soft-taint-removed", ("spare-0",)),
    ]
    assert 300.0 <= events[1][0] <= 310.0
    assert taints_of(sim, "spare-0") == ()
    assert sim.autoscaler.unneeded_since == {}


def test_at_most_max_bulk_soft_taint_count_nodes_a_scan(tmp_path: Path) -> None:
    """``--max-bulk-soft-taint-count`` 1: of three empty unneeded nodes one is tainted a scan, in name order,
    the loop scanning on until all are; 0 puts none."""
    pool = POOLS.replace("replicas: 1\n  min: 0\n  max: 2", "replicas: 3\n  min: 0\n  max: 3")
    limited = SIMULATION.replace("duration: 9m}", "duration: 5m, autoscaler: {maxBulkSoftTaintCount: 1}}")
    sim = run_simulation(write(tmp_path, pool + job("long", "0s", 4, 48, selector="role: busy") + limited))
    assert [(e[0], e[2]) for e in taint_events(sim)] == [
        (0.0, ("spare-0",)),
        (10.0, ("spare-1",)),
        (20.0, ("spare-2",)),
    ]
    off = SIMULATION.replace("duration: 9m}", "duration: 5m, autoscaler: {maxBulkSoftTaintCount: 0}}")
    sim = run_simulation(write(tmp_path, pool + job("long", "0s", 4, 48, selector="role: busy") + off))
    assert taint_events(sim) == [] and taints_of(sim, "spare-0") == ()
