"""A StatefulSet's syncs, in order: ``stateful_set_control_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/statefulset/stateful_set_control_test.go``, run
against ``gpufleet.workloads.statefulset.StatefulSetController``. Upstream's fake object manager and
``UpdateStatefulSet`` are a sync here: ``wanted`` (the pods it creates) and ``doomed`` (those it deletes);
``setPodRunning`` + ``setPodReady`` is ``pod_ready`` (gpufleet's pod turns Ready only while Running); a pod
removed from the indexer, or one deleted and gone, is ``finished``; a pod deleted and not yet gone is
``pod_terminating``. Each test runs ``Monotonic`` (``OrderedReady``) and ``Burst`` (``Parallel``), as
``TestStatefulSetControl`` does, and checks ``assertMonotonicInvariants``' order where it applies (no pod is
Running and Ready while a lower ordinal is not; the ordinals from ``ordinals.start`` on, with no gap).
Upstream's status (``Status.Replicas``, ``ReadyReplicas``, ``AvailableReplicas``, ``CurrentReplicas``,
``UpdatedReplicas``: ``computeReplicaStatus``) is the controller's ``status_counts``.

Below the ports, gpufleet's own rows for a pod that was Ready and is not any more (``pod_not_ready``; upstream
has no such table: its fake object manager never unsets Ready): ``updateStatefulSet``'s ``processReplica``
and ``processCondemned`` read ``isRunningAndReady`` / ``isRunningAndAvailable`` at every sync, so such a pod
halts ``OrderedReady`` as one never Ready does.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from builders import Skip, cases, skipped_cases

from gpufleet.model.pod import Pod
from gpufleet.workloads.stateful_pods import parent_and_ordinal
from gpufleet.workloads.statefulset import ORDERED_READY, PARALLEL, StatefulSet, StatefulSetController

POLICIES = [pytest.param(ORDERED_READY, id="Monotonic"), pytest.param(PARALLEL, id="Burst")]


class Harness:
    """One StatefulSet ``foo`` and the pods its syncs made, as upstream's fake object manager keeps them."""

    def __init__(self, replicas: int, policy: str, start: int = 0, min_ready_s: float = 0.0) -> None:
        template = Pod("template", labels={"foo": "bar"})
        sts = StatefulSet("foo", "default", template, replicas, start=start, pod_management_policy=policy)
        sts.min_ready_s = min_ready_s
        self.controller = StatefulSetController(sts)
        self.pods: dict[str, Pod] = {}
        self.now = 0.0

    def sync(self) -> tuple[list[str], list[str]]:
        """``UpdateStatefulSet`` once: the names it created and those it deleted."""
        self.controller.tick(self.now)
        created = self.controller.wanted([])
        self.pods.update((p.name, p) for p in created)
        deleted = [key.split("/", 1)[1] for key, _ in self.controller.doomed()]
        for name in deleted:
            self.controller.pod_terminating(self.pods[name])
        return [p.name for p in created], deleted

    def ready(self, name: str) -> None:
        """``setPodRunning`` and ``setPodReady``."""
        self.controller.tick(self.now)
        self.controller.pod_ready(self.pods[name])

    def not_ready(self, name: str) -> bool:
        """The pod's Ready condition turns False while it runs; whether the set is synced again."""
        self.controller.tick(self.now)
        return self.controller.pod_not_ready(self.pods[name])

    def status(self) -> dict[str, int]:
        """``Status.Replicas``, ``ReadyReplicas``, ``AvailableReplicas``, ``CurrentReplicas``,
        ``UpdatedReplicas`` (``updateStatus``)."""
        self.controller.tick(self.now)
        return self.controller.status_counts()

    def gone(self, name: str) -> None:
        """The pod is removed (its deletion done, or upstream's ``podsIndexer.Delete``)."""
        self.controller.finished(self.pods.pop(name), succeeded=False)

    def held(self) -> list[str]:
        """The pods that exist, by ordinal."""
        return sorted(self.pods, key=lambda n: parent_and_ordinal(n)[1])

    def ready_pods(self) -> list[str]:
        return [n for n in self.held() if self.controller.pods[parent_and_ordinal(n)[1]].ready_s is not None]

    def assert_monotonic(self) -> None:
        """``assertMonotonicInvariants``: ordinals from start without a gap; no successor Ready before its
        predecessor."""
        ordinals = [parent_and_ordinal(n)[1] for n in self.held()]
        start = self.controller.stateful_set.start
        assert ordinals == list(range(start, start + len(ordinals)))
        ready = [n in self.ready_pods() for n in self.held()]
        assert all(not (b and not a) for a, b in pairwise(ready))

    def scale_up(self) -> None:
        """``scaleUpStatefulSetControl``: sync and make every pod it creates Running and Ready, until it
        holds ``replicas`` Ready pods."""
        while len(self.ready_pods()) < self.controller.replicas:
            created, _ = self.sync()
            assert created, "the sync created nothing"
            if self.controller.monotonic:
                assert len(created) == 1
                self.assert_monotonic()
            for name in created:
                self.ready(name)

    def scale_down(self) -> list[list[str]]:
        """``scaleDownStatefulSetControl``: sync, and let each pod it deletes go, until it holds
        ``replicas``; the deletions of each sync."""
        rounds = []
        while len(self.pods) > self.controller.replicas:
            _, deleted = self.sync()
            assert deleted, "the sync deleted nothing"
            rounds.append(deleted)
            for name in deleted:
                assert self.sync() == ([], [])  # being deleted: waited for
                self.gone(name)
        return rounds


