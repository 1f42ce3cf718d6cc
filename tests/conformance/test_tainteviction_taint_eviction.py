"""Kubernetes 1.34.10 ``pkg/controller/tainteviction/taint_eviction_test.go``, row by row, against the taint
eviction controller's rules as gpufleet applies them (``model.taint_eviction``'s ``toleration_s``, which
adds ``DefaultTolerationSeconds``'s tolerations first: they match none of these rows' taints): for a pod on
a node, whether it is deleted at once (0), after some seconds (the
``tolerationSeconds`` upstream's queue fires at), or never (None: any deletion scheduled is cancelled).

Upstream's ``createNoExecuteTaint(i)`` is ``testTaint<i>=test<i>:NoExecute``; ``addToleration(pod, i, d)``
tolerates it (``Equal``) for ``d`` seconds, forever where ``d`` is negative.

gpufleet takes this decision for each pod on a node when the node lifecycle controller taints the node
``unreachable:NoExecute`` (its kubelet stopped), and for a pod as it is bound to a node with ``NoExecute``
taints (``PodLifecycle.bound``: a run at the end checks it). Its pods' tolerations and its running nodes'
other ``NoExecute`` taints never change, so the rows that change them check the rule those changes apply."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import pods_by_name, simulated

from gpufleet.model.default_toleration_seconds import with_default_tolerations
from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.taint_eviction import (
    ScheduledDeletion,
    min_toleration_s,
    no_execute_taints,
    process_pod_on_node,
    toleration_s,
)

BOOKKEEPING = "the controller's own bookkeeping (no deletion to compare: upstream only checks nothing panics)"
NO_EVENTS = "gpufleet records no Event of the taint eviction controller"
MULTIPLE_PODS = "TestUpdateNodeWithMultiplePods/"
NOT_BOUND = "gpufleet's taint eviction reads the pods bound to the tainted node: an unbound pod is never read"


def taint(i: int) -> Taint:
    """``createNoExecuteTaint(i)``."""
    return Taint(f"testTaint{i}", f"test{i}", NO_EXECUTE)


def tolerating(i: int, seconds: int) -> Toleration:
    """``addToleration``'s toleration: forever where ``seconds`` is negative."""
    return Toleration(f"testTaint{i}", "", f"test{i}", NO_EXECUTE, None if seconds < 0 else seconds)


def pod(*tolerations: Toleration) -> Pod:
    return Pod("pod1", tolerations=tolerations)


def test_filter_no_execute_taints_keeps_only_the_no_execute_ones() -> None:
    """``TestFilterNoExecuteTaints`` (``getNoExecuteTaints``)."""
    one, two = Taint("one", "one", NO_EXECUTE), Taint("two", "two", NO_SCHEDULE)
    assert no_execute_taints((one, two)) == (one,)


# (row, the pod's tolerations, the node's taints, when the pod is deleted)
CREATE_POD = [
    ("scheduled on untainted Node", (), (), None),
    ("schedule on tainted Node", (), (taint(1),), 0.0),
    ("schedule on tainted Node with finite toleration", (tolerating(1, 100),), (taint(1),), 100.0),
    ("schedule on tainted Node with infinite toleration", (tolerating(1, -1),), (taint(1),), None),
    ("schedule on tainted Node with infinite invalid toleration", (tolerating(2, -1),), (taint(1),), 0.0),
]
UPDATE_POD = [
    ("scheduling onto tainted Node", (), (taint(1),), 0.0),
    ("scheduling onto tainted Node with toleration", (tolerating(1, -1),), (taint(1),), None),
]
CREATE_NODE = [
    ("Creating Node matching already assigned Pod", (), (), None),
    ("Creating tainted Node matching already assigned Pod", (), (taint(1),), 0.0),
    (
        "Creating tainted Node matching already assigned tolerating Pod",
        (tolerating(1, -1),),
        (taint(1),),
        None,
    ),
]
UPDATE_NODE = [
    ("Added taint, expect node patched and deleted", (), (taint(1),), 0.0),
    ("Added tolerated taint", (tolerating(1, 100),), (taint(1),), 100.0),
    ("Only one added taint tolerated", (tolerating(1, 100),), (taint(1), taint(2)), 0.0),
    ("Taint removed", (tolerating(1, 1),), (), None),
    (
        "Pod with multiple tolerations are evicted when first one runs out",
        (tolerating(1, 1), tolerating(2, 100)),
        (taint(1), taint(2)),
        1.0,
    ),
]
#: ``TestEventualConsistency``: upstream asserts pod1's deletion once the node is tainted (pod2's later
#: arrival is only waited for, not asserted)
EVENTUAL_CONSISTENCY = [
    ("existing pod2 scheduled onto tainted Node", (), (taint(1),), 0.0),
    ("existing pod2 with taint toleration scheduled onto tainted Node", (), (taint(1),), 0.0),
    ("new pod2 created on tainted Node", (), (taint(1),), 0.0),
    ("new pod2 with tait toleration created on tainted Node", (), (taint(1),), 0.0),
]


