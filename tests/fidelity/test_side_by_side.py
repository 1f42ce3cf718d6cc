"""Fidelity cases dealt to several control planes side by side (``e2e.fidelity.run.side_by_side`` and
``run_cases``; ``make fidelity --control-planes N``): the session's fidelity run, on the session's control
plane and ``CONTROL_PLANES - 1`` more."""

from __future__ import annotations

from typing import Any

from e2e.fidelity.case import flatten
from e2e.fidelity.run import CONTROL_PLANES
from e2e.fidelity.sources import all_cases


def test_cases_dealt_to_the_control_planes_come_back_in_order_and_the_first_keeps_its_scheduler(
    control_plane: Any, fidelity: Any
) -> None:
    """Case ``k`` runs on control plane ``k % N + 1`` (an excluded case on none) and the results come back
    in the cases' order. The first control plane's cases run in the calling thread: kube-scheduler, which
    they restart with their configuration, would otherwise die with the worker thread that started it
    (``PR_SET_PDEATHSIG``) and leave the session's control plane without a scheduler; it ends with the
    configuration of the last case it ran. The other control planes are removed after."""
    cases = all_cases()
    results = fidelity.scheduler
    planes = 1 + len(fidelity.side_planes)
    assert planes == CONTROL_PLANES >= 2
    assert [r.name for r in results] == [c.name for c in cases]
    assert all(r.control_plane in (0, k % planes + 1) for k, r in enumerate(results))
    assert {r.control_plane for r in results} >= set(range(1, planes + 1))
    last_first = max(k for k, r in enumerate(results) if r.control_plane == 1)
    assert fidelity.first_scheduler_config == flatten(cases[last_first]).scheduler_config
    assert any(flatten(cases[k]).scheduler_config is not None for k in range(0, len(cases), planes))
    scheduler = control_plane.processes.get("kube-scheduler")
    assert scheduler is not None and scheduler.poll() is None
    assert all(not cp.workdir.exists() and not cp.processes for cp in fidelity.side_planes)