@pytest.mark.parametrize("policy", POLICIES)
def test_creates_pods_with_pod_index_label_feature(policy: str) -> None:
    """``TestStatefulSetControl/CreatesPodsWithPodIndexLabelFeature``: 3 pods, each labelled with its
    index."""
    h = Harness(3, policy)
    h.scale_up()
    assert h.held() == ["foo-0", "foo-1", "foo-2"]
    assert [h.pods[n].labels["apps.kubernetes.io/pod-index"] for n in h.held()] == ["0", "1", "2"]
    assert (h.status()["replicas"], h.status()["readyReplicas"], h.status()["updatedReplicas"]) == (3, 3, 3)


@pytest.mark.parametrize("policy", POLICIES)
def test_scales_up(policy: str) -> None:
    """``TestStatefulSetControl/ScalesUp``: 3, then 4 Ready replicas; ``OrderedReady`` one a sync, each
    once the one before is Running and Ready."""
    h = Harness(3, policy)
    first, _ = h.sync()
    assert first == (["foo-0"] if policy == ORDERED_READY else ["foo-0", "foo-1", "foo-2"])
    if policy == ORDERED_READY:
        assert h.sync() == ([], [])  # foo-0 not Ready: nothing more
    for name in first:
        h.ready(name)
    h.scale_up()
    h.controller.scale(4)
    h.scale_up()
    assert h.held() == ["foo-0", "foo-1", "foo-2", "foo-3"] and len(h.ready_pods()) == 4
    assert (h.status()["replicas"], h.status()["readyReplicas"], h.status()["updatedReplicas"]) == (4, 4, 4)


@pytest.mark.parametrize("policy", POLICIES)
def test_scales_down(policy: str) -> None:
    """``TestStatefulSetControl/ScalesDown``: 3 Ready replicas to 0; ``OrderedReady`` deletes the highest
    ordinal first, one at a time, each once the one before it is gone; ``Parallel`` all at once."""
    h = Harness(3, policy)
    h.scale_up()
    h.controller.scale(0)
    rounds = h.scale_down()
    if policy == ORDERED_READY:
        assert rounds == [["foo-2"], ["foo-1"], ["foo-0"]]
    else:
        assert rounds == [["foo-2", "foo-1", "foo-0"]]
    assert h.pods == {}
    assert (h.status()["replicas"], h.status()["readyReplicas"], h.status()["updatedReplicas"]) == (0, 0, 0)


