"""Fidelity cases dealt to several control planes side by side (``e2e.fidelity.run.side_by_side`` and
``run_cases``; ``make fidelity --control-planes N``), on the session's control plane and one more."""

from __future__ import annotations

import time
from itertools import islice
from typing import Any

from e2e.fidelity.case import Case, flatten
from e2e.fidelity.run import run_cases, side_by_side
from e2e.fidelity.sources import all_cases


def _cases_with_a_scheduler_configuration(count: int) -> list[Case]:
    """The first ``count`` generated cases that restart kube-scheduler with their own configuration."""
    generated = (c for c in all_cases() if c.origin == "generated")
    return list(islice((c for c in generated if flatten(c).scheduler_config is not None), count))


def test_cases_dealt_to_two_control_planes_come_back_in_order_and_the_first_keeps_its_scheduler(
    control_plane: Any,
) -> None:
    """Case ``k`` runs on control plane ``k % 2 + 1`` and the results come back in the cases' order. The
    first control plane's cases run in the calling thread: kube-scheduler, which they restart with their
    configuration, would otherwise die with the worker thread that started it (``PR_SET_PDEATHSIG``) and
    leave the session's control plane without a scheduler. The other control plane is removed after."""
    cases = _cases_with_a_scheduler_configuration(4)
    assert len(cases) == 4
    with side_by_side(control_plane, 2) as clusters:
        other = clusters[1].cp
        results, _ = run_cases(clusters, cases)
    assert [r.name for r in results] == [c.name for c in cases]
    assert [r.control_plane for r in results] == [1, 2, 1, 2]
    assert all(not r.error and r.pods for r in results), [r.error for r in results]
    time.sleep(1.0)  # (a component killed with its thread is gone by then)
    scheduler = control_plane.processes.get("kube-scheduler")
    assert scheduler is not None and scheduler.poll() is None
    assert control_plane.scheduler_config == flatten(cases[2]).scheduler_config
    assert not other.workdir.exists() and not other.processes
