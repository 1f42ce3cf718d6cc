"""A node pool's backoff after failed scale-ups, as cluster-autoscaler's
``utils/backoff/exponential_backoff.go`` (``exponentialBackoff.Backoff``) keeps it per node group."""

from __future__ import annotations

import numpy as np
import pytest

from gpufleet.model.node import Node
from gpufleet.model.simulation import AutoscalerSettings, NodePool
from gpufleet.sim.node_pools import PoolRuntime

SETTINGS = AutoscalerSettings()  # 5 m initial, 30 m max, reset 3 h after the last failure


def backoffs(failures: list[float], settings: AutoscalerSettings = SETTINGS) -> list[tuple[float, float]]:
    """(backoff, until) after each failure at these times."""
    pool = PoolRuntime.of(NodePool("h100", Node("template")), np.random.default_rng(0))
    out = []
    for t in failures:
        pool.back_off(t, settings)
        out.append((pool.backoff_s, pool.backoff_until))
    return out


def test_each_failure_after_the_backoff_ended_doubles_it_up_to_the_max() -> None:
    """``Backoff``: doubled when ``backoffUntil.Before(currentTime)``, strictly after it ended."""
    assert [b for b, _ in backoffs([0.0, 310.0, 920.0, 2130.0, 4540.0, 6350.0])] == [
        300.0, 600.0, 1200.0, 1800.0, 1800.0, 1800.0,
    ]  # fmt: skip


def test_a_failure_at_the_backoffs_last_instant_keeps_its_length() -> None:
    """``Backoff``: ``backoffUntil.Before(currentTime)`` is false at ``backoffUntil`` itself, so the
    duration stays; ``BackoffStatus`` still reports the group backed off then."""
    assert backoffs([0.0, 300.0]) == [(300.0, 300.0), (300.0, 600.0)]
    pool = PoolRuntime.of(NodePool("h100", Node("template")), np.random.default_rng(0))
    assert not pool.backed_off(0.0)  # never failed
    pool.back_off(0.0, SETTINGS)
    assert pool.backed_off(300.0) and not pool.backed_off(300.001)


def test_a_failure_during_the_backoff_keeps_its_length() -> None:
    """ "Multiple concurrent scale-ups failing shouldn't cause backoff duration to increase
    exponentially": the same duration, from the new failure."""
    assert backoffs([0.0, 100.0]) == [(300.0, 300.0), (300.0, 400.0)]


@pytest.mark.parametrize(("gap", "backoff"), [(3 * 3600.0, 600.0), (3 * 3600.0 + 1, 300.0)])
def test_a_failure_three_hours_after_the_last_starts_again_from_the_initial_backoff(
    gap: float, backoff: float
) -> None:
    """``--node-group-backoff-reset-timeout`` (3 h): a failure more than that after the last one
    (``lastFailedExecution.Add(backoffResetTimeout).Before(currentTime)``) is backed off as a first one;
    within it, its last instant included, doubled."""
    assert backoffs([0.0, gap])[1] == (backoff, gap + backoff)


def test_the_reset_timeout_is_the_simulations_setting() -> None:
    short = AutoscalerSettings(backoff_reset_s=600.0)
    assert [b for b, _ in backoffs([0.0, 310.0, 1000.0], short)] == [300.0, 600.0, 300.0]
