"""``gpufleet scheduler`` under faults, on real control planes: the API server restarted, its watches
cut, etcd compacted under a paused scheduler (410 Gone, re-list), another scheduler binding the same
pods, the scheduler killed halfway through a gang, two replicas racing for the Lease, a node deleted
while pods are being bound.

Whatever the fault, the API's final state is consistent (``assert_consistent``): every pod bound at
most once, no node over-committed, no gang left partly bound. The destructive faults (1-3) run on a
private control plane of this module (its kube-apiserver with ``--etcd-compaction-interval=5s`` and
no watch cache, so a watch resumed from a compacted resourceVersion gets etcd's 410 Gone); the others
on the session's.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.controlplane import ControlPlane
from e2e.gpufleet_scheduler import POD_GROUP_CRD, SchedulerProcess, config, kept_pod, pod_group_crd

from conftest import kwok_node, wait_until

GPU = "nvidia.com/gpu"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1"
ENDED = ("Succeeded", "Failed")
COMPONENT = "gpufleet-scheduler"

Start = Callable[..., SchedulerProcess]


# -- the API, read and written ------------------------------------------------------------------
def _request(cp: ControlPlane, method: str, path: str, body: object = None) -> tuple[int, dict[str, Any]]:
    """One request as the administrator: the status code and the JSON body, errors included."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        cp.server + path,
        data=data,
        method=method,
        headers={
            "Authorization": f"Bearer {cp.credentials.tokens['admin']}",
            "Content-Type": "application/json",
        },
    )
    context = ssl.create_default_context(cafile=str(cp.credentials.ca_cert))
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return int(response.status), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return int(exc.code), json.loads(exc.read() or b"{}")


def _items(cp: ControlPlane, path: str) -> list[dict[str, Any]]:
    return list((cp.get(path) or {}).get("items") or [])


def _apply(cp: ControlPlane, *docs: dict[str, Any]) -> None:
    cp.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))


def _bound(cp: ControlPlane, ns: str) -> dict[str, str]:
    """The namespace's pods bound to a node: name -> node."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in _items(cp, f"/api/v1/namespaces/{ns}/pods")
        if (p.get("spec") or {}).get("nodeName")
    }


def _bind(cp: ControlPlane, ns: str, pod: str, node: str) -> int:
    """``POST pods/{pod}/binding``, as another scheduler binds: 201, or 409 when the pod is bound."""
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod, "namespace": ns},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    code, _ = _request(cp, "POST", f"/api/v1/namespaces/{ns}/pods/{pod}/binding", body)
    return code


def _gpus(pod: dict[str, Any]) -> int:
    """The pod's effective nvidia.com/gpu request: its containers' sum, or its largest init
    container's when that is more (``resourcehelper.PodRequests``)."""

    def request(container: dict[str, Any]) -> int:
        resources = container.get("resources") or {}
        return int((resources.get("requests") or resources.get("limits") or {}).get(GPU, 0))

    spec = pod.get("spec") or {}
    containers = sum(request(c) for c in spec.get("containers") or [])
    return max([containers, *(request(c) for c in spec.get("initContainers") or [])])


def _bound_decisions(logs: Iterable[SchedulerProcess], ns: str) -> list[tuple[str, str]]:
    """(pod, node) of every ``bound`` decision the schedulers logged for the namespace's pods."""
    return [
        (d["pod"].split("/", 1)[1], d["node"])
        for s in logs
        for d in s.decisions()
        if d.get("action") == "bound" and d.get("pod", "").startswith(f"{ns}/")
    ]


