"""The node lifecycle's fidelity cases (``e2e.fidelity.node_failure_cases``) run on both sides, and their
timelines compared.

- The real side: every case at once on the test control plane. The nodes that fail are played by a second
  kwok (``ControlPlane.start_kwok``); once every case's pods are Ready, that kwok is killed (the kill: time
  0 of the timelines). The run then waits for every failing node to go NotReady, and for the longest
  ``tolerationSeconds`` of the cases after the last of them (and ``QUIET_S`` more). What the timelines hold
  comes from watches (``e2e.fidelity.watches``): when each node first showed Ready ``Unknown`` and each of
  the ``node.kubernetes.io/unreachable`` taints, when each pod's Ready condition first turned False after
  it was True and when its ``deletionTimestamp`` first showed (its deletion began).
- gpufleet's side: the case's nodes and pods simulated, each failing node given a ``node-loss`` fault
  (response ``lost``; a node of no pool: its Node stays, as a kwok node's with no cloud provider; no health
  checker notices it, so nothing cordons the node), its pods created at 0 and the kill once they ran as long
  as on the real side (``KILL_S`` at least), its state sampled every ``SAMPLE_S`` for the same marks.
  Without a real side the faults are at the kill; with one, each at its node's real NotReady less
  ``--node-monitor-grace-period`` (the control plane's, ``e2e.controlplane.NODE_MONITOR_GRACE_S``, 50 s;
  gpufleet's side is given the same in its Simulation's ``spec.controllerManager``): the moment its kubelet
  stopped as the node lifecycle controller counts it (from the pass that saw its last Lease renewal), so that
  what follows NotReady is compared to the second (``FOLLOW_S``) and NotReady itself against the kill
  (``EARLY_S``, ``LATE_S``).

Tolerances, from upstream's periods: kwok renews a node's Lease every quarter of its 40 s duration (4 %
jitter: ``node_lease_controller.go``) and the node lifecycle controller's ``monitorNodeHealth`` runs every
``--node-monitor-period`` 5 s, taking as the last heartbeat the pass that first saw the last renewal
(``tryUpdateNodeHealth``'s ``probeTimestamp``) and turning the node NotReady at the first pass more than
the grace period after it: from the grace period - 10.4 s to it + 10 s after the kill, whatever the grace
period as long as it is longer than a renewal interval (``EARLY_S``, ``LATE_S``, 0.5 s more for the
watches). What follows NotReady in the same pass or on an event (``MarkPodsNotReady``; the NoSchedule taint,
``doNodeProcessingPassWorker``; the NoExecute taint, ``doNoExecuteTaintingPass`` every 100 ms; the taint
eviction controller's timed deletion; the ReplicaSet controller's replacement) within ``FOLLOW_S``: each is
an informer's event then an API write, a few tenths of a second apiece (the NoExecute taint seen 0.2 to 0.7 s
after NotReady on a loaded machine), and gpufleet's samples are ``SAMPLE_S`` apart.

A case is run again (``STALE_RERUNS`` times at most; ``reruns`` and ``rerun_why`` say so) where the real
controller dropped a failing node's taint request on its own stale cache: ``doNoExecuteTaintingPass`` reads
the node from its informer, which may not have seen yet the Ready ``Unknown`` that ``monitorNodeHealth`` has
just written; it then finds the node Ready, drops the request ("Ignoring taint request", logged at
``--vmodule=node_lifecycle_controller=4``) having spent the zone's token (``RateLimitedTimedQueue.Try`` takes
the token before it calls the action), and the next monitor pass queues the node again, to be tainted one
token (``1 / --node-eviction-rate``, 10 s) later, its pods' deletions with it. The race is the informer's
lag, which gpufleet does not model; it shows on a loaded machine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from e2e.controlplane import NODE_LEASE_DURATION_S, NODE_MONITOR_GRACE_S, ControlPlane, ControlPlaneError
from e2e.fidelity.case import load_documents
from e2e.fidelity.node_failure_cases import DOWN_KWOK, NAME, NodeFailureCase
from e2e.fidelity.watches import (
    CASE_TIMEOUT_S,
    RunError,
    Watches,
    clean,
    create_namespaces_and_nodes,
    placed,
    watching,
)
from gpufleet.control.clock import Priority
from gpufleet.model.node_readiness import UNREACHABLE_TAINT_KEY
from gpufleet.model.taint_eviction import toleration_s
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.unreachable_nodes import UNREACHABLE_NO_EXECUTE

COLLECTIONS = {"pods": "/api/v1/pods?labelSelector=case", "nodes": "/api/v1/nodes"}
#: the node lifecycle controller's ``--node-monitor-period``
NODE_MONITOR_PERIOD_S = 5.0
#: how much sooner than the grace period after the kill a node may go NotReady (a Lease renewed up to
#: a renew interval, jitter included, before the kill), and how much later (the pass that saw the last
#: renewal, then the pass past the grace period); the watches' 0.5 s each side
EARLY_S = NODE_LEASE_DURATION_S / 4 * 1.04 + 0.5
LATE_S = 2 * NODE_MONITOR_PERIOD_S + 0.5
#: how closely the two sides agree on what follows NotReady
FOLLOW_S = 2.0
#: how long the real side waits past the last toleration for anything more the controllers do
QUIET_S = 3.0
#: gpufleet's side: the kill this long after the pods' creation, at least (a real side's may come sooner;
#: a fault placed up to ``EARLY_S`` before the kill must still be in the run, and nothing in the cases
#: depends on the pods' age)
KILL_S = 15.0
SAMPLE_S = 0.1
#: the marks a timeline reads (``Watches.marked`` and gpufleet's samples)
NOT_READY = "NotReady"  # a node's Ready condition Unknown
NO_SCHEDULE = f"{UNREACHABLE_TAINT_KEY}:NoSchedule"
NO_EXECUTE = f"{UNREACHABLE_TAINT_KEY}:NoExecute"
READY, READY_LOST, DELETING = "ready", "ready-lost", "deleting"
#: how many times a case whose taint request the real controller dropped on a stale cache is run again
STALE_RERUNS = 2
#: kube-controller-manager's line (``--vmodule=node_lifecycle_controller=4``) for a taint request dropped
#: because the node looked Ready (its klog header's month, day and time; the node)
_DROPPED = re.compile(
    r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d\.\d+) .*Ignoring taint request.* node=\"([^\"]+)\""
)


def window_s(cases: Iterable[NodeFailureCase]) -> float:
    """How long gpufleet's side runs after the kill without a real side."""
    longest = max((s for c in cases for s in c.toleration_s()), default=0)
    return NODE_MONITOR_GRACE_S + 10.0 + longest + QUIET_S


