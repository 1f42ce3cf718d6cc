"""Kubernetes 1.34.10 ``pkg/controller/nodelifecycle/scheduler/rate_limited_queue_test.go``: the rows gpufleet
can express. A zone's ``NoExecute`` tainter (``sim.unreachable_nodes.Tainter``) is a queue of the zone's
NotReady nodes in the order they went NotReady and a token bucket of burst 1 at the zone's rate, swapped as
``handleDisruption`` judges the zone (``SwapLimiter``: ``TestSwapLimiter``). The queue's own operations
(``UniqueQueue``'s Get, Clear, ``Try``'s retries and its ordering by ``ProcessAt``) have no counterpart; the
drain at the rates it swaps between is checked through simulations by ``tests/sim/test_zone_disruption.py``
and ``test_nodelifecycle_node_lifecycle_controller.py``."""

from __future__ import annotations

import math

import pytest

from gpufleet.sim.unreachable_nodes import Tainter

NO_QUEUE = (
    "the tainter's queue operations (UniqueQueue, Try's retries and ProcessAt ordering) are not modelled"
)


def test_swap_limiter_gives_the_new_rate_drained_and_keeps_the_limiter_of_the_same_rate() -> None:
    """``TestSwapLimiter``: ``SwapLimiter(0)`` gives a limiter that never lets one through
    (``NewFakeNeverRateLimiter``); then ``SwapLimiter(5.5)`` a token bucket of 5.5 a second, drained since
    the old one held no token (its first token 1 / 5.5 s later); the same rate again keeps the limiter as
    it is. The never-limiter's ``QPS()`` is 1 (``fakeNeverRateLimiter``), as the test checks."""
    tainter = Tainter()
    tainter.swap(0.0, 10.0)
    assert (tainter.never, tainter.limiter_qps, tainter.next_token_s) == (True, 1.0, math.inf)
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


def test_a_limiter_that_never_lets_one_through_is_kept_when_swapped_to_1_a_second() -> None:
    """gpufleet's own, from ``SwapLimiter``'s code and ``fakeNeverRateLimiter.QPS()`` (1): swapped to a rate
    of 1, a limiter that never lets one through is kept as it is (the rates compare equal); to another rate
    above 0 it is a new bucket, drained (``TryAccept`` of the old one is false)."""
    tainter = Tainter()
    tainter.swap(0.0, 10.0)
    tainter.swap(1.0, 20.0)
    assert (tainter.never, tainter.next_token_s) == (True, math.inf)
    tainter.swap(2.0, 30.0)
    assert (tainter.never, tainter.qps, tainter.next_token_s) == (False, 2.0, 30.5)


def test_a_first_bucket_at_rate_0_lets_one_node_through_and_then_none() -> None:
    """gpufleet's own, from ``addPodEvictorForNewZone`` (``NewTokenBucketRateLimiter(evictionLimiterQPS, 1)``,
    the rate unchecked) and golang.org/x/time/rate v0.9.0 (a bucket starts full; at a rate of 0 or less no
    token accrues, ``tokensFromDuration``): one token, then none; ``SwapLimiter(0)`` keeps it (its ``QPS()``
    is 0 already); a rate above 0 after the token was taken is a new bucket, drained."""
    tainter = Tainter(qps=0.0)
    assert tainter.next_token_s == -math.inf
    tainter.take(50.0)
    assert tainter.next_token_s == math.inf
    tainter.swap(0.0, 60.0)
    assert (tainter.never, tainter.next_token_s) == (False, math.inf)
    tainter.swap(0.01, 70.0)
    assert (tainter.qps, tainter.next_token_s) == (0.01, 170.0)


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
