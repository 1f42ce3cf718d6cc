"""The live scheduler follows the engine's failure and readiness rules, with no control plane: the cycle
as a pure function, and ``gpufleet scheduler``'s writes through a recording client.

- A plugin's Error status aborts the attempt (``framework.PluginError``): kube-scheduler 1.34.10's
  ``handleSchedulingFailure`` (``pkg/scheduler/schedule_one.go``) writes the PodScheduled condition with
  reason ``SchedulerError`` (``v1.PodReasonSchedulerError``, not ``Unschedulable``, which only a FitError
  gets) and the error as its message, records a ``FailedScheduling`` Event with the same text, and clears
  the pod's nominated node (``newFailureNominatingInfo``: ``ModeOverride`` with no node, the
  ``NominatedNodeNameForExpectation`` gate being off by default in 1.34); the attempt's metric result is
  ``error``.
- A Node is read as kube-scheduler reads it: taints, never the Ready condition (``live_scheduler.models``).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from conftest import kwok_node
from gpufleet.kube.problems import Location, Problems, Reporter
from gpufleet.kube.scheduler_config import scheduler_config
from gpufleet.live.writes import Writes
from gpufleet.live_scheduler.cycle import Decisions, Memory, run_cycle
from gpufleet.live_scheduler.daemon import LiveScheduler, Options
from gpufleet.live_scheduler.models import Models
from gpufleet.model.node import NO_SCHEDULE, Taint
from gpufleet.model.scheduler_config import SchedulerConfig
from gpufleet.scheduling.framework import Code, PodContext, Status
from gpufleet.scheduling.gangs import GangView
from gpufleet.scheduling.plugins.coscheduling import Coscheduling

GPU = "nvidia.com/gpu"
ERROR = 'running PreFilter plugin "Coscheduling": the PodGroup lister is not synced'


def _config() -> SchedulerConfig:
    body = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "gang",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                },
            }
        ],
    }
    problems = Problems()
    config = scheduler_config("test", body, Reporter(problems, Location("test", 0)))
    assert config is not None and not problems.errors
    return config


def _pod(name: str, gpus: int = 1, nominated: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending"}
    if nominated is not None:
        status["nominatedNodeName"] = nominated
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {
            "schedulerName": "gang",
            "containers": [{"name": "c", "image": "x", "resources": {"limits": {GPU: gpus}}}],
        },
        "status": status,
    }


def _not_ready(name: str, taints: tuple[Taint, ...] = ()) -> dict[str, Any]:
    node = kwok_node(name, taints=taints)
    node["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "False",
            "reason": "KubeletNotReady",
            "lastHeartbeatTime": "2026-12-06T05:00:00Z",
            "lastTransitionTime": "2026-12-06T04:58:00Z",
        }
    ]
    node["metadata"]["creationTimestamp"] = "2026-12-06T04:00:00Z"
    return node


def _cycle(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Decisions:
    models = Models()
    node_models = [n for doc in nodes if (n := models.node(doc["metadata"]["name"], doc)) is not None]
    live = {f"ns/{p['metadata']['name']}": models.pod(f"ns/{p['metadata']['name']}", p) for p in pods}
    memory = Memory(np.random.default_rng(0))
    return run_cycle(_config(), node_models, live, {}, {}, [], {}, 0.0, memory)


@pytest.fixture
def erring_pre_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Coscheduling's PreFilter returns an Error status (as a plugin does when its lister fails)."""

    def pre_filter(self: Coscheduling, ctx: PodContext, gangs: GangView) -> Status:
        return Status(Code.ERROR, ("the PodGroup lister is not synced",), self.name)

    monkeypatch.setattr(Coscheduling, "pre_filter", pre_filter)


# -- a plugin's Error status ---------------------------------------------------------------------------


@pytest.mark.usefixtures("erring_pre_filter")
def test_a_plugin_error_status_fails_the_pod_with_reason_scheduler_error_and_clears_its_nomination() -> None:
    decisions = _cycle([kwok_node("a")], [_pod("p", nominated="a")])
    assert decisions.bindings == [] and decisions.preemptions == []
    (failure,) = decisions.failures
    assert (failure.reason, failure.message, failure.nominated) == ("SchedulerError", ERROR, "")
    assert [a.result for a in decisions.attempts] == ["error"]


def test_a_fit_error_keeps_reason_unschedulable_and_the_nomination() -> None:
    """The rule's other side: a FitError (no node fits) is ``Unschedulable``, its nomination left as it is."""
    decisions = _cycle([kwok_node("a", gpus=1)], [_pod("p", gpus=2)])
    (failure,) = decisions.failures
    assert failure.reason == "Unschedulable" and failure.nominated is None
    assert failure.message.startswith("0/1 nodes are available: 1 Insufficient nvidia.com/gpu.")
    assert [a.result for a in decisions.attempts] == ["unschedulable"]


def test_a_nominated_pod_that_preemption_finds_no_candidate_for_has_its_nomination_cleared() -> None:
    """``Evaluator.Preempt`` with no candidate returns ``NewPostFilterResultWithNominatedNode("")``: the pod,
    nominated to a (read from its ``status.nominatedNodeName``), fits nowhere, not even were a's pods gone,
    so the write clears ``nominatedNodeName``; the reason stays ``Unschedulable``."""
    decisions = _cycle([kwok_node("a", gpus=1)], [_pod("p", gpus=2, nominated="a")])
    (failure,) = decisions.failures
    assert (failure.reason, failure.nominated) == ("Unschedulable", "")
    assert "preemption: 0/1 nodes are available: 1 Preemption is not helpful" in failure.message