@dataclass(frozen=True)
class NodeTimeline:
    """A failing node, in seconds after the kill: its fault (the real side's is the kill, 0), its Ready
    condition Unknown, its unreachable taints."""

    node: str  # its letter
    fault_s: float
    not_ready_s: float | None
    no_schedule_s: float | None
    no_execute_s: float | None


@dataclass(frozen=True)
class PodTimeline:
    """A pod of the case: its name (a ReplicaSet's: ``serve@<node><n>``, the n-th on that node by creation),
    its node's letter, when it was created (None: before the kill), the ``tolerationSeconds`` of the
    toleration it was admitted with for the unreachable NoExecute taint (None: forever), when its Ready
    condition turned False and its deletion began (None: not in the run), and whether it was gone by the
    end."""

    pod: str
    node: str
    created_s: float | None
    tolerates_s: float | None
    ready_lost_s: float | None
    deleting_s: float | None
    gone: bool


@dataclass(frozen=True)
class Timeline:
    nodes: tuple[NodeTimeline, ...]
    pods: tuple[PodTimeline, ...]


@dataclass
class NodeFailureResult:
    name: str
    gpufleet: Timeline
    warnings: list[str]
    real: Timeline | None = None
    error: str = ""
    differences: list[str] = field(default_factory=list)
    reruns: int = 0  # times its real side ran again (``STALE_RERUNS``)
    rerun_why: list[str] = field(default_factory=list)  # why, each time

    @property
    def agrees(self) -> bool:
        return not self.error and self.real is not None and not self.differences


# -- the marks, on either side ------------------------------------------------------------------------
class PodMarks:
    """A pod's marks: ``ready`` while its Ready condition is True, ``ready-lost`` once it is not after it
    was, ``deleting`` once its deletion began."""

    def __init__(self) -> None:
        self.was_ready: set[str] = set()

    def __call__(self, uid: str, ready: bool, deleting: bool) -> list[str]:
        if ready:
            self.was_ready.add(uid)
        lost = not ready and uid in self.was_ready
        return [m for m, on in ((READY, ready), (READY_LOST, lost), (DELETING, deleting)) if on]


