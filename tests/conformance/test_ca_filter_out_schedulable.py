"""cluster-autoscaler 1.34's own table for ``filterOutSchedulable`` (tag ``cluster-autoscaler-1.34.5``,
``cluster-autoscaler/core/podlistprocessor/filter_out_schedulable_test.go``, ``TestFilterOutSchedulable``),
case by case: the pending pods tried highest priority first on one 2-cpu node (``buildReadyTestNode("node",
2000, 100)``), each pod that fits added to the snapshot; the pods the snapshot holds afterwards and those left
unschedulable, as sets (``ElementsMatch``)."""

from __future__ import annotations

import pytest
from ca_builders import build_test_pod, filter_out_schedulable

from gpufleet.model.pod import Pod


def pod(name: str, millicpu: int, priority: int = 0) -> Pod:
    """``BuildTestPod(name, millicpu, 10)``, ``buildPriorityTestPod`` with a ``priority``."""
    return build_test_pod(name, millicpu, 10, priority=priority)


VARIOUS = [pod("pod1", 200), pod("pod2", 500), pod("pod3", 1800)]


@pytest.mark.parametrize(
    ("existing", "candidates", "any_node", "scheduled", "unscheduled"),
    [
        pytest.param([], [], True, [], [], id="TestFilterOutSchedulable/single empty node, no pods"),
        pytest.param(
            [],
            [pod("pod", 500)],
            True,
            ["pod"],
            [],
            id="TestFilterOutSchedulable/single empty node, single schedulable pod",
        ),
        pytest.param(
            [],
            [pod("pod1", 200), pod("pod2", 500), pod("pod3", 800)],
            True,
            ["pod1", "pod2", "pod3"],
            [],
            id="TestFilterOutSchedulable/single empty node, many schedulable pods",
        ),
        pytest.param(
            [],
            [pod("pod1", 3000)],
            True,
            [],
            ["pod1"],
            id="TestFilterOutSchedulable/single empty node, single unschedulable pod",
        ),
        pytest.param(
            [],
            VARIOUS,
            True,
            ["pod1", "pod2"],
            ["pod3"],
            id="TestFilterOutSchedulable/single empty node, various pods",
        ),
        pytest.param(
            [],
            [pod("pod1", 200), pod("pod2", 500, priority=10), pod("pod3", 1800, priority=20)],
            True,
            ["pod1", "pod3"],
            ["pod2"],
            id="TestFilterOutSchedulable/single empty node, some priority pods",
        ),
        pytest.param(
            [pod("pod1", 500)],
            [pod("pod2", 1000), pod("pod3", 300), pod("pod4", 300)],
            True,
            ["pod2", "pod3"],
            ["pod4"],
            id="TestFilterOutSchedulable/non-empty node with a single pods scheduled",
        ),
        pytest.param(
            [pod("pod1", 500), pod("pod2", 1000)],
            [pod("pod3", 1000), pod("pod4", 300), pod("pod5", 300)],
            True,
            ["pod4"],
            ["pod3", "pod5"],
            id="TestFilterOutSchedulable/non-empty node with many pods scheduled",
        ),
        pytest.param(
            [],
            VARIOUS,
            False,
            [],
            ["pod1", "pod2", "pod3"],
            id="TestFilterOutSchedulable/single empty node, various pods, node should not be considered",
        ),
    ],
)
def test_filter_out_schedulable(
    existing: list[Pod], candidates: list[Pod], any_node: bool, scheduled: list[str], unscheduled: list[str]
) -> None:
    """``expectedScheduledPods`` plus the node's pods, and ``expectedUnscheduledPods``."""
    placed = sorted([p.name for p in existing] + scheduled)
    assert filter_out_schedulable(existing, candidates, any_node) == (placed, sorted(unscheduled))
