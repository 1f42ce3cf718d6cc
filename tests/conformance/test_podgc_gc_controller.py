"""Kubernetes 1.34.10 ``pkg/controller/podgc/gc_controller_test.go``: the rows gpufleet's PodGC can express,
through a simulation (``sim.unreachable_nodes``): a node lost at 1h (its kubelet stops with it); past the
50 s grace period the cloud node lifecycle controller deletes its Node at its next pass (+55 s); PodGC's
``gcOrphaned`` (every 20 s) sees the pod orphaned at +60 s, waits ``quarantineTime`` (40 s), then marks it
Failed with ``DisruptionTarget`` (the row's patch) and deletes it, at +100 s.

``TestGCTerminating``: ``gcTerminating``'s rule (``model.out_of_service``) row by row; in a run, a node shut
down and tainted out-of-service is ``tests/sim/test_out_of_service.py``'s.

gpufleet's PodGC collects only the pods a stopped kubelet left on a deleted Node, and the pods being deleted
on a NotReady node tainted out-of-service; the others are skipped, each with its reason."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.conftest import write
from tests.sim.serve_scenario import labelled_pool, serve

from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Taint
from gpufleet.model.out_of_service import OUT_OF_SERVICE_TAINT_KEY, force_deleted_by_pod_gc
from gpufleet.sim.simulation import Simulation

FAULT_AT = 3600.0
THRESHOLD = (
    "--terminated-pod-gc-threshold (gcTerminated; 12500 terminal pods by default) is not modelled: gpufleet "
    "keeps every terminal pod's record"
)
TERMINAL = (
    "a terminal pod's object left on a deleted Node is not collected by gpufleet's PodGC, which collects the "
    "pods a stopped kubelet left there (a terminal pod's deletion changes nothing gpufleet reports)"
)
ONE_VIEW = "gpufleet's nodes have one view (no informer lagging the API server)"
NEVER_BACK = "a deleted Node never registers again in gpufleet"
UNSCHEDULED = (
    "gpufleet removes a pod bound to no node at its deletion (the API server does, without grace): none is "
    "left Terminating unscheduled for PodGC"
)


def scenario(kind: str, reboot: str = "10m") -> list[str]:
    """Two 8-GPU nodes, one 8-GPU replica on h100-0, and h100-0's kubelet stopped at 1h: lost with its
    instance (``node-loss``) or rebooting for ``reboot`` (``xid-79``)."""
    return [
        labelled_pool("h100", 2) + "---" + serve("3h"),
        f"""
apiVersion: gpufleet.io/v1alpha1
kind: FaultModel
metadata: {{name: f}}
spec:
  response: {{detection: 0s, reboot: {reboot}}}
  faults:
  - {{at: 1h, node: h100-0, kind: {kind}}}
""",
    ]


def first_pod_at(tmp_path: Path, texts: list[str], times: list[float]) -> dict[float, tuple[object, ...]]:
    """serve-0's (phase, reason, Terminating, deleted) at each of ``times`` (seconds after the fault)."""
    sim = Simulation(load_scenario(write(tmp_path, *texts)))
    seen: dict[float, tuple[object, ...]] = {}

    def look(t: float) -> None:
        rec = sim.records["default/serve-0"]
        seen[t] = (rec.phase, rec.reason, rec.terminating, rec.deleted_s is not None)

    for t in times:
        sim.loop.at(FAULT_AT + t, Priority.ARRIVAL, partial(look, t))
    sim.run()
    return seen


@pytest.mark.parametrize(
    "row",
    [
        "TestGCOrphaned/no nodes, one running pod",
        "TestGCOrphaned/wrong nodes",
        "TestGCOrphaned/quarantine not finished",
    ],
)
def test_a_running_pod_on_a_deleted_node_is_failed_and_deleted_once_the_quarantine_is_over(
    tmp_path: Path, row: str
) -> None:
    """``gcOrphaned``: the running pod bound to the deleted h100-0 (another node, h100-1, exists: "wrong
    nodes") is untouched while the quarantine lasts (+99 s: "quarantine not finished"), then patched
    Failed (``DisruptionTarget``, reason ``NodeDeleted``) and deleted at +100 s."""
    seen = first_pod_at(tmp_path, scenario("node-loss"), [99.5, 100.5])
    assert seen[99.5] == ("Running", None, False, False)
    assert seen[100.5] == ("Failed", "NodeDeleted", False, True)


def test_gc_terminating_leaves_a_terminating_pod_on_a_not_ready_node_without_out_of_service_taint(
    tmp_path: Path,
) -> None:
    """``TestGCTerminating``'s "pods have deletion timestamp set and the corresponding nodes are not ready"
    (``gcTerminating`` acts only on nodes tainted ``out-of-service``): the pod the taint eviction controller
    deleted at +350 s on the rebooting h100-0 stays Terminating (its Node still there, NotReady) until its
    kubelet is back at +600 s and confirms its end."""
    seen = first_pod_at(tmp_path, scenario("xid-79", "10m"), [349.5, 599.5, 600.5])
    assert seen[349.5][2:] == (False, False)
    assert seen[599.5][2:] == (True, False)
    assert seen[600.5][3] is True


