"""The node lifecycle controller judging every zone at each monitor pass (Kubernetes 1.34.10,
``pkg/controller/nodelifecycle/node_lifecycle_controller.go``: ``handleDisruption``, ``setLimiterInZone``,
``markNodeAsReachable``; ``scheduler/rate_limited_queue.go``: ``SwapLimiter``), as ``sim.unreachable_nodes``
models it: a queued node's NoExecute taint follows the rate in force at each moment; every zone fully
disrupted takes the taints off (and the taint eviction controller's deletions with them) until a zone
recovers; a zone with no node left is forgotten."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from tests.conftest import write
from tests.sim.serve_scenario import ON_SERVE_NODES, serve
from tests.sim.serve_scenario import labelled_pool as pool

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.node import Taint
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.unreachable_nodes import UNREACHABLE_NO_EXECUTE, UNREACHABLE_NO_SCHEDULE

FAULT_AT = 3600.0
ZONE = "topology.kubernetes.io/zone"
EXCLUDE = "node.kubernetes.io/exclude-disruption"


SERVE = serve("4h", ON_SERVE_NODES)


def faults(reboot: str, *down: tuple[float, str, str]) -> str:
    """Each of ``down``: (seconds after 1h, node, fault kind)."""
    listed = "".join(f"\n  - {{at: {FAULT_AT + s:g}s, node: {n}, kind: {k}}}" for s, n, k in down)
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: {reboot}}}
  faults:{listed}
"""


def simulation(tmp_path: Path, *texts: str) -> Simulation:
    return Simulation(load_scenario(write(tmp_path, *texts)))


def taints_at(sim: Simulation, times: list[float]) -> dict[float, dict[str, tuple[Taint, ...]]]:
    """The nodes' taints at each of ``times`` (looked at before anything else of that instant)."""
    seen: dict[float, dict[str, tuple[Taint, ...]]] = {}

    def look(t: float) -> None:
        seen[t] = {name: sim.state.nodes[i].taints for name, i in sim.state.index.items()}

    for t in times:
        sim.loop.at(t, Priority.COMPLETION, partial(look, t))
    return seen


def tainted(sim: Simulation) -> dict[str, float | None]:
    """Each fault's node and when it was tainted NoExecute (seconds of the run)."""
    return {
        r.node: None if r.down is None or r.down.tainted_s is None else r.down.tainted_s
        for r in (sim.faults.records if sim.faults is not None else [])
    }


def test_a_queued_node_is_tainted_at_the_rate_its_zone_has_when_its_turn_comes(tmp_path: Path) -> None:
    """``handleDisruption`` at each pass and ``SwapLimiter``: 29 of a zone's 52 nodes go NotReady at 1h + 50 s
    (56 %: partially disrupted, a large zone: 0.01 nodes a second); the first queued is tainted at once. 20
    of them were lost: the cloud node lifecycle controller deletes them 5 s later, the zone is normal again
    (9 of 32 NotReady) and its tainter gets 0.1 nodes a second, drained (the old bucket held no token): the
    other 8 rebooting nodes are tainted every 10 s from 1h + 65 s, not every 100 s."""
    reboots = [(0.0, f"h100-{i}", "xid-79") for i in range(9)]
    lost = [(0.0, f"h100-{i}", "node-loss") for i in range(9, 29)]
    sim = simulation(tmp_path, pool("h100", 52, "{role: serve}"), SERVE, faults("1h", *reboots, *lost))
    sim.run()
    times = tainted(sim)
    assert [times[f"h100-{i}"] for i in range(9)] == [
        FAULT_AT + s for s in (50, 65, 75, 85, 95, 105, 115, 125, 135)
    ]