def node_marks(not_ready: bool, taints: Iterable[tuple[str, str]]) -> list[str]:
    """A node's marks: ``NotReady``, and its unreachable taints (``taints``: key and effect)."""
    marks = [f"{key}:{effect}" for key, effect in taints if key == UNREACHABLE_TAINT_KEY]
    return [NOT_READY, *marks] if not_ready else marks


def _api_marks(pod_marks: PodMarks, collection: str, obj: dict[str, Any]) -> list[str]:
    status = obj.get("status") or {}
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
    if collection == "nodes":
        taints = [(t["key"], t["effect"]) for t in (obj.get("spec") or {}).get("taints") or []]
        return node_marks(conditions.get("Ready") == "Unknown", taints)
    meta = obj["metadata"]
    return pod_marks(meta["uid"], conditions.get("Ready") == "True", bool(meta.get("deletionTimestamp")))


@dataclass(frozen=True)
class Seen:
    """A pod as either side saw it: what its timeline needs, times on that side's clock."""

    name: str
    owned: bool  # the ReplicaSet's
    node: str | None
    created: float
    tolerates_s: float | None
    marks: Mapping[str, float]
    gone: bool


def timeline(
    case: NodeFailureCase,
    killed: float,
    nodes: Mapping[str, tuple[float, Mapping[str, float]]],
    pods: list[Seen],
) -> Timeline:
    """The case's timeline from what a side saw (``nodes``: each failing node's fault and marks; times on
    the side's clock, ``killed`` the kill)."""

    def after(t: float | None) -> float | None:
        return None if t is None else round(t - killed, 2)

    node_lines = tuple(
        NodeTimeline(
            letter,
            round(fault - killed, 2),
            after(marks.get(NOT_READY)),
            after(marks.get(NO_SCHEDULE)),
            after(marks.get(NO_EXECUTE)),
        )
        for letter, (fault, marks) in sorted(nodes.items())
    )
    counted: dict[str, int] = {}
    pod_lines = []
    for p in sorted(pods, key=lambda p: (p.owned, case.letter(p.node), p.created, p.name)):
        letter = case.letter(p.node)
        name = p.name
        if p.owned:
            counted[letter] = counted.get(letter, 0) + 1
            name = f"{NAME}@{letter}{counted[letter]}"
        lost, deleting = p.marks.get(READY_LOST), p.marks.get(DELETING)
        pod_lines.append(
            PodTimeline(
                name,
                letter,
                after(p.created) if p.created > killed else None,
                p.tolerates_s,
                after(lost),
                after(deleting),
                p.gone,
            )
        )
    return Timeline(node_lines, tuple(sorted(pod_lines, key=lambda p: p.pod)))


def differences(real: Timeline, ours: Timeline) -> list[str]:
    """Where gpufleet's timeline differs from the real one beyond the tolerances (the module's docstring)."""
    out: list[str] = []

    def near(what: str, a: float | None, b: float | None) -> None:
        if (a is None) != (b is None) or (a is not None and b is not None and abs(a - b) > FOLLOW_S):
            out.append(f"{what}: real {a}, gpufleet {b}")

    ours_nodes = {n.node: n for n in ours.nodes}
    for r in real.nodes:
        o = ours_nodes.get(r.node)
        if o is None or r.not_ready_s is None or o.not_ready_s is None:
            out.append(f"node {r.node}: NotReady real {r.not_ready_s}, gpufleet {o and o.not_ready_s}")
            continue
        late = (r.not_ready_s - r.fault_s) - (o.not_ready_s - o.fault_s)
        if not -EARLY_S <= late <= LATE_S:
            out.append(
                f"node {r.node}: NotReady {r.not_ready_s - r.fault_s:g} s after the kill, gpufleet "
                f"{o.not_ready_s - o.fault_s:g} s (tolerance -{EARLY_S:g}/+{LATE_S:g} s)"
            )
        near(f"node {r.node} {NO_SCHEDULE}", r.no_schedule_s, o.no_schedule_s)
        near(f"node {r.node} {NO_EXECUTE}", r.no_execute_s, o.no_execute_s)
    ours_pods = {p.pod: p for p in ours.pods}
    if set(ours_pods) != {p.pod for p in real.pods}:
        out.append(f"pods: real {[p.pod for p in real.pods]}, gpufleet {sorted(ours_pods)}")
    for theirs in real.pods:
        mine = ours_pods.get(theirs.pod)
        if mine is None:
            continue
        name = theirs.pod
        if (theirs.node, theirs.gone, theirs.tolerates_s) != (mine.node, mine.gone, mine.tolerates_s):
            out.append(
                f"pod {name}: real on {theirs.node or '-'}, gone {theirs.gone}, tolerates "
                f"{theirs.tolerates_s}; gpufleet on {mine.node or '-'}, gone {mine.gone}, tolerates "
                f"{mine.tolerates_s}"
            )
        near(f"pod {name} created", theirs.created_s, mine.created_s)
        near(f"pod {name} Ready False", theirs.ready_lost_s, mine.ready_lost_s)
        near(f"pod {name} deletion began", theirs.deleting_s, mine.deleting_s)
    return out