class _Recorder:
    """A LiveCluster that answers every request with 200 and records it."""

    server = "https://recorder"

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.sent: list[tuple[str, str, Any]] = []
        self.lock = threading.Lock()

    def send(self, method: str, path: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.sent.append((method, path, kw.get("body")))
        return 200, {}


def _scheduler(recorder: _Recorder, dry_run: bool = False) -> LiveScheduler:
    config = _config()
    config = replace(config, process=replace(config.process, leader_elect=False))
    options = Options(config, dry_run=dry_run, identity="test", say=lambda _: None, log=lambda _: None)
    return LiveScheduler(lambda: recorder, options)  # type: ignore[arg-type,return-value]


@pytest.mark.usefixtures("erring_pre_filter")
def test_the_daemon_writes_scheduler_error_with_the_error_and_a_failed_scheduling_event() -> None:
    recorder = _Recorder()
    scheduler = _scheduler(recorder)
    scheduler.informers["nodes"].store["a"] = kwok_node("a")
    scheduler.informers["pods"].store["ns/p"] = _pod("p", nominated="a")
    scheduler.cycle()
    scheduler.recorder.shutdown(wait=True)
    scheduler.executor.shutdown(wait=True)
    (status,) = [body for method, path, body in recorder.sent if path.endswith("/pods/p/status")]
    (condition,) = status["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "PodScheduled",
        "False",
        "SchedulerError",
        ERROR,
    )
    assert "nominatedNodeName" in status["status"] and status["status"]["nominatedNodeName"] is None
    (event,) = [body for method, path, body in recorder.sent if path.endswith("/events") and method == "POST"]
    assert (event["reason"], event["message"], event["type"]) == ("FailedScheduling", ERROR, "Warning")


def test_a_pod_already_showing_the_scheduler_error_is_not_written_again() -> None:
    """``updatePod`` patches only when the condition or the nomination changes."""
    recorder = _Recorder()
    scheduler = _scheduler(recorder)
    shown = _pod("p")
    shown["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulerError", "message": ERROR}
    ]
    live = Models().pod("ns/p", shown)
    scheduler._unschedulable(live, ERROR, "", "SchedulerError")
    assert recorder.sent == [] and scheduler.reported == {}
    scheduler._unschedulable(live, ERROR, None, "Unschedulable")  # the reason changed: written
    scheduler.recorder.shutdown(wait=True)
    assert recorder.sent[0][1] == "/api/v1/namespaces/ns/pods/p/status"


def test_a_long_message_is_cut_in_the_failed_scheduling_event_and_whole_in_the_condition() -> None:
    """``truncateMessage`` (``schedule_one.go``): the Event's copy of a message over
    ``validation.NoteLengthLimit`` (1,024 bytes) is its first 1,020 bytes and `` ...``; ``updatePod``
    writes the whole message into the PodScheduled condition."""
    recorder = _Recorder()
    scheduler = _scheduler(recorder)
    message = (
        "0/40 nodes are available: "
        + ", ".join(f"1 Insufficient example.com/r-{i:02d}" for i in range(40))
        + "."
    )
    scheduler._unschedulable(Models().pod("ns/p", _pod("p")), message, None)
    scheduler.recorder.shutdown(wait=True)
    (status,) = [body for method, path, body in recorder.sent if path.endswith("/pods/p/status")]
    assert status["status"]["conditions"][0]["message"] == message
    (event,) = [body for method, path, body in recorder.sent if path.endswith("/events") and method == "POST"]
    assert event["message"] == message.encode()[:1020].decode() + " ..." and len(event["message"]) == 1024


def test_writes_unschedulable_takes_the_reason_and_clears_a_nomination_with_null() -> None:
    recorder = _Recorder()
    writes = Writes(recorder)  # type: ignore[arg-type]
    writes.unschedulable("ns", "p", "boom", "", "SchedulerError")
    writes.unschedulable("ns", "p", "0/1 nodes are available", "n1")
    writes.unschedulable("ns", "p", "0/1 nodes are available")
    bodies = [body["status"] for _, _, body in recorder.sent]
    reasons = [b["conditions"][0]["reason"] for b in bodies]
    assert reasons == ["SchedulerError", "Unschedulable", "Unschedulable"]
    assert [b.get("nominatedNodeName", "absent") for b in bodies] == [None, "n1", "absent"]


# -- node readiness ------------------------------------------------------------------------------------


def test_a_not_ready_node_the_lifecycle_controller_has_not_tainted_is_schedulable_as_to_kube_scheduler() -> (
    None
):
    """kube-scheduler reads taints, not the Ready condition: the node is not tainted by the reader (a dump's
    reader adds the controller's taint; the live scheduler leaves that to the controller)."""
    node = Models().node("a", _not_ready("a"))
    assert node is not None and node.taints == ()
    decisions = _cycle([_not_ready("a")], [_pod("p")])
    assert {p.pod.pod.name: p.node for b in decisions.bindings for p in b.members} == {"p": "a"}


def test_a_not_ready_node_with_the_not_ready_taint_is_refused_in_taint_toleration_s_words() -> None:
    tainted = _not_ready("a", taints=(Taint("node.kubernetes.io/not-ready", "", NO_SCHEDULE),))
    decisions = _cycle([tainted], [_pod("p")])
    assert decisions.bindings == []
    (failure,) = decisions.failures
    assert failure.reason == "Unschedulable"
    assert failure.message.startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")