def assert_consistent(
    cp: ControlPlane,
    namespace: str,
    schedulers: Iterable[SchedulerProcess] = (),
    partly_bound: Iterable[str] = (),
) -> dict[str, str]:
    """The API's state after a fault: every pod of ``namespace`` bound at most once (at most one
    ``Scheduled`` Event of gpufleet's per pod, naming the node the pod is on; at most one ``bound``
    decision per pod over ``schedulers``' logs, to that node), no node over-committed (the
    nvidia.com/gpu requests of the pods not ended that are bound to a node within its allocatable),
    and no PodGroup bound in part (its bound members 0 or at least ``minMember``; ``partly_bound``
    names those a test bound in part itself). The pods bound: name -> node."""
    pods = {p["metadata"]["name"]: p for p in _items(cp, f"/api/v1/namespaces/{namespace}/pods")}
    bound = {name: p["spec"]["nodeName"] for name, p in pods.items() if (p.get("spec") or {}).get("nodeName")}
    by_uid = {p["metadata"]["uid"]: name for name, p in pods.items()}

    scheduled: Counter[str] = Counter()
    for event in _items(cp, f"/api/v1/namespaces/{namespace}/events"):
        involved = event.get("involvedObject") or {}
        if event.get("reason") != "Scheduled" or (event.get("source") or {}).get("component") != COMPONENT:
            continue
        name = by_uid.get(involved.get("uid", ""))
        if name is None:
            continue  # a pod deleted since
        scheduled[name] += int(event.get("count") or 1)
        assert str(event.get("message", "")).endswith(f" to {bound.get(name)}"), (name, event["message"])
    assert all(count == 1 for count in scheduled.values()), f"bound more than once: {scheduled}"

    decided = _bound_decisions(schedulers, namespace)
    twice = {pod: n for pod, n in Counter(pod for pod, _ in decided).items() if n > 1}
    assert not twice, f"bound more than once by the schedulers: {twice}"
    for pod, node in decided:
        if pod in pods:
            assert bound.get(pod) == node, (pod, node, bound.get(pod))

    nodes = {n["metadata"]["name"]: n for n in _items(cp, "/api/v1/nodes")}
    for node in sorted(set(bound.values()) & set(nodes)):
        on_node = _items(cp, f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}")
        used = sum(_gpus(p) for p in on_node if (p.get("status") or {}).get("phase") not in ENDED)
        allocatable = int(((nodes[node].get("status") or {}).get("allocatable") or {}).get(GPU, 0))
        assert used <= allocatable, f"{node} over-committed: {used} GPUs requested of {allocatable}"

    exempt = set(partly_bound)
    for group in _items(cp, f"{PODGROUPS}/namespaces/{namespace}/podgroups"):
        name, min_member = group["metadata"]["name"], int(group["spec"]["minMember"])
        members = [
            p
            for p in pods.values()
            if ((p["metadata"].get("labels") or {}).get(GROUP_LABEL) == name)
            and (p.get("status") or {}).get("phase") not in ENDED
        ]
        count = sum(1 for p in members if p["metadata"]["name"] in bound)
        if name not in exempt:
            assert count == 0 or count >= min_member, (
                f"PodGroup {name}: {count} bound, minMember {min_member}"
            )
    return bound


# -- what the tests make ------------------------------------------------------------------------
class Lab:
    """A namespace and kwok GPU nodes labelled and tainted so that only its pods go there."""

    def __init__(self, cp: ControlPlane, ns: str, scheduler: str) -> None:
        self.cp, self.ns, self.scheduler = cp, ns, scheduler
        self.nodes: list[str] = []
        _apply(cp, POD_GROUP_CRD, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        wait_until("the PodGroup CRD served", lambda: cp.get(f"{PODGROUPS}/namespaces/{ns}/podgroups"))

    def gpu_nodes(self, *names: str, gpus: int = 8, extra_taints: Iterable[dict[str, str]] = ()) -> None:
        docs = []
        for name in names:
            doc = kwok_node(name, gpus, labels={"gpufleet-test": self.ns})
            doc["spec"]["taints"] = [
                {"key": "gpufleet-test", "value": self.ns, "effect": "NoSchedule"},
                *extra_taints,
            ]
            docs.append(doc)
            self.nodes.append(name)
        _apply(self.cp, *docs)

    def pod(self, name: str, gpus: int, group: str | None = None, node: str | None = None) -> dict[str, Any]:
        placed = {"nodeName": node} if node is not None else {}
        return kept_pod(name, self.ns, self.scheduler, {GPU: str(gpus)}, group, **placed)

    def gang(self, name: str, size: int, gpus: int, min_member: int | None = None) -> list[dict[str, Any]]:
        """A PodGroup of ``min_member`` (``size`` by default) and its ``size`` pods."""
        group = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": self.ns},
            "spec": {"minMember": min_member or size},
        }
        return [group, *(self.pod(f"{name}-{i}", gpus, group=name) for i in range(size))]

    def create(self, *docs: dict[str, Any]) -> None:
        _apply(self.cp, *docs)

    def wait_bound(self, names: Iterable[str], timeout_s: float = 45.0) -> dict[str, str]:
        wanted = set(names)

        def bound() -> dict[str, str] | None:
            found = _bound(self.cp, self.ns)
            return found if wanted <= set(found) else None

        return wait_until(f"{sorted(wanted)} bound", bound, timeout_s)

    def remove(self) -> None:
        self.cp.kubectl("delete", "namespace", self.ns, "--wait=false", "--ignore-not-found")
        if self.nodes:
            self.cp.kubectl("delete", "node", *self.nodes, "--ignore-not-found", "--wait=false")