# -- the real side ------------------------------------------------------------------------------------------
def _unreachable_toleration_s(pod: dict[str, Any]) -> float | None:
    """The ``tolerationSeconds`` of the pod's first toleration of the unreachable NoExecute taint (as the
    API server admitted it; None: forever, or none)."""
    for t in pod["spec"].get("tolerations") or []:
        if t.get("key") in (UNREACHABLE_TAINT_KEY, None, "") and t.get("effect") in ("NoExecute", None, ""):
            seconds = t.get("tolerationSeconds")
            return None if seconds is None else float(seconds)
    return None


def _real_timeline(watches: Watches, case: NodeFailureCase, killed: float) -> Timeline:
    nodes = {}
    for letter in case.down:
        node = watches.get("nodes", "", case.node_name(letter))
        if node is None:
            raise RunError(f"{case.namespace}: node {letter} not seen")
        uid = node["metadata"]["uid"]
        nodes[letter] = (killed, {m: t for (u, m), t in watches.marked.items() if u == uid})
    pods = [
        Seen(
            str(p["metadata"]["name"]),
            bool(p["metadata"].get("ownerReferences")),
            p["spec"].get("nodeName"),
            watches.first_seen[p["metadata"]["uid"]],
            _unreachable_toleration_s(p),
            {m: t for (u, m), t in watches.marked.items() if u == p["metadata"]["uid"]},
            p["metadata"]["uid"] in watches.deleted,
        )
        for p in watches.pods(case.namespace)
    ]
    return timeline(case, killed, nodes, pods)


def _settled(watches: Watches, case: NodeFailureCase, bare: bool = True) -> bool:
    """The case's pods (``bare``: its bare pods too) Ready, as many of the ReplicaSet's as it wants."""
    live = [
        p
        for p in watches.live_pods(case.namespace)
        if not p["metadata"].get("deletionTimestamp") and (bare or p["metadata"].get("ownerReferences"))
    ]
    return len(live) == bare * len(case.pods) + case.replicas and all(placed(p) for p in live)


def run_real(
    cp: ControlPlane, watches: Watches, cases: tuple[NodeFailureCase, ...]
) -> tuple[float, float, float]:
    """Every case's pods created, Ready, the failing nodes' kwok killed, then waited for until the end:
    when the pods were created, the kill, the end (``time.monotonic``)."""
    from lightkube import ApiError, codecs

    client = cp.client()
    try:
        for case in cases:
            for doc in case.workloads():
                client.create(codecs.from_dict(doc))
    except ApiError as exc:
        raise RunError(f"creating the cases' pods: {exc}") from None
    created = time.monotonic()
    deadline = created + CASE_TIMEOUT_S
    watches.wait("the cases' pods Ready", lambda: all(_settled(watches, c) for c in cases), deadline)
    cp.kill(DOWN_KWOK)
    killed = time.monotonic()
    down = [watches.get("nodes", "", c.node_name(x)) for c in cases for x in c.down]
    uids = [n["metadata"]["uid"] for n in down if n is not None]
    watches.wait(
        "the failing nodes NotReady",
        lambda: all((u, NOT_READY) in watches.marked for u in uids),
        killed + NODE_MONITOR_GRACE_S + LATE_S + 5.0,
    )
    last = max(watches.marked[(u, NOT_READY)] for u in uids)
    end = last + window_s(cases) - NODE_MONITOR_GRACE_S
    time.sleep(max(0.0, end - time.monotonic()))
    replaced = [partial(_settled, watches, c, False) for c in cases]
    watches.wait("the ReplicaSets' pods replaced", lambda: all(r() for r in replaced), end + CASE_TIMEOUT_S)
    return created, killed, max(end, time.monotonic())


