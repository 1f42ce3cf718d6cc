"""cluster-autoscaler 1.34's own drain table (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/simulator/drain_test.go``, ``TestGetPodsToMove``; and the replicated rule's,
``simulator/drainability/rules/replicated/rule_test.go``, ``TestDrainable``), case by case, with the
default delete options of the test (system pods, local storage and custom controllers all skip
the node; ``--blocking-system-pod-distruption-timeout`` 1 h). Upstream reports the blocking pod
with a reason code; gpufleet says it in words, matched here by the code's phrase. A pod's
``creationTimestamp`` is its age at the test's time (a zero timestamp: just created, as for
upstream it never passes the timeout)."""

from __future__ import annotations

import pytest
from ca_builders import pods_to_move

from gpufleet.autoscaling.drainability import (
    DAEMONSET_POD,
    MIRROR,
    SAFE_TO_EVICT,
    DeleteOptions,
    Drain,
    drainable,
)
from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.pod import OwnerRef, Pod

HOUR = 3600.0
REASONS = {
    "NotReplicated": "is not replicated",
    "UnmovableKubeSystemPod": "is a kube-system pod that no PodDisruptionBudget selects",
    "NotEnoughPdb": "is protected by PodDisruptionBudget",
}
VOLUMES = "pod volumes (EmptyDir, GitRepo; --skip-nodes-with-local-storage) are not modelled"
TERMINATING = (
    "pod phases and deletion timestamps are not modelled: gpufleet's pods leave their node when "
    "they end, and a deleted pod is gone after its grace period (no long-terminating pods)"
)
RULE_DOUBLES = "custom drainability rules (test doubles AlwaysDrain, NeverDrain) have no gpufleet analogue"