def _names(docs: Iterable[dict[str, Any]]) -> list[str]:
    return [d["metadata"]["name"] for d in docs if d["kind"] == "Pod"]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Starts ``gpufleet scheduler`` processes (``SchedulerProcess``); kills those left at the end."""
    started: list[SchedulerProcess] = []

    def run(
        cp: ControlPlane, settings: dict[str, Any], name: str = COMPONENT, wait: bool = True
    ) -> SchedulerProcess:
        process = SchedulerProcess(cp, settings, tmp_path, name=name)
        started.append(process)
        return process.start(wait_leading=wait)

    yield run
    for process in started:
        if process.proc is not None and process.proc.poll() is None:
            os.kill(process.proc.pid, signal.SIGCONT)
        process.kill()


@pytest.fixture(scope="module", autouse=True)
def crd_as_found(control_plane: ControlPlane) -> Iterator[None]:
    """The shared control plane's PodGroup CRD served during this module, and as it was after it."""
    with pod_group_crd(control_plane):
        yield


@pytest.fixture(scope="module")
def private_plane() -> Iterator[ControlPlane]:
    """A control plane of this module's own, for the faults that break it: kube-apiserver compacts
    etcd every 5 s (``--etcd-compaction-interval``) and serves watches from etcd (no watch cache),
    so a watch resumed from a version older than the last compaction gets 410 Gone."""
    from e2e.components import BuildError, build, built, go_binary
    from e2e.controlplane import ControlPlaneError

    if built() is None and go_binary() is None:
        pytest.skip("no control plane: the Go toolchain is not on PATH to build it")
    try:
        cp = ControlPlane(build(), apiserver_flags=["--etcd-compaction-interval=5s", "--watch-cache=false"])
        cp.start()
    except (BuildError, ControlPlaneError) as exc:
        pytest.skip(f"no control plane: {exc}")
    yield cp
    apiserver = cp.processes.get("kube-apiserver")
    if apiserver is not None:  # it lingers for long after SIGTERM, and its data is thrown away
        apiserver.kill()
    cp.remove()


def _connections(pid: int, api_port: int) -> set[str]:
    """The local ports of the process's established TCP connections to the API server."""
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", "dport", "=", f":{api_port}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[2].rsplit(":", 1)[1] for line in out.splitlines() if f"pid={pid}," in line}


def _cut_connections(pid: int, api_port: int) -> int:
    """Abort (``ss -K``) the process's TCP connections to the API server, as a network fault does;
    how many there were. Skipped where sockets cannot be destroyed (``ss -K`` needs CAP_NET_ADMIN
    and a kernel with ``CONFIG_INET_DIAG_DESTROY``)."""
    ports = _connections(pid, api_port)
    for port in ports:
        subprocess.run(
            ["ss", "-K", "sport", "=", f":{port}", "dport", "=", f":{api_port}"], capture_output=True
        )
    if ports & _connections(pid, api_port):
        pytest.skip("ss -K cannot abort TCP connections here (CAP_NET_ADMIN, CONFIG_INET_DIAG_DESTROY)")
    return len(ports)


def _stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


# -- faults on the private control plane ----------------------------------------------------------
def test_pods_are_bound_once_when_the_api_server_restarts_mid_run(
    private_plane: ControlPlane, start: Start
) -> None:
    """kube-apiserver killed and restarted while bindings are under way: the informers resume their watches
    (client-go's reflector: a broken watch is resumed from the last resourceVersion after a backoff),
    a binding that failed is tried again, and the pods created after the restart are bound too."""
    cp = private_plane
    lab = Lab(cp, "faults-restart", "gpufleet-restart")
    lab.gpu_nodes("restart-a", "restart-b")
    scheduler = start(cp, config(lab.scheduler))
    before = [*lab.gang("first", 2, 2), lab.pod("single-0", 1), lab.pod("single-1", 1)]
    lab.create(*before)
    cp.restart_apiserver()
    after = [*lab.gang("second", 3, 2), lab.pod("single-2", 1), lab.pod("single-3", 1)]
    lab.create(*after)
    lab.wait_bound(_names(before + after))
    assert scheduler.proc is not None and scheduler.proc.poll() is None, scheduler.stderr()
    assert_consistent(cp, lab.ns, [scheduler])