def rows(
    test: str, table: list[tuple[str, tuple[Toleration, ...], tuple[Taint, ...], float | None]]
) -> list[object]:
    return [
        pytest.param(tolerations, taints, when, id=f"{test}/{name}")
        for name, tolerations, taints, when in table
    ]


@pytest.mark.parametrize(
    ("tolerations", "taints", "when"),
    rows("TestCreatePod", CREATE_POD)
    + rows("TestUpdatePod", UPDATE_POD)
    + rows("TestCreateNode", CREATE_NODE)
    + rows("TestUpdateNode", UPDATE_NODE)
    + rows("TestEventualConsistency", EVENTUAL_CONSISTENCY),
)
def test_a_pod_on_a_tainted_node_is_deleted_at_once_after_its_least_toleration_or_never(
    tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...], when: float | None
) -> None:
    """``processPodOnNode``: a ``NoExecute`` taint the pod does not tolerate deletes it at once; else the
    least ``tolerationSeconds`` of the tolerations matched (``getMinTolerationTime``), or never where none
    sets it, or where the node has no ``NoExecute`` taint left (the deletion is cancelled)."""
    assert toleration_s(pod(*tolerations), taints) == when


def test_update_node_with_multiple_taints_schedules_and_cancels_as_the_taints_change() -> None:
    """``TestUpdateNodeWithMultipleTaints``: tolerating ``testTaint1`` forever and ``testTaint2`` for 60 s:
    no taint, nothing queued; ``testTaint1``, nothing; both, deleted after 60 s; ``testTaint1`` again, the
    deletion cancelled (and none ever happened)."""
    tolerations = (
        Toleration("testTaint1", "Exists", effect=NO_EXECUTE),
        Toleration("testTaint2", "Exists", effect=NO_EXECUTE, toleration_seconds=60),
    )
    steps = [(), (taint(1),), (taint(1), taint(2)), (taint(1),)]
    assert [toleration_s(pod(*tolerations), taints) for taints in steps] == [None, None, 60.0, None]


@pytest.mark.parametrize(
    ("pods", "taints", "deleted"),
    [
        pytest.param(
            {"pod1": (), "pod2": (tolerating(1, 1),), "pod3": (tolerating(1, -1),)},
            (taint(1),),
            {"pod1": 0.0, "pod2": 1.0},
            id=MULTIPLE_PODS + "Pods with different toleration times are evicted appropriately",
        ),
        pytest.param(
            {"pod1": (), "pod2": (tolerating(1, 1),), "pod3": (tolerating(1, -1),)},
            (taint(1), taint(2)),
            {"pod1": 0.0, "pod2": 0.0, "pod3": 0.0},
            id=MULTIPLE_PODS + "Evict all pods not matching all taints instantly",
        ),
    ],
)
def test_the_pods_of_a_newly_tainted_node_are_each_deleted_after_their_own_toleration(
    pods: dict[str, tuple[Toleration, ...]], taints: tuple[Taint, ...], deleted: dict[str, float]
) -> None:
    """``TestUpdateNodeWithMultiplePods`` (``handleNodeUpdate``: ``processPodOnNode`` for each pod of the
    node): which pods are deleted, and when; pod3, tolerating ``testTaint1`` forever, stays in the first."""
    when = {name: toleration_s(Pod(name, tolerations=t), taints) for name, t in pods.items()}
    assert {name: s for name, s in when.items() if s is not None} == deleted


@pytest.mark.parametrize(
    ("tolerations", "want"),
    [
        pytest.param((), 0.0, id="no tolerations"),
        pytest.param((Toleration(),), None, id="one without tolerationSeconds"),
        pytest.param((Toleration(toleration_seconds=1), Toleration(toleration_seconds=2)), 1.0, id="1 and 2"),
        pytest.param((Toleration(toleration_seconds=1), Toleration()), 1.0, id="1 and none"),
        pytest.param((Toleration(), Toleration(toleration_seconds=1)), 1.0, id="none and 1"),
    ],
)
def test_get_min_toleration_time(tolerations: tuple[Toleration, ...], want: float | None) -> None:
    """``TestGetMinTolerationTime``: no toleration, 0; none setting it, upstream's -1 (forever: None);
    else the least set."""
    assert min_toleration_s(tolerations) == want


@pytest.mark.parametrize(
    ("before", "after", "fire_s"),
    [
        pytest.param((tolerating(1, 100),), (), 0.2, id="TestUpdatePod/removing toleration"),
        pytest.param(
            (tolerating(1, 1),),
            (tolerating(1, 100),),
            1.0,
            id="TestUpdatePod/lengthening toleration shouldn't work",
        ),
    ],
)
def test_update_pod_deletes_at_once_or_keeps_the_deletion_scheduled(
    before: tuple[Toleration, ...], after: tuple[Toleration, ...], fire_s: float
) -> None:
    """``TestUpdatePod``'s rows whose pod changes its tolerations 200 ms after its deletion was scheduled
    (``processPodOnNode`` against the ``TimedWorkerQueue``): a toleration removed deletes it at once; one
    lengthened leaves the deletion scheduled as it was (1 s after the first look). gpufleet never changes a
    pod's tolerations in place: these rows check the rule, as a second taint tolerated for less uses it in a
    run (``tests/sim/test_taint_eviction.py``)."""
    taints = (taint(1),)
    first = process_pod_on_node(None, with_default_tolerations(before), taints, 0.0)
    assert first is not None
    second = process_pod_on_node(first, with_default_tolerations(after), taints, 0.2)
    assert second is not None and second.fire_s == fire_s


