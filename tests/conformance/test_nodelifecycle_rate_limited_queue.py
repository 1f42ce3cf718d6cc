"""Kubernetes 1.34.10 ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue_test.go``: none of its rows
can be expressed. gpufleet's zone ``NoExecute`` tainter is no ``RateLimitedTimedQueue``: it keeps, for each
zone, when the zone may taint its next node (``sim.unreachable_nodes``: one at once, then one every 1 / the
zone's rate, ``model.node_lifecycle_zones.tainting_qps``, judged as each node goes NotReady); the queue's own
operations (``UniqueQueue``'s Add, Remove, Get, Clear, ``Try``'s retries and ordering, ``SwapLimiter``'s
drained token) have no counterpart. The rates it swaps between are checked by
``test_nodelifecycle_node_lifecycle_controller.py`` (``setLimiterInZone``, and a large zone partially
disrupted tainting every 100 s)."""

from __future__ import annotations

import pytest

NO_QUEUE = "gpufleet's zone tainter is a next-taint time per zone, not a RateLimitedTimedQueue"


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(name, marks=pytest.mark.skip(reason=NO_QUEUE))
        for name in (
            "TestUniqueQueueGet",
            "TestAddNode",
            "TestDelNode",
            "TestTry",
            "TestTryOrdering",
            "TestTryRemovingWhileTry",
            "TestClear",
            "TestSwapLimiter",
            "TestAddAfterTry",
        )
    ],
)
def test_rate_limited_queue_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)
