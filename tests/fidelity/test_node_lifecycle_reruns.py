"""The node lifecycle set runs a case again where the real controller dropped a failing node's taint request
on its own stale cache (``e2e.fidelity.node_failure_run``): upstream's ``doNoExecuteTaintingPass`` finds the
node still Ready in its informer, logs "Ignoring taint request" and has spent the zone's token
(``RateLimitedTimedQueue.Try`` takes it before the action), so the taint comes a token later."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from e2e.fidelity import node_failure_run
from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
from e2e.fidelity.node_failure_report import NODES
from e2e.fidelity.node_failure_run import (
    STALE_RERUNS,
    NodeFailureResult,
    Timeline,
    dropped_taint_requests,
    run_node_failure_cases,
)

DROPPED = (
    "I{stamp}   31414 node_lifecycle_controller.go:637] \"Node was in a taint queue, but it's ready now. "
    'Ignoring taint request" logger="node-lifecycle-controller" node="{node}"\n'
)
OTHER = (
    'I{stamp}   31414 node_lifecycle_controller.go:791] "Node is unresponsive. Adding it to the Taint queue" '
    'logger="node-lifecycle-controller" node="{node}" timeStamp="2026-12-07 02:28:25.1 +0000 UTC"\n'
)


def _stamp(at: datetime) -> str:
    return at.strftime("%m%d %H:%M:%S.%f")


def test_only_the_drops_at_or_after_the_kill_are_read_with_their_node(tmp_path: Path) -> None:
    kill = datetime(2026, 12, 7, 2, 28, 0, 500000)
    log = tmp_path / "kube-controller-manager.log"
    log.write_text(
        DROPPED.format(stamp=_stamp(datetime(2026, 12, 7, 2, 27, 59)), node="nf-a-a")  # before
        + OTHER.format(stamp=_stamp(datetime(2026, 12, 7, 2, 28, 25)), node="nf-b-a")  # another message
        + "a line klog did not write\n"
        + DROPPED.format(stamp=_stamp(datetime(2026, 12, 7, 2, 28, 25, 189783)), node="nf-c-a")
        + DROPPED.format(stamp=_stamp(kill), node="nf-d-b")  # at the kill itself
    )
    assert dropped_taint_requests(log, kill.timestamp()) == {"nf-c-a", "nf-d-b"}


def _result(name: str) -> NodeFailureResult:
    return NodeFailureResult(name, Timeline((), ()), [], Timeline((), ()))


def test_a_case_whose_taint_request_was_dropped_runs_again_alone_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = NODE_FAILURE_CASES[0], NODE_FAILURE_CASES[1]
    dropped_node = second.node_name(second.down[0])
    runs: list[list[str]] = []

    def run(cp: object, cases: tuple[object, ...]) -> tuple[list[NodeFailureResult], set[str]]:
        names = [c.name for c in cases]  # type: ignore[attr-defined]
        runs.append(names)
        return [_result(n) for n in names], ({dropped_node} if len(runs) == 1 else set())

    monkeypatch.setattr(node_failure_run, "_run", run)
    results = run_node_failure_cases(object(), (first, second))  # type: ignore[arg-type]
    assert runs == [[first.name, second.name], [second.name]]
    assert [r.name for r in results] == [first.name, second.name]
    assert (results[0].reruns, results[0].rerun_why) == (0, [])
    assert results[1].reruns == 1
    assert results[1].rerun_why == [
        f"kube-controller-manager dropped node {second.down[0]}'s taint request on a stale cache (the node "
        "still Ready in its informer), spending the zone's token"
    ]
    row = NODES.row(results[1])
    assert "Run again:" in NODES.notes([row])
    assert f"- {second.name}: {results[1].rerun_why[0]}" in NODES.notes([row])


def test_a_case_dropped_every_time_is_judged_on_its_last_run(monkeypatch: pytest.MonkeyPatch) -> None:
    case = NODE_FAILURE_CASES[0]
    calls = []

    def run(cp: object, cases: tuple[object, ...]) -> tuple[list[NodeFailureResult], set[str]]:
        calls.append(1)
        return [_result(case.name)], {case.node_name(case.down[0])}

    monkeypatch.setattr(node_failure_run, "_run", run)
    (result,) = run_node_failure_cases(object(), (case,))  # type: ignore[arg-type]
    assert len(calls) == STALE_RERUNS + 1
    assert result.reruns == STALE_RERUNS and len(result.rerun_why) == STALE_RERUNS


def test_a_run_waits_for_the_namespaces_its_last_run_left_being_deleted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A case run again reuses its namespace, which the run before deleted without waiting for the namespace
    controller: creating it at once was refused (``AlreadyExists: object is being deleted``)."""
    looks: list[str] = []

    class ControlPlane:
        def get(self, path: str) -> dict[str, str] | None:
            looks.append(path)
            return {"phase": "Terminating"} if len(looks) <= 2 else None

    monkeypatch.setattr(node_failure_run.time, "sleep", lambda s: None)
    node_failure_run._gone(ControlPlane(), ["nf-a"])  # type: ignore[arg-type]
    assert looks == ["/api/v1/namespaces/nf-a"] * 3