@pytest.mark.parametrize(
    ("scheduled", "tolerations", "now", "want"),
    [
        pytest.param(None, (tolerating(1, 60),), 5.0, ScheduledDeletion(5.0, 65.0), id="none yet: scheduled"),
        pytest.param(
            ScheduledDeletion(0.0, 600.0), (tolerating(1, 60),), 5.0, ScheduledDeletion(0.0, 600.0), id="kept"
        ),
        pytest.param(
            ScheduledDeletion(5.0, 600.0),
            (tolerating(1, 60),),
            5.0,
            ScheduledDeletion(5.0, 65.0),
            id="at the instant it was scheduled: replaced",
        ),
        pytest.param(
            ScheduledDeletion(0.0, 600.0), (tolerating(1, -1),), 5.0, None, id="tolerated forever: cancelled"
        ),
        pytest.param(
            ScheduledDeletion(0.0, 600.0), (), 5.0, ScheduledDeletion(5.0, 5.0), id="untolerated: at once"
        ),
    ],
)
def test_process_pod_on_node_keeps_the_earlier_scheduled_deletion(
    scheduled: ScheduledDeletion | None,
    tolerations: tuple[Toleration, ...],
    now: float,
    want: ScheduledDeletion | None,
) -> None:
    """``processPodOnNode``'s ``scheduledEviction`` comparison (``startTime.Add(minTolerationTime).Before(
    triggerTime)``) and ``TimedWorkerQueue.AddWork`` (no second work for a pod): a deletion scheduled before
    ``now`` stays; only an untolerated taint (at once) or a toleration forever (cancelled) changes it."""
    assert process_pod_on_node(scheduled, tolerations, (taint(1),), now) == want


@pytest.mark.parametrize(
    "row",
    [
        pytest.param("TestCreatePod/not scheduled - ignore", marks=pytest.mark.skip(reason=NOT_BOUND)),
        pytest.param("TestDeletePod", marks=pytest.mark.skip(reason=BOOKKEEPING)),
        pytest.param("TestDeleteNode", marks=pytest.mark.skip(reason=BOOKKEEPING)),
        pytest.param("TestPodDeletionEvent/emitPodDeletionEvent", marks=pytest.mark.skip(reason=NO_EVENTS)),
        pytest.param(
            "TestPodDeletionEvent/emitCancelPodDeletionEvent", marks=pytest.mark.skip(reason=NO_EVENTS)
        ),
    ],
)
def test_taint_eviction_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)


# -- through a simulation: pods bound to a node already tainted -------------------------------------------

NODE = """
apiVersion: v1
kind: Node
metadata: {name: node1}
spec:
  taints: [{key: testTaint1, value: test1, effect: NoExecute}]
status:
  capacity: {cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def bound_pod(name: str, toleration_seconds: str) -> str:
    """A pod bound to node1 by ``spec.nodeName`` for 10 minutes of work, tolerating ``testTaint1`` for
    ``toleration_seconds`` (empty: forever)."""
    return f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {{gpufleet.io/duration: 10m}}
spec:
  nodeName: node1
  restartPolicy: Never
  tolerations:
  - {{key: testTaint1, value: test1, effect: NoExecute{toleration_seconds}}}
  containers:
  - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""


def test_pods_bound_to_a_tainted_node_are_deleted_after_their_own_toleration_in_a_run(tmp_path: Path) -> None:
    """``TestCreatePod``'s "schedule on tainted Node with finite toleration" and
    ``TestUpdateNodeWithMultiplePods``' first row in a run (``handlePodUpdate``: the pod bound to a node
    already tainted): pod2, tolerating ``testTaint1`` for 1 s, is deleted 1 s after it was bound (reason
    ``TaintManagerEviction``; it ends after its 30 s grace period); pod3, tolerating it forever, runs its
    10 minutes."""
    path = tmp_path / "scenario.yaml"
    path.write_text(NODE + bound_pod("pod2", ", tolerationSeconds: 1") + bound_pod("pod3", ""))
    summary = simulated([path])
    pods = pods_by_name(summary)
    assert (pods["pod2"]["reason"], pods["pod2"]["bound_s"], pods["pod2"]["finished_s"]) == (
        "TaintManagerEviction",
        0,
        1 + 30,
    )
    assert (pods["pod3"]["phase"], pods["pod3"]["finished_s"]) == ("Succeeded", 600)
