"""A StatefulSet's pods, named, labelled and judged: ``stateful_set_utils_test.go``.

Upstream: ``k8s.io/kubernetes`` v1.34.10, ``pkg/controller/statefulset/stateful_set_utils_test.go``, run
against ``gpufleet.workloads.stateful_pods``. Upstream's ``newStatefulSet(3)`` is the set ``foo`` in
namespace ``default``; ``newStatefulSetPod(set, 1)`` is ``stateful_pod`` of its template. Upstream mutates a
pod in place (``pod.Name = "foo"``); here each row is a pod made with that change. ``updateIdentity`` is the
identity ``stateful_pod`` stamps: gpufleet makes pods, it never updates one's identity.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from builders import Skip, cases, skipped_cases

from gpufleet.model.pod import Pod
from gpufleet.workloads.stateful_pods import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    Replica,
    identity_matches,
    is_member_of,
    parent_and_ordinal,
    running_and_ready,
    stateful_pod,
)

SET, NAMESPACE = "foo", "default"
TEMPLATE = Pod("template", labels={"foo": "bar"})


def set_pod(ordinal: int, name: str = SET) -> Pod:
    """``newStatefulSetPod(set, ordinal)``."""
    return stateful_pod(TEMPLATE, name, NAMESPACE, ordinal)


def test_new_stateful_set_pod_is_named_labelled_and_owned_as_new_stateful_set_pod_makes_it() -> None:
    """``newStatefulSetPod`` / ``initIdentity`` (``TestCreatesPodsWithPodIndexLabelFeature``'s labels):
    ``<set>-<ordinal>``, the pod-name and pod-index labels, the StatefulSet as controller."""
    pod = set_pod(1)
    assert (pod.name, pod.namespace) == ("foo-1", NAMESPACE)
    assert pod.labels == {"foo": "bar", POD_NAME_LABEL: "foo-1", POD_INDEX_LABEL: "1"}
    assert pod.owner is not None and (pod.owner.kind, pod.owner.name) == ("StatefulSet", SET)


@pytest.mark.parametrize(
    ("name", "parent", "ordinal"),
    cases(
        "TestGetParentNameAndOrdinal",
        [
            ("member", "foo-1", "foo", 1),
            ("non-member", "1-bar", "", -1),
            # beyond upstream's rows: the regexp is greedy, and an ordinal past int32 does not parse
            ("dashed parent", "foo-bar-12", "foo-bar", 12),
            ("ordinal past int32", f"foo-{2**31}", "foo", -1),
        ],
        3,
    ),
)
def test_get_parent_name_and_ordinal(name: str, parent: str, ordinal: int) -> None:
    assert parent_and_ordinal(name) == (parent, ordinal)


@pytest.mark.parametrize(
    ("set_name", "member"),
    cases("TestIsMemberOf", [("its set", "foo", True), ("another set foo2", "foo2", False)], 2),
)
def test_is_member_of(set_name: str, member: bool) -> None:
    assert is_member_of(set_name, set_pod(1).name) is member


def _without_pod_name_label(pod: Pod) -> Pod:
    return replace(pod, labels={k: v for k, v in pod.labels.items() if k != POD_NAME_LABEL})


@pytest.mark.parametrize(
    ("pod", "matches"),
    cases(
        "TestIdentityMatches",
        [
            ("newly created pod", set_pod(1), True),
            ("wrong name", replace(set_pod(1), name="foo"), False),
            ("wrong namespace", replace(set_pod(1), namespace=""), False),
            ("no statefulSetPodNameLabel", _without_pod_name_label(set_pod(1)), False),
        ],
        2,
    ),
)
def test_identity_matches(pod: Pod, matches: bool) -> None:
    assert identity_matches(SET, NAMESPACE, pod) is matches


@pytest.mark.parametrize(
    ("phase", "ready", "want"),
    cases(
        "TestIsRunningAndReady",
        [
            ("pending", "Pending", False, False),
            ("running, no Ready condition", "Running", False, False),
            ("running and ready", "Running", True, True),
        ],
        3,
    ),
)
def test_is_running_and_ready(phase: str, ready: bool, want: bool) -> None:
    assert running_and_ready(phase, ready) is want


@pytest.mark.parametrize(
    ("ready_s", "min_ready_s", "want"),
    cases(
        "TestStatefulSetAvailability",
        [
            ("replicas running for required time", -120 * 60.0, 3600.0, True),
            ("replicas not running for required time", -30 * 60.0, 3600.0, False),
            # TestStatefulSetZeroMinReadySeconds: Ready is available at once
            ("zero minReadySeconds", 0.0, 0.0, True),
        ],
        3,
    ),
)
def test_stateful_set_availability(ready_s: float, min_ready_s: float, want: bool) -> None:
    """``isRunningAndAvailable`` at time 0 of a pod Ready since ``ready_s`` (``setPodAvailable``)."""
    assert Replica("default/foo-0", ready_s).available(min_ready_s, 0.0) is want


NOT_MODELLED: dict[str, tuple[list[str], str]] = {
    "TestUpdateIdentity": (
        ["restores namespace", "restores statefulSetPodName label"],
        "gpufleet makes a StatefulSet's pods with their identity and never updates an existing pod's",
    ),
    "TestStorageMatches": (["storage"], "volumeClaimTemplates are not modelled (a warning)"),
    "TestGetClaimPodName": (["claim name"], "volumeClaimTemplates are not modelled (a warning)"),
    "TestUpdateStorage": (["storage"], "volumeClaimTemplates are not modelled (a warning)"),
    "TestGetPersistentVolumeClaimRetentionPolicy": (["policy"], "PVC retention is not modelled (a warning)"),
    "TestCreateApplyRevision": (["revision"], "ControllerRevisions and rolling updates are not modelled"),
    "TestRollingUpdateApplyRevision": (
        ["revision"],
        "ControllerRevisions and rolling updates are not modelled",
    ),
    "TestGetStatefulSetMaxUnavailable": (
        ["maxUnavailable"],
        "MaxUnavailableStatefulSet is alpha (off) in 1.34",
    ),
    "TestOverlappingStatefulSets": (
        ["sort"],
        "gpufleet adopts by ownerReferences, not by overlapping selectors",
    ),
}


@pytest.mark.parametrize(
    "case",
    [c for test, (names, why) in NOT_MODELLED.items() for c in skipped_cases(test, names, Skip(why))],
)
def test_not_modelled(case: Any) -> None:
    raise AssertionError("skipped")