def dropped_taint_requests(log: Path, since: float) -> set[str]:
    """The nodes whose taint request kube-controller-manager dropped on a stale cache (the node looked Ready)
    at ``since`` (``time.time``) or later, from its log (klog's local time, the year ``since``'s)."""
    year = datetime.fromtimestamp(since).year
    dropped = set()
    with log.open(errors="replace") as lines:
        for line in lines:
            if (m := _DROPPED.match(line)) is None:
                continue
            month, day, hour, minute, second, node = m.groups()
            at = datetime(year, int(month), int(day), int(hour), int(minute)).timestamp() + float(second)
            if at >= since:
                dropped.add(node)
    return dropped


def _gone(cp: ControlPlane, namespaces: list[str]) -> None:
    """Wait until none of ``namespaces`` is left (a case run again reuses its namespace, which ``clean``
    deleted without waiting for the namespace controller to sweep it)."""
    deadline = time.monotonic() + CASE_TIMEOUT_S
    while any(cp.get(f"/api/v1/namespaces/{n}") is not None for n in namespaces):
        if time.monotonic() > deadline:
            raise RunError(f"the namespaces of the cases' last run still there: {', '.join(namespaces)}")
        time.sleep(0.5)


def run_node_failure_cases(cp: ControlPlane, cases: tuple[NodeFailureCase, ...]) -> list[NodeFailureResult]:
    """Every case on the real side at once, then simulated by gpufleet with the real side's times (``_run``);
    the cases whose taint request the real controller dropped on a stale cache run again, at once, up to
    ``STALE_RERUNS`` times, each result saying how many times and why."""
    results: dict[str, NodeFailureResult] = {}
    why: dict[str, list[str]] = {c.name: [] for c in cases}
    todo = cases
    for attempt in range(STALE_RERUNS + 1):
        ran, dropped = _run(cp, todo)
        for r in ran:
            r.reruns, r.rerun_why = attempt, list(why[r.name])
            results[r.name] = r
        todo = tuple(c for c in todo if any(c.node_name(x) in dropped for x in c.down))
        for c in todo:
            nodes = sorted(x for x in c.down if c.node_name(x) in dropped)
            why[c.name].append(
                f"kube-controller-manager dropped node {', '.join(nodes)}'s taint request on a stale cache "
                "(the node still Ready in its informer), spending the zone's token"
            )
        if not todo:
            break
    return [results[c.name] for c in cases]


def _run(cp: ControlPlane, cases: tuple[NodeFailureCase, ...]) -> tuple[list[NodeFailureResult], set[str]]:
    """Every case on the real side at once, then simulated by gpufleet with the real side's times; the
    namespaces and nodes are deleted afterwards, and the second kwok stopped. With the results, the nodes
    whose taint request the real controller dropped on a stale cache after the kill."""
    namespaces = [c.namespace for c in cases]
    nodes = [n for c in cases for n in c.node_manifests()]
    pod_marks = PodMarks()
    with watching(cp, COLLECTIONS, marks=lambda collection, obj: _api_marks(pod_marks, collection, obj)) as w:
        try:
            _gone(cp, namespaces)
            cp.start_kwok(DOWN_KWOK)
            create_namespaces_and_nodes(cp, w, namespaces, nodes)
            created, killed, end = run_real(cp, w, cases)
            with w.changed:
                real = [_real_timeline(w, c, killed) for c in cases]
        except (RunError, ControlPlaneError) as exc:
            return [NodeFailureResult(c.name, *run_gpufleet(c), error=str(exc)) for c in cases], set()
        finally:
            cp.terminate(DOWN_KWOK)
            clean(cp, w, namespaces, [n["metadata"]["name"] for n in nodes])
    dropped = dropped_taint_requests(
        cp.logs / "kube-controller-manager.log", time.time() - (time.monotonic() - killed)
    )
    results = []
    for case, theirs in zip(cases, real, strict=True):
        faults = faults_in_taint_order(theirs.nodes)
        ours, warnings = run_gpufleet(case, max(killed - created, KILL_S), faults, end - killed)
        results.append(NodeFailureResult(case.name, ours, warnings, theirs, "", differences(theirs, ours)))
    return results, dropped