def test_the_scheduler_sees_new_pods_after_its_watches_are_cut(
    private_plane: ControlPlane, start: Start
) -> None:
    """Every TCP connection of the scheduler to kube-apiserver aborted (``ss -K``), the API server
    itself untouched: the watches break, are resumed, and the pods created afterwards are bound."""
    cp = private_plane
    lab = Lab(cp, "faults-cut", "gpufleet-cut")
    lab.gpu_nodes("cut-a", "cut-b")
    scheduler = start(cp, config(lab.scheduler))
    assert scheduler.proc is not None
    lab.create(lab.pod("first", 1))
    lab.wait_bound(["first"])
    # informers of nodes, pods, podgroups and namespaces, and the writers' connection
    assert _cut_connections(scheduler.proc.pid, cp.api_port) >= 4
    after = [*lab.gang("gang", 2, 2), lab.pod("second", 1)]
    lab.create(*after)
    lab.wait_bound(_names(after))
    assert_consistent(cp, lab.ns, [scheduler])


def test_pods_created_while_the_scheduler_was_paused_past_a_compaction_are_bound_after_a_relist(
    private_plane: ControlPlane, start: Start
) -> None:
    """The scheduler paused (SIGSTOP), its connections cut, pods created, and etcd compacted past the
    resourceVersion its watches had reached: when it resumes, each watch gets 410 Gone and re-lists
    (client-go's reflector: ``isExpiredError`` -> relist), and the pods made meanwhile are bound."""
    cp = private_plane
    lab = Lab(cp, "faults-compact", "gpufleet-compact")
    lab.gpu_nodes("compact-a", "compact-b")
    scheduler = start(cp, config(lab.scheduler))
    assert scheduler.proc is not None
    pid = scheduler.proc.pid
    lab.create(lab.pod("before", 1))
    lab.wait_bound(["before"])
    os.kill(pid, signal.SIGSTOP)
    wait_until("the scheduler stopped", lambda: _stopped(pid))
    _cut_connections(pid, cp.api_port)
    during = [*lab.gang("gang", 2, 2), *(lab.pod(f"during-{i}", 1) for i in range(4))]
    lab.create(*during)
    # a version newer than any the scheduler saw: compacted past it, the revision a watch from the
    # scheduler's last version starts at is gone too (a compaction that kept exactly that revision would
    # let the watch resume without 410 Gone)
    latest = str((cp.get("/api/v1/pods?limit=1") or {})["metadata"]["resourceVersion"])
    wait_until(
        f"etcd compacted past resourceVersion {latest}",
        lambda: (
            _request(cp, "GET", f"/api/v1/pods?resourceVersion={latest}&resourceVersionMatch=Exact")[0] == 410
        ),
        timeout_s=40.0,
    )
    assert set(_bound(cp, lab.ns)) == {"before"}
    os.kill(pid, signal.SIGCONT)
    lab.wait_bound(_names(during))
    wait_until("the re-list said", lambda: "re-listed pods after 410 Gone" in scheduler.stderr())
    assert_consistent(cp, lab.ns, [scheduler])


