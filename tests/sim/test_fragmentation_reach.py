"""The summary's fragmentation counts only free GPUs the pending work could use: free GPUs on a node its
nodeSelector, affinity or untolerated taints exclude are out of its reach, not fragmented (the FGD
paper's "no access" case, which the FGD score keeps)."""

from __future__ import annotations

from pathlib import Path

from conftest import simulated_text
from gpufleet.kube import load_scenario
from gpufleet.scheduling.fragmentation import fragmentation
from gpufleet.sim.simulation import Simulation


def node(name: str, pool: str, taints: str = "") -> str:
    return f"""
---
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{pool: {pool}}}}}
spec: {{taints: [{taints}]}}
status:
  capacity: {{cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def pod(name: str, gpus: int, spec: str = "") -> str:
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
{spec}  containers:
  - name: main
    image: x
    resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


SIMULATION = (
    "---\napiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 1m}\n"
)
# a holds a 4-GPU server: 4 free there; b is empty: 8 free
BUSY_A = pod("server", 4, "  nodeName: a\n")
WANTS_A = pod("wants-a", 8, "  nodeSelector: {pool: a}\n")


def test_free_gpus_a_node_selector_excludes_are_out_of_reach_not_fragmented(tmp_path: Path) -> None:
    summary = simulated_text(tmp_path, node("a", "a") + node("b", "b") + BUSY_A + WANTS_A + SIMULATION)
    frag = summary["fragmentation"]
    assert frag["free_gpus"] == 12.0
    assert frag["fragmented_gpus"] == 4.0  # a's 4: the pod may go there, but needs 8
    assert frag["out_of_reach_gpus"] == 8.0  # b's 8: its nodeSelector excludes b
    assert frag["nodes"] == {"a": 4.0}
    assert frag["ratio"] == round(4 / 12, 6)


def test_free_gpus_behind_an_untolerated_taint_are_out_of_reach(tmp_path: Path) -> None:
    tainted = node("b", "a", "{key: reserved, value: team-x, effect: NoSchedule}")
    summary = simulated_text(tmp_path, node("a", "a") + tainted + BUSY_A + WANTS_A + SIMULATION)
    frag = summary["fragmentation"]
    assert (frag["fragmented_gpus"], frag["out_of_reach_gpus"]) == (4.0, 8.0)


def test_a_pending_pod_that_fits_nowhere_it_may_go_makes_all_of_those_free_gpus_fragmented(
    tmp_path: Path,
) -> None:
    """Both nodes admit it and neither has 8 free: every free GPU is fragmented, none out of reach."""
    busy_b = pod("other", 2, "  nodeName: b\n")
    summary = simulated_text(
        tmp_path, node("a", "a") + node("b", "a") + BUSY_A + busy_b + WANTS_A + SIMULATION
    )
    frag = summary["fragmentation"]
    assert (frag["free_gpus"], frag["fragmented_gpus"], frag["out_of_reach_gpus"]) == (10.0, 10.0, 0.0)


def test_the_fgd_measure_without_reach_still_counts_excluded_nodes_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(node("a", "a") + node("b", "b") + BUSY_A + WANTS_A + SIMULATION)
    sim = Simulation(load_scenario([path]))
    sim.run()
    pending = [r.pod for r in sim.records.values() if r.phase == "Pending"]
    assert fragmentation(sim.state, pending).fragmented_gpus == 12.0  # the paper's "no access": b whole


def test_the_pending_pods_hint_calls_fragmented_only_the_free_gpus_it_may_use(tmp_path: Path) -> None:
    """4 free on a, 4 free on b (which its nodeSelector excludes): 8 free in all, as many as it asks,
    but not fragmented for it: only 4 are where it may go."""
    busy_b = pod("other", 4, "  nodeName: b\n")
    summary = simulated_text(
        tmp_path, node("a", "a") + node("b", "b") + BUSY_A + busy_b + WANTS_A + SIMULATION
    )
    (waiting,) = [p for p in summary["pods"] if p["name"] == "default/wants-a"]
    assert waiting["diagnosis"]["hints"] == ["4 more GPUs are free on nodes it may not use"]
    assert summary["fragmentation"]["out_of_reach_gpus"] == 4.0