@pytest.mark.parametrize("policy", POLICIES)
def test_replaces_pods(policy: str) -> None:
    """``TestStatefulSetControl/ReplacesPods``: of 5 Ready pods, 0, 2 and 4 are removed; they are made again
    under their names, ``OrderedReady`` one by one in ordinal order, each once the one before is Ready."""
    h = Harness(5, policy)
    h.scale_up()
    for name in ("foo-0", "foo-2", "foo-4"):
        h.gone(name)
    made: list[list[str]] = []
    while len(h.pods) < 5:
        created, _ = h.sync()
        made.append(created)
        for name in created:
            h.ready(name)
    if policy == ORDERED_READY:
        assert made == [["foo-0"], ["foo-2"], ["foo-4"]]
    else:
        assert made == [["foo-0", "foo-2", "foo-4"]]
    assert len(h.ready_pods()) == 5


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
def test_recreates_terminal_pod(policy: str, phase: str) -> None:
    """``TestStatefulSetControl/RecreatesFailedPod`` and ``RecreatesSucceededPod`` (``recreatesPod``): a pod
    that ended is deleted, and its replacement, under the same name, is created by the sync after it is gone
    (``processReplica``: "New pod should be generated on the next sync after the current pod is removed")."""
    h = Harness(3, policy)
    h.scale_up()
    ended = h.pods["foo-0"]
    h.controller.pod_terminating(ended)  # the deletion of the terminal pod, not yet done
    assert h.sync() == ([], [])
    h.gone("foo-0")
    created, _ = h.sync()
    assert created == ["foo-0"]
    assert h.pods["foo-0"] is not ended


@pytest.mark.parametrize("policy", POLICIES)
def test_creates_pods_with_start_ordinal(policy: str) -> None:
    """``TestStatefulSetControlWithStartOrdinal/CreatesPodsWithStartOrdinal``: ``ordinals.start: 2``, 3
    replicas: ordinals 2, 3, 4."""
    h = Harness(3, policy, start=2)
    h.scale_up()
    assert h.held() == ["foo-2", "foo-3", "foo-4"]


def test_scale_down_respects_min_ready_seconds() -> None:
    """``TestStatefulSetScaleDownRespectsMinReadySeconds``: 3 pods Ready 10 s ago under ``minReadySeconds:
    30``, scaled to 1: no pod is available, so nothing is deleted; once they are (30 s after Ready), the
    highest goes."""
    h = Harness(3, ORDERED_READY, min_ready_s=30.0)
    for ordinal in range(3):
        h.sync()
        h.ready(f"foo-{ordinal}")
        h.now += 30.0  # each available before the next is created
    h.now = 100.0
    for name in h.held():  # Ready 10 s ago
        h.controller.pods[parent_and_ordinal(name)[1]].ready_s = 90.0
    h.controller.scale(1)
    assert h.sync() == ([], [])
    assert len(h.pods) == 3
    h.now = 120.0
    assert h.sync() == ([], ["foo-2"])


@pytest.mark.parametrize(
    ("replicas", "desired"),
    cases(
        "TestParallelScale",
        [
            ("scale up from 3 to 30", 3, 30),
            ("scale down from 10 to 1", 10, 1),
            ("scale down to 0", 501, 0),
            ("scale up from 0", 0, 1000),
        ],
        2,
    ),
)
def test_parallel_scale(replicas: int, desired: int) -> None:
    """``TestParallelScale``: ``Parallel`` creates or deletes the whole difference in one sync (upstream
    checks that its requests ran in parallel batches, ``slowStartBatch``; the outcome is one sync's)."""
    h = Harness(replicas, PARALLEL)
    h.scale_up()
    h.controller.scale(desired)
    created, deleted = h.sync()
    assert len(created) == max(desired - replicas, 0)
    assert len(deleted) == max(replicas - desired, 0)
    assert deleted == sorted(deleted, key=lambda n: -parent_and_ordinal(n)[1])