# -- faults on the session's control plane --------------------------------------------------------
def test_a_pod_another_scheduler_binds_first_is_bound_once_and_ours_reports_the_binding_taken(
    control_plane: ControlPlane, start: Start
) -> None:
    """Another scheduler binds the pods ours is binding (ours slowed to 2 requests a second): the API
    server takes the first Binding of each pod and answers the second with 409 Conflict
    (``BindingREST.setPodHostAndAnnotations``: "pod ... is already assigned to node"); ours logs
    ``binding taken`` for each pod it lost, writes no ``Scheduled`` Event for it, and no node is
    over-committed. The other scheduler binds to a node ours never picks (a taint the pods do not
    tolerate; a Binding is not filtered), so which of the two bound a pod is plain."""
    cp = control_plane
    lab = Lab(cp, "faults-race", "gpufleet-race")
    lab.gpu_nodes("race-a", "race-b")
    lab.gpu_nodes("race-other", extra_taints=[{"key": "other-scheduler", "effect": "NoSchedule"}])
    try:
        pods = [lab.pod(f"p-{i}", 1) for i in range(5)]
        lab.create(*pods)
        scheduler = start(cp, config(lab.scheduler, qps=2, burst=1))
        wait_until("our first binding", lambda: _bound(cp, lab.ns))
        codes = {name: _bind(cp, lab.ns, name, "race-other") for name in reversed(_names(pods))}
        assert set(codes.values()) <= {201, 409}, codes
        theirs = {name for name, code in codes.items() if code == 201}
        assert theirs, "the other scheduler won no race"
        bound = lab.wait_bound(_names(pods))

        def outcomes() -> dict[str, str] | None:
            logged = {d["pod"].split("/", 1)[1]: d["action"] for d in scheduler.decisions()}
            return logged if set(logged) >= set(_names(pods)) else None

        logged = wait_until("our decision on each pod", outcomes)
        assert {n for n, a in logged.items() if a == "binding taken"} == theirs
        assert {n for n, a in logged.items() if a == "bound"} == set(_names(pods)) - theirs
        assert {n for n in theirs if bound[n] == "race-other"} == theirs
        assert all(bound[n] in ("race-a", "race-b") for n in set(bound) - theirs)
        assert_consistent(cp, lab.ns, [scheduler])
    finally:
        lab.remove()


def test_a_gang_the_killed_scheduler_bound_in_part_is_completed_by_the_next(
    control_plane: ControlPlane, start: Start
) -> None:
    """The scheduler killed (SIGKILL) after binding the first of a 4-pod gang's members (its bindings
    slowed to one a second): the gang is bound in part; the next scheduler process finds it so and
    binds the other members (Coscheduling counts the bound members toward ``minMember``)."""
    cp = control_plane
    lab = Lab(cp, "faults-kill", "gpufleet-kill")
    lab.gpu_nodes("kill-a", "kill-b")
    try:
        first = start(cp, config(lab.scheduler, qps=1, burst=1), name="first")
        gang = lab.gang("gang", 4, 2)
        lab.create(*gang)
        wait_until("a member bound", lambda: _bound(cp, lab.ns))
        first.kill()
        partly = _bound(cp, lab.ns)
        assert 1 <= len(partly) < 4, partly
        second = start(cp, config(lab.scheduler), name="second")
        bound = lab.wait_bound(_names(gang))
        assert {p for p, _ in _bound_decisions([second], lab.ns)} == set(bound) - set(partly)
        assert_consistent(cp, lab.ns, [first, second])
    finally:
        lab.remove()


def test_a_gang_bound_in_part_by_hand_with_no_room_left_is_reported_on_its_pod_group(
    control_plane: ControlPlane, start: Start
) -> None:
    """Two of a 4-pod gang's members bound by hand, and the rest of both nodes taken: the other two
    cannot be placed, so the scheduler binds none of them and says so on the PodGroup, a
    ``PartlyBound`` Event and ``status`` ``phase: Scheduling``, ``scheduled: 2`` (scheduler-plugins'
    PodGroup phases)."""
    cp = control_plane
    lab = Lab(cp, "faults-partial", "gpufleet-partial")
    lab.gpu_nodes("partial-a", "partial-b")
    try:
        gang = lab.gang("gang", 4, 4)
        lab.create(*gang)
        assert _bind(cp, lab.ns, "gang-0", "partial-a") == 201
        assert _bind(cp, lab.ns, "gang-1", "partial-b") == 201
        fillers = [lab.pod("filler-a", 4, node="partial-a"), lab.pod("filler-b", 4, node="partial-b")]
        lab.create(*fillers)
        scheduler = start(cp, config(lab.scheduler))

        def reported() -> dict[str, Any] | None:
            found = cp.get(f"{PODGROUPS}/namespaces/{lab.ns}/podgroups/gang") or {}
            status = found.get("status") or {}
            return status if status.get("phase") == "Scheduling" else None

        assert wait_until("the PodGroup's status", reported).get("scheduled") == 2
        events = wait_until(
            "a PartlyBound Event on the PodGroup",
            lambda: [
                e
                for e in _items(cp, f"/api/v1/namespaces/{lab.ns}/events")
                if e.get("reason") == "PartlyBound" and e["involvedObject"].get("kind") == "PodGroup"
            ],
        )
        assert events[0]["involvedObject"]["name"] == "gang"
        assert set(_bound(cp, lab.ns)) == {"gang-0", "gang-1", "filler-a", "filler-b"}
        assert not _bound_decisions([scheduler], lab.ns)
        assert_consistent(cp, lab.ns, [scheduler], partly_bound=["gang"])
    finally:
        lab.remove()