def _pod(
    name: str,
    namespace: str = "default",
    owner: str | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> Pod:
    return Pod(
        name,
        namespace=namespace,
        owner=OwnerRef(owner, "x") if owner else None,
        annotations=dict(annotations or {}),
        labels=dict(labels or {}),
    )


UNREPLICATED = _pod("unreplicatedPod", "ns")
MANIFEST = _pod("manifestPod", "kube-system", annotations={MIRROR: "something"})
SYSTEM = _pod("systemPod", "kube-system", "ReplicaSet")
PDB_POD = _pod("pdbPod", "ns", "ReplicaSet", labels={"critical": "true"})
RC_POD = _pod("bar", owner="ReplicationController")
KUBE_SYSTEM_RC_POD = _pod("bar", "kube-system", "ReplicationController", labels={"k8s-app": "bar"})
DS_POD = _pod("bar", owner="DaemonSet")
CDS_POD = _pod("bar", owner="CustomDaemonSet", annotations={DAEMONSET_POD: "true"})
JOB_POD = _pod("bar", owner="Job")
SS_POD = _pod("bar", owner="StatefulSet")
RS_POD = _pod("bar", owner="ReplicaSet")
SAFE = _pod("bar", annotations={SAFE_TO_EVICT: "true"})
KUBE_SYSTEM_SAFE = _pod("bar", "kube-system", annotations={SAFE_TO_EVICT: "true"})


def _pdb(namespace: str, labels: dict[str, str], allowed: int) -> tuple[DisruptionBudget, int]:
    return DisruptionBudget(namespace, "pdb", tuple(labels.items()), min_available=1), allowed


def _case(
    desc: str,
    pods: list[Pod | tuple[Pod, float]] | None = None,
    pdbs: list[tuple[DisruptionBudget, int]] | None = None,
    moved: list[str] | None = None,
    daemons: list[str] | None = None,
    blocking: str | None = None,
    skip: str = "",
) -> object:
    aged = [p if isinstance(p, tuple) else (p, 0.0) for p in pods or []]
    marks = [pytest.mark.skip(reason=skip)] if skip else []
    expected = (moved or [], daemons or [], blocking)
    return pytest.param(aged, pdbs or [], expected, id=f"TestGetPodsToMove/{desc}", marks=marks)


CASES = [
    _case("Unreplicated pod", [UNREPLICATED], blocking="NotReplicated"),
    _case("Replicated pod", [RS_POD], moved=["bar"]),
    _case("Manifest pod", [MANIFEST]),
    _case("DaemonSet pod", [RS_POD, MANIFEST, DS_POD], moved=["bar"], daemons=["bar"]),
    _case("Kube-system", [SYSTEM], blocking="UnmovableKubeSystemPod"),
    _case(
        "Kube-system no pdb system pods blocking",
        [(SYSTEM, HOUR - 60)],
        blocking="UnmovableKubeSystemPod",
    ),
    _case("Kube-system no pdb system pods allowing", [(SYSTEM, HOUR + 60)], moved=["systemPod"]),
    _case(
        "Kube-system no pdb system pods blocking (second case of that name)",
        [(SYSTEM, HOUR + 60), (SYSTEM, HOUR - 60)],
        blocking="UnmovableKubeSystemPod",
    ),
    _case("Local storage", skip=VOLUMES),
    _case("Non-local storage", skip=VOLUMES),
    _case("Pdb blocking", [PDB_POD], [_pdb("ns", {"critical": "true"}, 0)], blocking="NotEnoughPdb"),
    _case("Pdb allowing", [PDB_POD], [_pdb("ns", {"critical": "true"}, 1)], moved=["pdbPod"]),
    _case("Pod termination", skip=TERMINATING),
    _case("Rule allows", skip=RULE_DOUBLES),
    _case("Second rule allows", skip=RULE_DOUBLES),
    _case("Rule blocks", skip=RULE_DOUBLES),
    _case("Second rule blocks", skip=RULE_DOUBLES),
    # the undecisive rule (CantDecide) leaves every pod to the default rules
    _case(
        "Undecisive rule fallback to default logic: Unreplicated pod",
        [UNREPLICATED],
        blocking="NotReplicated",
    ),
    _case("Undecisive rule fallback to default logic: Replicated pod", [RS_POD], moved=["bar"]),
    _case("RC-managed pod", [RC_POD], moved=["bar"]),
    _case("DS-managed pod", [DS_POD], daemons=["bar"]),
    _case("DS-managed pod by a custom Daemonset", [CDS_POD], daemons=["bar"]),
    _case("Job-managed pod", [JOB_POD], moved=["bar"]),
    _case("SS-managed pod", [SS_POD], moved=["bar"]),
    _case("RS-managed pod", [RS_POD], moved=["bar"]),
    _case("RS-managed pod that is being deleted", skip=TERMINATING),
    _case("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with matching values", skip=VOLUMES),
    _case("failed pod", skip=TERMINATING),
    _case("long terminating pod with 0 grace period", skip=TERMINATING),
    _case("long terminating pod with extended grace period", skip=TERMINATING),
    _case("evicted pod", skip=TERMINATING),
    _case("pod in terminal state", skip=TERMINATING),
    _case("pod with PodSafeToEvict annotation", [SAFE], moved=["bar"]),
    _case("kube-system pod with PodSafeToEvict annotation", [KUBE_SYSTEM_SAFE], moved=["bar"]),
    _case("pod with EmptyDir and PodSafeToEvict annotation", skip=VOLUMES),
    _case(
        "empty PDB with RC-managed pod",
        [RC_POD],
        [(DisruptionBudget("", "", ()), 0)],
        moved=["bar"],
    ),
    _case(
        "kube-system PDB with matching kube-system pod",
        [KUBE_SYSTEM_RC_POD],
        [_pdb("kube-system", {"k8s-app": "bar"}, 1)],
        moved=["bar"],
    ),
    _case(
        "kube-system PDB with non-matching kube-system pod",
        [KUBE_SYSTEM_RC_POD],
        [_pdb("kube-system", {"k8s-app": "foo"}, 1)],
        blocking="UnmovableKubeSystemPod",
    ),
    _case(
        "kube-system PDB with default namespace pod",
        [RC_POD],
        [_pdb("kube-system", {"k8s-app": "bar"}, 1)],
        moved=["bar"],
    ),
    _case(
        "default namespace PDB with matching labels kube-system pod",
        [KUBE_SYSTEM_RC_POD],
        [_pdb("default", {"k8s-app": "PDB-managed pod"}, 1)],
        blocking="UnmovableKubeSystemPod",
    ),
]


@pytest.mark.parametrize(("pods", "pdbs", "expected"), CASES)
def test_get_pods_to_move(
    pods: list[tuple[Pod, float]],
    pdbs: list[tuple[DisruptionBudget, int]],
    expected: tuple[list[str], list[str], str | None],
) -> None:
    """``GetPodsToMove``: the pods a drain moves, the DaemonSet pods, or the pod that blocks it."""
    moved, daemons, blocking = expected
    got_moved, got_daemons, blocker = pods_to_move(pods, pdbs)
    assert (got_moved, got_daemons) == (moved, daemons)
    if blocking is None:
        assert blocker is None
    else:
        assert blocker is not None and REASONS[blocking] in blocker


def test_safe_to_evict_true_is_moved_even_past_an_exhausted_budget() -> None:
    """``rules.Drainable``: the safe-to-evict rule's Drainable status ends the chain before the PDB
    rule, so the drain plan moves the pod (gpufleet used to block it)."""
    pod = _pod("bar", annotations={SAFE_TO_EVICT: "true"}, labels={"app": "x"})
    assert pods_to_move([(pod, 0.0)], [_pdb("default", {"app": "x"}, 0)]) == (["bar"], [], None)


def _replicated_case(desc: str, owner: str | None, flag: bool, blocks: bool, skip: str = "") -> object:
    marks = [pytest.mark.skip(reason=skip)] if skip else []
    return pytest.param(_pod("bar", owner=owner), flag, blocks, id=f"TestDrainable/{desc}", marks=marks)


REPLICATED_CASES = [
    *(
        _replicated_case(
            f"{desc} with skipNodesWithCustomControllerPods:{str(flag).lower()}", owner, flag, blocks
        )
        for flag in (True, False)
        for desc, owner, blocks in (
            ("RC-managed pod", "ReplicationController", False),
            ("Job-managed pod", "Job", False),
            ("SS-managed pod", "StatefulSet", False),
            ("RS-managed pod", "ReplicaSet", False),
            ("naked pod", None, True),
        )
    ),
    *(
        _replicated_case(
            "RS-managed pod that is being deleted with "
            f"skipNodesWithCustomControllerPods:{str(flag).lower()}",
            "ReplicaSet",
            flag,
            False,
            skip=TERMINATING,
        )
        for flag in (True, False)
    ),
    _replicated_case("custom-controller-managed non-blocking pod", "FooController", False, False),
    _replicated_case("custom-controller-managed blocking pod", "FooController", True, True),
]


@pytest.mark.parametrize(("pod", "skip_custom", "blocks"), REPLICATED_CASES)
def test_replicated_rule(pod: Pod, skip_custom: bool, blocks: bool) -> None:
    """``simulator/drainability/rules/replicated/rule_test.go`` ``TestDrainable``: a pod with no controller is
    ``NotReplicated``; a custom controller's pod too, only under ``--skip-nodes-with-custom-controller-pods``
    (``DeleteOptions.skip_nodes_with_custom_controller_pods``). The listers' controllers exist, as gpufleet's
    do (the ``replicacount`` rule is not modelled)."""
    drain = drainable(pod, [], {}, 0.0, DeleteOptions(skip_nodes_with_custom_controller_pods=skip_custom))
    if blocks:
        assert drain.blocker is not None and REASONS["NotReplicated"] in drain.blocker
    else:
        assert drain == Drain(True)