@pytest.mark.parametrize(
    ("ready_for_s", "available"),
    cases(
        "TestStatefulSetAvailability",
        [
            ("replicas running for required time, when minReadySeconds is enabled", 120 * 60.0, 1),
            ("replicas not running for required time, when minReadySeconds is enabled", 30 * 60.0, 0),
        ],
        2,
    ),
)
def test_availability(ready_for_s: float, available: int) -> None:
    """``TestStatefulSetAvailability``: one replica under ``minReadySeconds: 3600``, Ready ``ready_for_s``
    ago (``setPodAvailable``): ``Status.AvailableReplicas`` counts it only once Ready that long
    (``isRunningAndAvailable``)."""
    h = Harness(1, PARALLEL, min_ready_s=3600.0)
    h.scale_up()
    h.now = ready_for_s
    assert h.sync() == ([], [])
    assert (h.status()["readyReplicas"], h.status()["availableReplicas"]) == (1, available)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_pod_not_ready_again_halts_ordered_scale_up_until_it_is_ready_again(policy: str) -> None:
    """``updateStatefulSet`` / ``processReplica`` under ``monotonic``: of 3 Ready pods scaled to 5, ``foo-1``
    stops being Ready (``isHealthy`` false): the set is synced again (``updatePod``) and that sync, and every
    one after, creates nothing ("StatefulSet is waiting for Pod foo-1 to be Running and Ready") until it is
    Ready again; then ``foo-3``, then ``foo-4``. ``Parallel`` (``allowsBurst``) is not halted: both at once.
    Its status counts it Ready no more (``computeReplicaStatus``)."""
    h = Harness(3, policy)
    h.scale_up()
    h.controller.scale(5)
    assert h.not_ready("foo-1") == (policy == ORDERED_READY)
    assert (h.status()["readyReplicas"], h.status()["availableReplicas"]) == (2, 2)
    if policy == PARALLEL:
        assert h.sync() == (["foo-3", "foo-4"], [])
        return
    assert h.sync() == ([], [])
    assert h.sync() == ([], [])
    h.ready("foo-1")
    assert h.sync() == (["foo-3"], [])
    h.ready("foo-3")
    assert h.sync() == (["foo-4"], [])


@pytest.mark.parametrize("policy", POLICIES)
def test_an_in_range_pod_not_ready_again_halts_ordered_scale_down(policy: str) -> None:
    """``updateStatefulSet``: under ``monotonic`` the replicas come first (``runForAll`` over
    ``processReplica``), so an in-range pod not Ready again (``foo-0``) stops the sync before
    ``processCondemned``: of 3 pods scaled to 1 none is deleted until ``foo-0`` is Ready again, then
    ``foo-2``. ``Parallel`` deletes both condemned at once."""
    h = Harness(3, policy)
    h.scale_up()
    h.controller.scale(1)
    h.not_ready("foo-0")
    if policy == PARALLEL:
        assert h.sync() == ([], ["foo-2", "foo-1"])
        return
    assert h.sync() == ([], [])
    h.ready("foo-0")
    assert h.sync() == ([], ["foo-2"])


def test_a_condemned_pod_not_ready_again_waits_behind_the_first_unhealthy_one() -> None:
    """``processCondemned``: a condemned pod not Running and Ready is deleted only if it is the first
    unavailable pod (``firstUnavailablePod``: the lowest ordinal, in range first); otherwise the sync waits
    ("StatefulSet is waiting for Pod to be Running and Ready prior to scale down"). Of 4 Ready pods scaled to
    1, ``foo-1`` and ``foo-2`` stop being Ready: ``foo-3``, healthy, goes; then ``foo-2`` waits behind
    ``foo-1``, and goes once ``foo-1`` is Ready again (``foo-2`` is then the first unhealthy)."""
    h = Harness(4, ORDERED_READY)
    h.scale_up()
    h.controller.scale(1)
    h.not_ready("foo-1")
    h.not_ready("foo-2")
    assert h.sync() == ([], ["foo-3"])
    h.gone("foo-3")
    assert h.sync() == ([], [])
    h.ready("foo-1")
    assert h.sync() == ([], ["foo-2"])


