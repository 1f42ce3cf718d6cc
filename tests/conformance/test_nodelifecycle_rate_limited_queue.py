"""Kubernetes 1.34.10 ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue_test.go``: the rows gpufleet
can express. A zone's ``NoExecute`` tainter (``sim.unreachable_nodes.Tainter``) is a queue of the zone's
NotReady nodes in the order they went NotReady and a token bucket of burst 1 at the zone's rate, swapped as
``handleDisruption`` judges the zone (``SwapLimiter``: ``TestSwapLimiter``). The queue's own operations
(``UniqueQueue``'s Get, Clear, ``Try``'s retries and its ordering by ``ProcessAt``) have no counterpart; the
drain at the rates it swaps between is checked through simulations by ``tests/sim/test_zone_disruption.py``
and ``test_nodelifecycle_node_lifecycle_controller.py``."""

from __future__ import annotations

import pytest

from gpufleet.sim.unreachable_nodes import Tainter

NO_QUEUE = (
    "the tainter's queue operations (UniqueQueue, Try's retries and ProcessAt ordering) are not modelled"
)


def test_swap_limiter_gives_the_new_rate_drained_and_keeps_the_limiter_of_the_same_rate() -> None:
    """``TestSwapLimiter``: ``SwapLimiter(0)`` gives a limiter that never lets one through
    (``NewFakeNeverRateLimiter``); then ``SwapLimiter(5.5)`` a token bucket of 5.5 a second, drained since
    the old one held no token (its first token 1 / 5.5 s later); the same rate again keeps the limiter as
    it is."""
    tainter = Tainter()
    tainter.swap(0.0, 10.0)
    assert tainter.qps == 0.0
    tainter.swap(5.5, 20.0)
    assert (tainter.qps, tainter.token_s) == (5.5, 20.0 + 1 / 5.5)
    tainter.swap(5.5, 30.0)
    assert (tainter.qps, tainter.token_s) == (5.5, 20.0 + 1 / 5.5)


def test_swap_limiter_keeps_the_token_the_old_bucket_held() -> None:
    """gpufleet's own, from ``SwapLimiter``'s code: where the old bucket holds a token (``TryAccept`` true),
    the new one starts full: the next node goes at once, at the new rate after."""
    tainter = Tainter()
    tainter.swap(0.01, 5.0)
    assert (tainter.qps, tainter.token_s) == (0.01, 5.0)


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
            "TestAddAfterTry",
        )
    ],
)
def test_rate_limited_queue_rows_gpufleet_cannot_express(row: str) -> None:
    raise AssertionError(row)
