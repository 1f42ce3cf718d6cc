"""A case's real side is run again when it could not be judged for a reason outside the case
(``e2e.fidelity.run._run_real_fresh``): kube-scheduler decided on stale nodes, or a wait timed out because
a component stalled on a loaded machine (``RealRunTimeout``); each time is counted with its reason, and
when no run is left a timeout is the case's error. A settle that times out names what still moved
(``real.still_moving``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from e2e.fidelity import run as fidelity_run
from e2e.fidelity.case import Flat
from e2e.fidelity.real import RealRun, RealRunTimeout, RealStep, still_moving
from e2e.fidelity.run import STALE_RERUNS, CaseResult, _run_real_fresh
from lightkube.models.core_v1 import PodSpec, PodStatus
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod

AT = datetime(2026, 12, 6, tzinfo=UTC)
STALE = "0/1 nodes are available: 3 node(s) had untolerated taint(s)."


def outcomes(monkeypatch: pytest.MonkeyPatch, *each: str) -> list[int]:
    """``_run_real`` answers ``each`` in turn: "timeout" raises, "stale" decides on stale nodes, "ok"
    decides fairly; returns the list its calls are counted in."""
    calls: list[int] = []
    answers: Iterator[str] = iter(each)

    def fake(cluster: Any, flat: Flat) -> RealRun:
        calls.append(1)
        answer = next(answers)
        if answer == "timeout":
            raise RealRunTimeout(
                "the cluster did not settle after pod default/pod-0 in 60 s: bound pods not started"
            )
        message = STALE if answer == "stale" else "0/1 nodes are available: 1 Insufficient cpu."
        return RealRun([RealStep("default/pod-0", {}, {}, condition_message=message)])

    monkeypatch.setattr(fidelity_run, "_run_real", fake)
    return calls


def flat() -> Any:
    """A case with one untainted node (all ``_run_real_fresh`` reads of it)."""
    from types import SimpleNamespace

    return SimpleNamespace(nodes=[{"metadata": {"name": "node-0"}, "spec": {}}])


def test_a_timed_out_wait_runs_the_case_again_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = outcomes(monkeypatch, "timeout", "ok")
    result = CaseResult("generated/0259", "generated", "")
    real = _run_real_fresh(object(), flat(), result)  # type: ignore[arg-type]
    assert len(calls) == 2 and result.reruns == 1 and real.steps[0].pod == "default/pod-0"
    assert result.rerun_why == [
        "the cluster did not settle after pod default/pod-0 in 60 s: bound pods not started"
    ]


def test_stale_nodes_and_timeouts_share_the_reruns(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes(monkeypatch, "stale", "timeout", "ok")
    result = CaseResult("c", "generated", "")
    _run_real_fresh(object(), flat(), result)  # type: ignore[arg-type]
    assert result.reruns == 2
    assert result.rerun_why[0] == "kube-scheduler decided on stale nodes"


def test_a_case_that_times_out_every_time_fails_with_the_last_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = outcomes(monkeypatch, *["timeout"] * (STALE_RERUNS + 1))
    result = CaseResult("c", "generated", "")
    with pytest.raises(RealRunTimeout, match="did not settle"):
        _run_real_fresh(object(), flat(), result)  # type: ignore[arg-type]
    assert len(calls) == STALE_RERUNS + 1 and result.reruns == STALE_RERUNS


def test_a_case_stale_every_time_is_judged_on_its_last_run(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes(monkeypatch, *["stale"] * (STALE_RERUNS + 1))
    result = CaseResult("c", "generated", "")
    real = _run_real_fresh(object(), flat(), result)  # type: ignore[arg-type]
    assert result.reruns == STALE_RERUNS and real.steps[0].condition_message == STALE


def pod(
    name: str,
    node: str | None = None,
    started: bool = False,
    deleting: bool = False,
    nominated: str | None = None,
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", deletionTimestamp=AT if deleting else None),
        spec=PodSpec(containers=[], nodeName=node),
        status=PodStatus(startTime=AT if started else None, nominatedNodeName=nominated),
    )


def test_a_settled_cluster_has_nothing_moving() -> None:
    pods = {"default/a": pod("a", "node-0", started=True), "default/b": pod("b")}
    assert still_moving(pods, "default/b", nominated_may_bind=True) == []


def test_what_still_moves_is_named_pod_by_pod() -> None:
    pods = {
        "default/a": pod("a", "node-0", started=True, deleting=True),
        "default/b": pod("b", "node-1"),
        "default/c": pod("c", nominated="node-0"),
    }
    assert still_moving(pods, "default/c", nominated_may_bind=True) == [
        "pods being deleted: default/a",
        "bound pods not started: default/b",
        "default/c nominated to node-0, not bound",
    ]
    assert (
        still_moving(pods, "default/c", nominated_may_bind=False)[-1] == "bound pods not started: default/b"
    )