def test_a_pod_ready_again_is_available_min_ready_seconds_after_its_new_ready_time() -> None:
    """``isRunningAndAvailable`` reads the Ready condition's ``lastTransitionTime``: a pod Ready again at
    100 s under ``minReadySeconds: 30`` halts ``processReplica`` until 130 s (the sync then is due,
    ``SyncsAgain``), however long it was Ready before."""
    h = Harness(2, ORDERED_READY, min_ready_s=30.0)
    for ordinal in range(2):
        h.sync()
        h.ready(f"foo-{ordinal}")
        h.now += 30.0
    h.controller.scale(3)
    h.now = 90.0
    h.not_ready("foo-0")
    h.now = 100.0
    h.ready("foo-0")
    assert h.sync() == ([], [])
    assert h.controller.sync_again_s() == 30.0
    assert h.status()["availableReplicas"] == 1
    h.now = 130.0
    h.controller.next_sync()
    assert h.sync() == (["foo-2"], [])


NOT_MODELLED: dict[str, tuple[list[str], str]] = {
    "TestStatefulSetControl/CreatesPodsWithoutPodIndexLabelFeature": (
        ["Monotonic", "Burst"],
        "PodIndexLabel is GA and locked on in 1.34",
    ),
    "TestStatefulSetControl/RecreatesFailedPodWithDeleteFailure": (
        ["Monotonic", "Burst"],
        "API errors (a failed delete) are not simulated",
    ),
    "TestStatefulSetControl/CreatePodFailure": (["Monotonic", "Burst"], "API errors are not simulated"),
    "TestStatefulSetControl/UpdatePodFailure": (["Monotonic", "Burst"], "API errors are not simulated"),
    "TestStatefulSetControl/UpdateSetStatusFailure": (["Monotonic", "Burst"], "API errors are not simulated"),
    "TestStatefulSetControl/NewRevisionDeletePodFailure": (
        ["Monotonic", "Burst"],
        "ControllerRevisions and rolling updates are not modelled",
    ),
    "TestStatefulSetControl/RecreatesPVCForPendingPod": (
        ["Monotonic", "Burst"],
        "volumeClaimTemplates are not modelled (a warning)",
    ),
    "TestStatefulSetControlRollingUpdate": (
        ["all"],
        "rolling updates are not modelled (updateStrategy: a warning)",
    ),
    "TestStatefulSetControlOnDeleteUpdate": (["all"], "rolling updates are not modelled"),
    "TestStatefulSetControlRollingUpdateWithPartition": (["all"], "rolling updates are not modelled"),
    "TestStatefulSetControlRollingUpdateWithMaxUnavailable": (
        ["all"],
        "MaxUnavailableStatefulSet is alpha (off) in 1.34",
    ),
    "TestStatefulSetControlRollback": (["all"], "ControllerRevisions are not modelled"),
    "TestStatefulSetControlLimitsHistory": (["all"], "ControllerRevisions are not modelled"),
    "TestStatefulSetHonorRevisionHistoryLimit": (["all"], "ControllerRevisions are not modelled"),
    "TestStatefulSetStatusUpdate": (
        ["no error", "sync error", "status error", "sync and status error"],
        "API errors (a failed create, a failed status update) are not simulated",
    ),
}


@pytest.mark.parametrize(
    "case",
    [c for test, (names, why) in NOT_MODELLED.items() for c in skipped_cases(test, names, Skip(why))],
)
def test_not_modelled(case: Any) -> None:
    raise AssertionError("skipped")
