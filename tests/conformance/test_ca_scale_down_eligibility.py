"""cluster-autoscaler 1.34's own scale-down eligibility table (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/scaledown/eligibility/eligibility_test.go``, ``TestFilterOutUnremovable``),
case by case. Upstream runs its ten base cases twice, once with the suffix
``IgnoreDaemonSetUtilization=false`` and once under their plain names (``getTestCases(true, ...)``
appends its three extra cases to the unsuffixed base list, so both runs leave
``ignoreDaemonSetsUtilization`` false); each run is a pytest id here. The unremovable nodes are
checked with upstream's reason (``simulator.UnremovableReason``) too."""

from __future__ import annotations

import pytest
from ca_builders import build_test_node, build_test_pod, unneeded_and_unremovable

from gpufleet.autoscaling.scale_down import UnremovableReason
from gpufleet.model.dra import Device, ResourceSlice
from gpufleet.model.node import Node
from gpufleet.model.pod import Pod

REGULAR = build_test_node("regular", 1000, 10)
NO_SCALE_DOWN = build_test_node("noScaleDown", 1000, 10, scale_down_disabled=True)
BROKEN_UTIL = build_test_node("regular", 0, 0)
UNREADY_NODE = build_test_node("unready", 1000, 10)  # SetNodeReadyState(unreadyNode, false, ...)
BIG_POD = build_test_pod("bigPod", 600, 0)
SMALL_POD = build_test_pod("smallPod", 100, 0)
DS_POD = build_test_pod("dsPod", 500, 0, daemon_set=True)
INCOMPLETE_SLICE = ResourceSlice(
    "regularNodeIncompleteResourceSlice",
    "driver.foo.com",
    "regular-pool",
    (Device("dev1"),),
    node_name="regular",
    resource_slice_count=999,
)

BEING_DELETED = (
    "a node tainted ToBeDeletedByClusterAutoscaler (CurrentlyBeingDeleted): gpufleet's loop leaves the "
    "nodes its own cloud is deleting out of the candidates, and does not read the taint from a snapshot"
)
DRA_DISABLED = "DRA is always enabled in gpufleet (no DynamicResourceAllocation feature gate to turn off)"


def _base(suffix: str) -> list[object]:
    def case(
        desc: str,
        nodes: list[Node] | None = None,
        pods: list[Pod] | None = None,
        unneeded: list[str] | None = None,
        reason: UnremovableReason | None = None,  # the unremovable node's
        skip: str = "",
        slices: tuple[ResourceSlice, ...] = (),
        scale_down_unready: bool = True,
    ) -> object:
        marks = [pytest.mark.skip(reason=skip)] if skip else []
        name = f"{desc} {suffix}" if suffix else desc
        return pytest.param(
            nodes or [],
            pods or [],
            unneeded or [],
            reason,
            0.5,
            slices,
            False,
            scale_down_unready,
            id=f"TestFilterOutUnremovable/{name}",
            marks=marks,
        )

    return [
        case("regular node stays", [REGULAR], [], ["regular"]),
        case("recently deleted node is filtered out", skip=BEING_DELETED),
        case(
            "marked no scale down is filtered out",
            [NO_SCALE_DOWN, REGULAR],
            [],
            ["regular"],
            UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION,
        ),
        case(
            "highly utilized node is filtered out",
            [REGULAR],
            [BIG_POD],
            [],
            UnremovableReason.NOT_UNDERUTILIZED,
        ),
        case("underutilized node stays", [REGULAR], [SMALL_POD], ["regular"]),
        case(
            "node is filtered out if utilization can't be calculated",
            [BROKEN_UTIL],
            [SMALL_POD],
            [],
            UnremovableReason.UNEXPECTED_ERROR,
        ),
        case("unready node stays", [UNREADY_NODE], [], ["unready"]),
        case(
            "unready node is filtered oud when scale-down of unready is disabled",
            [UNREADY_NODE],
            [],
            [],
            UnremovableReason.SCALE_DOWN_UNREADY_DISABLED,
            scale_down_unready=False,
        ),
        case("Node is not filtered out because of DRA issues if DRA is disabled", skip=DRA_DISABLED),
        case(
            "Node is filtered out because of DRA issues if DRA is enabled",
            [REGULAR],
            [SMALL_POD],
            [],
            UnremovableReason.UNEXPECTED_ERROR,
            slices=(INCOMPLETE_SLICE,),
        ),
    ]


def _extra() -> list[object]:
    """The cases with DaemonSet pods: ``--ignore-daemonsets-utilization`` takes their requests out of
    the pods' and out of the node's (``CalculateUtilizationOfResource``): 100m of 1000m less 500m."""
    only_ds = "TestFilterOutUnremovable/only daemonsets pods on this nodes"
    return [
        pytest.param(
            [REGULAR],
            [SMALL_POD, DS_POD],
            [],
            UnremovableReason.NOT_UNDERUTILIZED,
            0.5,
            (),
            False,
            True,
            id="TestFilterOutUnremovable/high utilization daemonsets node is filtered out",
        ),
        pytest.param(
            [REGULAR],
            [SMALL_POD, DS_POD],
            ["regular"],
            None,
            0.5,
            (),
            True,
            True,
            id="TestFilterOutUnremovable/high utilization daemonsets node stays",
        ),
        pytest.param([REGULAR], [DS_POD], ["regular"], None, 0.0, (), True, True, id=only_ds),
    ]


@pytest.mark.parametrize(
    ("nodes", "pods", "unneeded", "reason", "threshold", "slices", "ignore_daemonsets", "scale_down_unready"),
    _base("IgnoreDaemonSetUtilization=false") + _base("") + _extra(),
)
def test_filter_out_unremovable(
    nodes: list[Node],
    pods: list[Pod],
    unneeded: list[str],
    reason: UnremovableReason | None,
    threshold: float,
    slices: tuple[ResourceSlice, ...],
    ignore_daemonsets: bool,
    scale_down_unready: bool,
) -> None:
    """``FilterOutUnremovable``: the nodes left as unneeded candidates; every other node is unremovable,
    for upstream's ``reason`` (``ScaleDownDisabledAnnotation``, ``NotUnderutilized``, ``UnexpectedError``,
    ``ScaleDownUnreadyDisabled``). The node named ``unready`` is not Ready."""
    got_unneeded, got_unremovable = unneeded_and_unremovable(
        nodes, pods, threshold, slices, ignore_daemonsets, ["unready"], scale_down_unready
    )
    assert got_unneeded == unneeded
    assert got_unremovable == [(n.name, reason) for n in nodes if n.name not in unneeded]


def test_a_node_exactly_at_the_threshold_is_underutilized() -> None:
    """``isNodeAtOrBelowUtilizationThreshold``: only utilization *above* the threshold keeps a node."""
    half = build_test_pod("half", 500, 0)
    assert unneeded_and_unremovable([REGULAR], [half], 0.5) == (["regular"], [])