# -- gpufleet's side ----------------------------------------------------------------------------------------
#: how far apart gpufleet's faults of nodes that went NotReady in one pass are put, in the real taints' order
TIE_S = 0.001


def faults_in_taint_order(nodes: tuple[NodeTimeline, ...]) -> dict[str, float]:
    """Each failing node's gpufleet fault, ``--node-monitor-grace-period`` before the real NotReady, in the
    order the real zone's rate limiter tainted them: nodes that went NotReady in the same pass are queued
    in the order the controller listed them (a map's, so either way round), which gpufleet cannot know, so
    a node tainted later is put ``TIE_S`` after the one before where the watches saw it NotReady first."""
    faults: dict[str, float] = {}
    last: float | None = None
    for n in sorted(nodes, key=lambda n: (n.no_execute_s is None, n.no_execute_s or 0.0, n.node)):
        if n.not_ready_s is None:
            continue
        fault = n.not_ready_s - NODE_MONITOR_GRACE_S
        if last is not None and n.no_execute_s is not None:
            fault = max(fault, last + TIE_S)
        faults[n.node] = last = fault
    return faults


def run_gpufleet(
    case: NodeFailureCase,
    kill_s: float = KILL_S,
    faults_s: Mapping[str, float] | None = None,
    after_s: float | None = None,
) -> tuple[Timeline, list[str]]:
    """The case simulated by gpufleet: its pods created at 0, the kill at ``kill_s``, each failing node's
    ``node-loss`` fault ``faults_s`` after it (None: at the kill), sampled until ``after_s`` after the kill
    (None: ``window_s``); its timeline, and gpufleet's warnings on the scenario."""
    faults = {x: 0.0 for x in case.down} if faults_s is None else dict(faults_s)
    after = window_s([case]) if after_s is None else after_s
    run = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": case.namespace},
        "spec": {
            "duration": round(kill_s + after + 1.0, 3),
            "controllerManager": {"nodeMonitorGracePeriod": f"{NODE_MONITOR_GRACE_S:g}s"},
        },
    }
    fault_model = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "FaultModel",
        "metadata": {"name": case.namespace},
        "spec": {  # no health checker: nothing notices the fault within the run, nothing cordons the node
            "response": {"detection": "24h"},
            "faults": [
                {"at": round(kill_s + at, 3), "node": case.node_name(x), "kind": "node-loss"}
                for x, at in sorted(faults.items())
            ],
        },
    }
    sim = Simulation(load_documents([run, *case.node_manifests(), *case.workloads(), fault_model]))
    marks: dict[tuple[str, str], float] = {}
    pod_marks = PodMarks()

    def sample() -> None:
        now, state = sim.loop.now, sim.cluster.state
        for x in case.down:
            node = state.nodes[state.index[case.node_name(x)]]
            taints = [(t.key, t.effect) for t in node.taints]
            for m in node_marks(node.name in sim.cluster.not_ready, taints):
                marks.setdefault((node.name, m), now)
        for key, rec in sim.records.items():
            if rec.pod.namespace == case.namespace:
                deleting = rec.terminating or rec.deleted_s is not None
                for m in pod_marks(key, rec.ready and rec.deleted_s is None, deleting):
                    marks.setdefault((key, m), now)

    for k in range(int((kill_s + after) / SAMPLE_S) + 1):  # from the start: a pod's Ready before the kill
        sim.loop.at(k * SAMPLE_S, Priority.SAMPLE, sample)
    sim.run()
    nodes = {
        x: (kill_s + at, {m: t for (n, m), t in marks.items() if n == case.node_name(x)})
        for x, at in faults.items()
    }
    pods = [
        Seen(
            rec.pod.name,
            rec.pod.owner is not None,
            rec.node,
            rec.created_s,
            toleration_s(rec.pod, (UNREACHABLE_NO_EXECUTE,)),
            {m: t for (k, m), t in marks.items() if k == key},
            rec.deleted_s is not None,
        )
        for key, rec in sim.records.items()
        if rec.pod.namespace == case.namespace
    ]
    return timeline(case, kill_s, nodes, pods), list(sim.scenario.warnings)