#: ``TestGCTerminating``'s nodes: (Ready, taints)
_OOS = Taint(OUT_OF_SERVICE_TAINT_KEY, effect=NO_EXECUTE)
WORKERS: dict[str, tuple[bool, tuple[Taint, ...]]] = {
    "worker-0": (False, (_OOS,)),
    "worker-1": (False, ()),
    "worker-2": (True, ()),
    "worker-3": (False, (Taint(OUT_OF_SERVICE_TAINT_KEY, effect=NO_SCHEDULE),)),
    "worker-4": (False, (Taint(OUT_OF_SERVICE_TAINT_KEY, effect=PREFER_NO_SCHEDULE),)),
    "worker-5": (False, (Taint(OUT_OF_SERVICE_TAINT_KEY, "any-value", NO_EXECUTE),)),
    "worker": (False, (_OOS,)),
}
#: (row, its pods: (name, phase, being deleted, node), deleted, patched)
GC_TERMINATING: list[tuple[str, list[tuple[str, str, bool, str]], set[str], set[str]]] = [
    (
        "some pods have deletion timestamp and/or phase set and some of the corresponding nodes have an"
        "outofservice taint that are not ready",
        [
            (
                f"{letter}{i + 1}",
                phase,
                letter == "b",
                "worker-3" if (letter, i) == ("a", 4) else f"worker-{i}",
            )
            for i in range(6)
            for letter, phase in (("a", ""), ("b", ""), ("c", "Pending"), ("d", "Running"), ("e", "Unknown"))
        ],
        {"b1", "b4", "b5", "b6"},
        {"b1", "b4", "b5", "b6"},
    ),
    (
        "pods deleted from node tainted out-of-service",
        [
            ("a", "Running", True, "worker"),
            ("b", "Failed", True, "worker"),
            ("c", "Succeeded", True, "worker"),
        ],
        {"a", "b", "c"},
        {"a"},
    ),
]


@pytest.mark.parametrize(
    ("pods", "deleted", "patched"),
    [
        pytest.param(pods, deleted, patched, id=f"TestGCTerminating/{row}")
        for row, pods, deleted, patched in GC_TERMINATING
    ],
)
def test_gc_terminating_force_deletes_the_pods_being_deleted_on_not_ready_out_of_service_nodes(
    pods: list[tuple[str, str, bool, str]], deleted: set[str], patched: set[str]
) -> None:
    """``gcTerminating``: a pod being deleted on a node not Ready with a taint of the out-of-service key (any
    value, any effect: ``TaintKeyExists``) is deleted, and patched Failed first where not terminal
    (``markFailedAndDeletePod``)."""
    gone = {
        name for name, _, terminating, node in pods if force_deleted_by_pod_gc(terminating, *WORKERS[node])
    }
    terminal = {name for name, phase, _, _ in pods if phase in ("Succeeded", "Failed")}
    assert (gone, gone - terminal) == (deleted, patched)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(f"TestGCTerminated/{name}", marks=pytest.mark.skip(reason=THRESHOLD))
        for name in (
            "delete pod a which is PodFailed and pod b which is PodSucceeded",
            "threshold = 0, disables terminated pod deletion",
            "threshold = 1, delete pod a which is PodFailed and pod b which is PodSucceeded",
            "threshold = 1, delete pod b which is PodSucceeded",
            "threshold = 1, delete pod a which is PodFailed",
            "threshold = 5, don't delete pod",
            "#06 (evicted pod c first)",
            "#07 (evicted pod c first, a running)",
        )
    ]
    + [
        pytest.param(f"TestGCOrphaned/{name}", marks=pytest.mark.skip(reason=reason))
        for name, reason in (
            ("nodes present in lister", ONE_VIEW),
            ("nodes present in client", ONE_VIEW),
            ("no nodes", TERMINAL),
            ("some nodes missing", TERMINAL),
            ("node added to client after quarantine", NEVER_BACK),
            ("node added to informer after quarantine", NEVER_BACK),
            ("node deleted from client after quarantine", ONE_VIEW),
            ("node deleted from informer after quarantine", ONE_VIEW),
        )
    ]
    + [
        pytest.param(f"TestGCUnscheduledTerminating/{name}", marks=pytest.mark.skip(reason=UNSCHEDULED))
        for name in (
            "Unscheduled pod in any phase must be deleted",
            "Scheduled pod in any phase must not be deleted",
        )
    ],
)
def test_podgc_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)