def test_every_zone_fully_disrupted_takes_the_no_execute_taints_off_and_a_zone_back_resumes_tainting(
    tmp_path: Path,
) -> None:
    """Zone a's serving node stops at 1h: NotReady at +50 s, zone a fully disrupted, zone b not: tainted
    ``unreachable:NoExecute`` at once, its pod to be deleted 300 s later (``DefaultTolerationSeconds``). Zone
    b's only node stops at 1h + 100 s: at +150 s every zone is fully disrupted (``allAreFullyDisrupted``):
    ``markNodeAsReachable`` takes the NoExecute taint off (the NoSchedule one stays), and the taint eviction
    controller cancels the deletion: the pod stays and restarts in place when its kubelet is back (2h). Then
    zone a is normal again (``allWasFullyDisrupted`` and now not): every tainter gets its state's rate,
    drained: b-0, still NotReady, is queued again and tainted 10 s later (2h + 10 s)."""
    texts = [
        pool("a", 1, f"{{role: serve, {ZONE}: a}}"),
        pool("b", 1, f"{{{ZONE}: b}}"),
        SERVE,
        faults("1h", (0.0, "a-0", "xid-79"), (100.0, "b-0", "xid-79")),
    ]
    sim = simulation(tmp_path, *texts)
    seen = taints_at(sim, [FAULT_AT + 149, FAULT_AT + 151])
    sim.run()
    unreachable = (UNREACHABLE_NO_SCHEDULE, UNREACHABLE_NO_EXECUTE)
    assert seen[FAULT_AT + 149]["a-0"] == unreachable
    assert seen[FAULT_AT + 151] == {"a-0": (UNREACHABLE_NO_SCHEDULE,), "b-0": (UNREACHABLE_NO_SCHEDULE,)}
    pods = {k: r for k, r in sim.records.items() if k.startswith("default/serve")}
    assert list(pods) == ["default/serve-0"]
    assert (pods["default/serve-0"].restarts, pods["default/serve-0"].deleted_s) == (1, None)
    assert tainted(sim) == {"a-0": FAULT_AT + 50, "b-0": 2 * FAULT_AT + 10}


def test_a_zone_with_no_node_left_is_forgotten(tmp_path: Path) -> None:
    """``handleDisruption`` forgets a zone it no longer sees (its ``zoneStates`` entry deleted): zone b's
    only counted node goes NotReady at 1h + 50 s (fully disrupted; zone a normal): tainted. Zone a's only
    node is deleted at 1h + 55 s: every zone left (b) is fully disrupted, and so was every zone remembered
    (``allWasFullyDisrupted``): nothing changes, b's tainter keeps tainting at 0.1 nodes a second, and
    b's node excluded from disruption checks, NotReady at 1h + 70 s, is tainted then (b's counted node keeps
    its taint). Judged once, or with zone a remembered as normal, nothing would be tainted from 1h + 55 s."""
    texts = [
        pool("a", 1, f"{{{ZONE}: a}}"),
        pool("b", 1, f"{{role: serve, {ZONE}: b}}"),
        pool("e", 1, f"{{{ZONE}: b, {EXCLUDE}: ''}}"),
        SERVE,
        faults("1h", (0.0, "b-0", "xid-79"), (20.0, "e-0", "xid-79")),
    ]
    sim = simulation(tmp_path, *texts)
    delete: Callable[[], None] = partial(sim.delete_node, "a-0")
    sim.loop.at(FAULT_AT + 55, Priority.ARRIVAL, delete)
    seen = taints_at(sim, [FAULT_AT + 71])
    sim.run()
    assert tainted(sim) == {"b-0": FAULT_AT + 50, "e-0": FAULT_AT + 70}
    assert UNREACHABLE_NO_EXECUTE in seen[FAULT_AT + 71]["b-0"]


def test_a_node_ready_again_leaves_its_zone_s_queue_and_the_next_takes_its_turn(tmp_path: Path) -> None:
    """``processTaintBaseEviction`` → ``markNodeAsReachable``: a node Ready again is removed from its zone's
    tainter queue (``RateLimitedTimedQueue.Remove``) and spends no token. Four nodes stop at 1h (NotReady at
    +50 s, tainted at 0.1 nodes a second: +50, +60, +70 s, the fourth's turn at +80 s); their kubelets are
    back at +75 s, before the fourth's turn. A fifth, stopped at 1h + 20 s (NotReady +70 s), queued behind
    it, is tainted at the fourth's turn, +80 s, not 10 s later."""
    down = [(0.0, f"h100-{i}", "xid-79") for i in range(4)]
    texts = [pool("h100", 10, "{role: serve}"), SERVE, faults("75s", *down, (20.0, "h100-4", "xid-79"))]
    sim = simulation(tmp_path, *texts)
    sim.run()
    at = [FAULT_AT + s for s in (50, 60, 70)]
    assert tainted(sim) == {
        "h100-0": at[0],
        "h100-1": at[1],
        "h100-2": at[2],
        "h100-3": None,
        "h100-4": FAULT_AT + 80,
    }