def test_of_two_replicas_one_leads_and_the_other_takes_over_when_it_stops(
    control_plane: ControlPlane, start: Start
) -> None:
    """Two replicas on one Lease (client-go's ``leaderelection``): exactly one leads and binds; on
    SIGTERM the leader releases the Lease (``ReleaseOnCancel``) and exits 0, the other takes the
    Lease, leads, and binds the pods created afterwards."""
    cp = control_plane
    lab = Lab(cp, "faults-lease", "gpufleet-lease")
    lab.gpu_nodes("lease-a", "lease-b")
    lease = "gpufleet-faults-lease"
    try:
        settings = config(lab.scheduler, lease=lease)
        replicas = [start(cp, settings, name=n, wait=False) for n in ("replica-a", "replica-b")]

        def leaders() -> list[SchedulerProcess]:
            return [r for r in replicas if "leading: scheduling" in r.stderr()]

        wait_until("a leader", leaders)
        first = [*lab.gang("first", 2, 2), *(lab.pod(f"single-{i}", 1) for i in range(3))]
        lab.create(*first)
        lab.wait_bound(_names(first))
        (leader,) = leaders()
        (standby,) = [r for r in replicas if r is not leader]
        assert not _bound_decisions([standby], lab.ns)
        assert leader.stop() == 0
        wait_until("the standby leads", lambda: "leading: scheduling" in standby.stderr())
        after = [*lab.gang("after", 2, 2), *(lab.pod(f"single-after-{i}", 1) for i in range(2))]
        lab.create(*after)
        lab.wait_bound(_names(after))

        def logged() -> set[str]:
            return {p for p, _ in _bound_decisions([standby], lab.ns)}

        # a decision is logged once its binding is done: the API may show the pod bound a moment before
        wait_until("the standby's decisions logged", lambda: logged() >= set(_names(after)))
        assert logged() == set(_names(after))
        held = cp.get(f"/apis/coordination.k8s.io/v1/namespaces/default/leases/{lease}") or {}
        assert held["spec"]["holderIdentity"] == standby.name
        assert_consistent(cp, lab.ns, replicas)
        assert standby.stop() == 0
    finally:
        lab.remove()
        cp.kubectl("delete", "lease", lease, "-n", "default", "--ignore-not-found")


def test_no_pod_is_bound_to_a_node_deleted_while_pods_are_being_bound(
    control_plane: ControlPlane, start: Start
) -> None:
    """A node deleted while the scheduler binds (two bindings a second): no pod is bound to it after
    its deletion (the scheduler checks the node still exists right before each Binding; kube-apiserver
    does not check), and the pods that were meant for it are bound to the nodes left."""
    cp = control_plane
    lab = Lab(cp, "faults-node", "gpufleet-node")
    lab.gpu_nodes("node-a", "node-b", "node-c", gpus=4)
    try:
        pods = [lab.pod(f"p-{i:02d}", 1) for i in range(8)]
        lab.create(*pods)
        scheduler = start(cp, config(lab.scheduler, qps=2, burst=1))
        wait_until("a first binding", lambda: _bound(cp, lab.ns))
        cp.kubectl("delete", "node", "node-b", "--wait=false")
        # the binding under way when the node went (kube-scheduler has the same window)
        count = len(_bound(cp, lab.ns))
        wait_until("the next binding", lambda: len(_bound(cp, lab.ns)) > count)
        before = {p for p, n in _bound(cp, lab.ns).items() if n == "node-b"}
        # (PodGC deletes the pods left on the deleted node after its quarantine)
        bound = lab.wait_bound(set(_names(pods)) - before)
        assert {p for p, n in bound.items() if n == "node-b"} <= before
        assert set(bound.values()) - {"node-b"} <= {"node-a", "node-c"}
        assert_consistent(cp, lab.ns, [scheduler])
    finally:
        lab.remove()
