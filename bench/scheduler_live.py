"""Pods bound per second by ``gpufleet scheduler`` and by the real kube-scheduler, side by side on the
same control plane, with the same client rate limit (``clientConnection.qps``/``burst``) and the same
administrator's credentials (``system:masters``: exempt from API Priority and Fairness) for both.

Two workloads on the same kwok nodes (8 GPUs each, tainted and labelled for the bench; every pod
tolerates the taint and selects the label):

- ``pods``: one-GPU pods, upstream's default plugins in both profiles;
- ``gangs``: gangs of two-GPU pods, each a scheduler-plugins PodGroup (``minMember`` = the gang's
  size) bound together by gpufleet's Coscheduling. kube-scheduler has no Coscheduling: it schedules
  the same pods (their PodGroup label and all) one by one, without gang semantics.

Each run: every pod is created naming a scheduler that is not running, then the scheduler starts (its
own process, leader election off) and the clock runs from its start until a watch has seen every
pod with ``spec.nodeName``: nothing is subtracted, start-up and informer sync included. The
scheduler's CPU time (``/proc/<pid>/stat``, all its threads) is read then, before it is stopped. The
pods (and PodGroups) are deleted between runs, and the next run waits until they are gone.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.live import start_control_plane

NAMESPACE = "bench-scheduler"
LABEL = "gpufleet-bench"
LABEL_VALUE = "scheduler"
GPUS_PER_NODE = 8
QPS, BURST = 100.0, 200
GPUFLEET, KUBE = "bench-gpufleet", "bench-kube"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PODGROUPS = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{NAMESPACE}/podgroups"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
CRDS, CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "podgroups.scheduling.x-k8s.io"
RUN_TIMEOUT_S = 300.0
KUBE_GANGS = "kube-scheduler has no Coscheduling: it binds the gangs' pods one by one, without gang semantics"


@dataclass(frozen=True)
class Run:
    scheduler: str  # "gpufleet" | "kube-scheduler"
    workload: str  # "pods" | "gangs"
    pods: int
    bound: int
    wall_s: float  # from the process's start to the last pod seen bound
    ready_s: float  # from its start to its /readyz (gpufleet: and leading)
    cpu_s: float  # the process's user + system time when the last pod was seen bound
    writes: int  # requests through the client's rate limit: the bindings (Events and PodGroup statuses
    # have a limit of their own)

    @property
    def pods_per_s(self) -> float:
        return self.bound / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_per_1000(self) -> float:
        return 1000 * self.cpu_s / self.bound if self.bound else 0.0


@dataclass(frozen=True)
class SchedulerLiveFigures:
    nodes: int
    pods: int
    gangs: int
    gang_size: int
    qps: float
    burst: int
    setup_s: float
    runs: tuple[Run, ...]

    def run(self, scheduler: str, workload: str) -> Run | None:
        return next((r for r in self.runs if r.scheduler == scheduler and r.workload == workload), None)


class Api:
    """The administrator's HTTPS client on the control plane (16 requests in flight at most)."""

    def __init__(self, cp: Any) -> None:
        import httpx2 as httpx

        self.client = httpx.Client(
            base_url=cp.server,
            verify=ssl.create_default_context(cafile=str(cp.credentials.ca_cert)),
            headers={"Authorization": f"Bearer {cp.credentials.tokens['admin']}"},
            timeout=60,
            limits=httpx.Limits(max_connections=17),
        )

    def post(self, path: str, body: dict[str, Any]) -> None:
        response = self.client.post(path, json=body)
        if response.status_code not in (200, 201, 409):
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:300]}")

    def get(self, path: str, **params: str) -> dict[str, Any]:
        response = self.client.get(path, params=params)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:300]}")
        return dict(response.json())

    def post_all(self, path: str, bodies: Sequence[dict[str, Any]]) -> None:
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda body: self.post(path, body), bodies))

    def delete_all(self, path: str, selector: str) -> None:
        response = self.client.request(
            "DELETE",
            path,
            params={"labelSelector": selector},
            json={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
        )
        if response.status_code not in (200, 404):
            raise RuntimeError(f"DELETE {path}: {response.status_code} {response.text[:300]}")

    def close(self) -> None:
        self.client.close()


def wait(what: str, check: Callable[[], bool], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout_s:g} s")
        time.sleep(0.2)


def node(name: str) -> dict[str, Any]:
    """A kwok node (as ``tests/conftest.py``'s ``kwok_node``: 32 CPUs, 256 GiB), tainted and labelled
    for the bench."""
    from e2e.controlplane import KWOK_NODE_ANNOTATION

    from gpufleet.kube.manifests import node_manifest
    from gpufleet.model.node import Node, Taint

    gi = 2**30
    model = Node(
        name,
        labels={"kubernetes.io/hostname": name, LABEL: LABEL_VALUE},
        taints=(Taint(LABEL, LABEL_VALUE, "NoSchedule"),),
        capacity={"cpu": 32_000, "memory": 256 * gi, "pods": 110, "nvidia.com/gpu": GPUS_PER_NODE},
    )
    return node_manifest(model, {KWOK_NODE_ANNOTATION: "fake"})


def pod(name: str, scheduler: str, gpus: int, group: str | None = None) -> dict[str, Any]:
    labels = {LABEL: LABEL_VALUE, **({POD_GROUP_LABEL: group} if group else {})}
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "nodeSelector": {LABEL: LABEL_VALUE},
            "tolerations": [{"key": LABEL, "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "c", "image": "busybox", "resources": resources}],
        },
    }


def pod_group(name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LABEL: LABEL_VALUE}},
        "spec": {"minMember": members},
    }


def set_up(cp: Any, api: Api, nodes: int) -> bool:
    """The namespace, the PodGroup CRD, and ``nodes`` kwok nodes, Ready and untainted by the node
    lifecycle controller; whether the CRD was installed here (it was not served before)."""
    from e2e.gpufleet_scheduler import POD_GROUP_CRD

    api.post("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    installed = api.client.get(f"{CRDS}/{CRD}").status_code == 404
    api.post(CRDS, POD_GROUP_CRD)
    wait("the PodGroup CRD", lambda: api.client.get(PODGROUPS).status_code == 200)
    names = [f"bench-sched-{i:04d}" for i in range(nodes)]
    api.post_all("/api/v1/nodes", [node(n) for n in names])

    def ready() -> bool:
        items = api.get("/api/v1/nodes", labelSelector=f"{LABEL}={LABEL_VALUE}")["items"]
        return len(items) == nodes and all(_node_ready(n) for n in items)

    wait(f"{nodes} kwok nodes Ready", ready, 300)
    return installed


def _node_ready(obj: dict[str, Any]) -> bool:
    conditions = obj.get("status", {}).get("conditions") or []
    taints = obj.get("spec", {}).get("taints") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions) and not any(
        t.get("key", "").startswith("node.kubernetes.io/") for t in taints
    )


class BoundWatch:
    """A watch on the bench's pods of one scheduler, started before that scheduler: the moment it has
    seen ``expected`` of them with ``spec.nodeName``."""

    def __init__(self, api: Api, scheduler: str, expected: int) -> None:
        self.api, self.expected = api, expected
        self.selector = f"spec.schedulerName={scheduler}"
        self.bound: set[str] = set()
        self.done = threading.Event()
        self.done_at = 0.0
        self.stopped = False
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._run, name=f"watch-{scheduler}", daemon=True)

    def start(self) -> BoundWatch:
        listed = self.api.get(PODS, fieldSelector=self.selector)
        self.version = listed["metadata"]["resourceVersion"]
        self._seen(listed["items"])
        self.thread.start()
        return self

    def _seen(self, objs: list[dict[str, Any]]) -> None:
        for obj in objs:
            if obj.get("spec", {}).get("nodeName"):
                self.bound.add(obj["metadata"]["name"])
        if len(self.bound) >= self.expected and not self.done.is_set():
            self.done_at = time.monotonic()
            self.done.set()

    def _run(self) -> None:
        try:
            while not self.done.is_set() and not self.stopped:
                params = {
                    "watch": "true",
                    "fieldSelector": self.selector,
                    "resourceVersion": self.version,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": "60",
                }
                with self.api.client.stream("GET", PODS, params=params, timeout=None) as response:
                    for line in response.iter_lines():
                        if not line:
                            continue
                        event = json.loads(line)
                        if event["type"] == "ERROR":  # 410: list again
                            listed = self.api.get(PODS, fieldSelector=self.selector)
                            self.version = listed["metadata"]["resourceVersion"]
                            self._seen(listed["items"])
                            break
                        self.version = event["object"]["metadata"]["resourceVersion"]
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._seen([event["object"]])
                        if self.done.is_set() or self.stopped:
                            return
        except Exception as exc:  # told to the waiter
            self.error = exc
            self.done.set()

    def wait(self, timeout_s: float) -> bool:
        self.done.wait(timeout_s)
        self.stopped = True
        if self.error is not None:
            raise RuntimeError(f"watching the bench's pods: {self.error}") from self.error
        return len(self.bound) >= self.expected


def cpu_seconds(pid: int) -> float:
    """User + system time of process ``pid`` (all its threads), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class KubeScheduler:
    """A second kube-scheduler beside the control plane's own: profile ``KUBE``, the administrator's
    kubeconfig, ``qps``/``burst``, leader election off."""

    name = "bench-kube-scheduler"

    def __init__(self, cp: Any, workdir: Path, qps: float, burst: int) -> None:
        from e2e.controlplane import free_port

        self.cp, self.port = cp, free_port()
        self.path = workdir / "bench-kube-scheduler.yaml"
        document = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(cp.kubeconfig), "qps": qps, "burst": burst},
            "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": KUBE}],
        }
        self.path.write_text(yaml.safe_dump(document, sort_keys=False))

    def start(self) -> int:
        args = ["kube-scheduler", "--config", str(self.path), "--bind-address", "127.0.0.1"]
        self.cp.spawn(self.name, [*args, "--secure-port", str(self.port)])
        self.cp.wait(
            lambda: self.cp.http_ok(f"https://127.0.0.1:{self.port}/readyz", insecure=True),
            self.name,
            "/readyz",
        )
        return int(self.cp.processes[self.name].pid)

    def stop(self) -> None:
        self.cp.terminate(self.name)


class Gpufleet:
    """``gpufleet scheduler`` (``e2e.gpufleet_scheduler.SchedulerProcess``): profile ``GPUFLEET``, the
    same kubeconfig, ``qps``/``burst``, leader election off; Coscheduling for the gangs."""

    def __init__(self, cp: Any, workdir: Path, qps: float, burst: int, gangs: bool) -> None:
        from e2e.gpufleet_scheduler import SchedulerProcess, config

        plugins: dict[str, Any] | None = (
            None if gangs else {}
        )  # None: Coscheduling (its queue sort too); {}: the defaults
        settings = config(GPUFLEET, plugins=plugins, qps=qps, burst=burst)
        name = f"bench-gpufleet-{'gangs' if gangs else 'pods'}"
        self.process = SchedulerProcess(cp, settings, workdir, name=name)

    def start(self) -> int:
        self.process.start()
        assert self.process.proc is not None
        return int(self.process.proc.pid)

    def stop(self) -> None:
        if self.process.stop() != 0:
            raise RuntimeError(f"gpufleet scheduler did not stop cleanly:\n{self.process.stderr()[-2000:]}")


def measure(
    api: Api,
    scheduler: KubeScheduler | Gpufleet,
    label: str,
    workload: str,
    bodies: list[dict[str, Any]],
    writes: int,
) -> Run:
    """Create the pods, start the scheduler, wait until every pod is bound; then stop it and delete
    the pods and PodGroups, and wait until they are gone."""
    name = KUBE if isinstance(scheduler, KubeScheduler) else GPUFLEET
    api.post_all(PODS, bodies)
    watch = BoundWatch(api, name, len(bodies)).start()
    started = time.monotonic()
    pid = scheduler.start()
    ready_s = time.monotonic() - started
    try:
        watch.wait(RUN_TIMEOUT_S)
        cpu_s = cpu_seconds(pid)
    finally:
        scheduler.stop()
        api.delete_all(PODS, f"{LABEL}={LABEL_VALUE}")
        api.delete_all(PODGROUPS, f"{LABEL}={LABEL_VALUE}")
        wait("the bench's pods deleted", lambda: not api.get(PODS, limit="1")["items"], 300)
    wall_s = (watch.done_at or time.monotonic()) - started
    return Run(label, workload, len(bodies), len(watch.bound), wall_s, ready_s, cpu_s, writes)


def workloads(pods: int, gangs: int, gang_size: int) -> dict[str, Callable[[str], list[dict[str, Any]]]]:
    """For each workload, its pods for a scheduler name."""

    def single(scheduler: str) -> list[dict[str, Any]]:
        return [pod(f"p-{scheduler}-{i:05d}", scheduler, 1) for i in range(pods)]

    def gang(scheduler: str) -> list[dict[str, Any]]:
        return [
            pod(f"g-{scheduler}-{g:04d}-{m}", scheduler, 2, f"gang-{g:04d}")
            for g in range(gangs)
            for m in range(gang_size)
        ]

    return {"pods": single, "gangs": gang}


def run_scheduler_live(
    nodes: int = 500,
    pods: int = 2_000,
    gangs: int = 200,
    gang_size: int = 4,
    cp: Any = None,
    qps: float = QPS,
    burst: int = BURST,
    kube_gangs: bool = True,
) -> SchedulerLiveFigures | str:
    """The figures, or why they could not be taken (the control plane is not built). ``cp``: a running
    control plane to use (it is left running, and the bench's objects are deleted, the PodGroup CRD too
    if the bench installed it). ``kube_gangs``: kube-scheduler runs the gang workload too (without gangs)."""
    own = cp is None
    if cp is None:
        cp = start_control_plane()
        if isinstance(cp, str):
            return cp
    api = Api(cp)
    runs: list[Run] = []
    installed = False
    try:
        started = time.monotonic()
        installed = set_up(cp, api, nodes)
        setup_s = time.monotonic() - started
        with tempfile.TemporaryDirectory(prefix="gpufleet-bench-scheduler-") as tmp:
            workdir = Path(tmp)
            for workload, bodies in workloads(pods, gangs, gang_size).items():
                gang_bodies = [pod_group(f"gang-{g:04d}", gang_size) for g in range(gangs)]
                if workload == "gangs":
                    api.post_all(PODGROUPS, gang_bodies)
                if workload == "pods" or kube_gangs:
                    kube = KubeScheduler(cp, workdir, qps, burst)
                    members = bodies(KUBE)
                    runs.append(measure(api, kube, "kube-scheduler", workload, members, len(members)))
                    if workload == "gangs":  # deleted with the pods
                        api.post_all(PODGROUPS, gang_bodies)
                gpufleet = Gpufleet(cp, workdir, qps, burst, workload == "gangs")
                members = bodies(GPUFLEET)
                runs.append(measure(api, gpufleet, "gpufleet", workload, members, len(members)))
        return SchedulerLiveFigures(nodes, pods, gangs, gang_size, qps, burst, setup_s, tuple(runs))
    finally:
        api.close()
        if own:
            cp.remove()
        else:
            cp.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
            cp.kubectl("delete", "nodes", "-l", f"{LABEL}={LABEL_VALUE}", "--wait=false")
            if installed:  # as it was: other tests see no PodGroup CRD
                cp.kubectl("delete", "crd", CRD)


def describe_scheduler_live(figures: SchedulerLiveFigures | str) -> str:
    if isinstance(figures, str):
        return f"live scheduler against kube-scheduler: {figures}"
    f = figures
    lines = [
        f"live scheduling, gpufleet scheduler beside kube-scheduler on one control plane, {f.nodes:,} kwok "
        f"nodes ({GPUS_PER_NODE} GPUs each, made in {f.setup_s:.0f} s); both clients qps {f.qps:g} burst "
        f"{f.burst}, the administrator's credentials; wall time from the scheduler's start (start-up "
        "included) to the last pod bound:"
    ]
    titles = {
        "pods": f"{f.pods:,} one-GPU pods",
        "gangs": f"{f.gangs:,} gangs of {f.gang_size} two-GPU pods ({f.gangs * f.gang_size:,} pods)",
    }
    for workload, title in titles.items():
        lines.append(f"  {title}:")
        for scheduler in ("kube-scheduler", "gpufleet"):
            run = f.run(scheduler, workload)
            if run is None:
                lines.append(f"    {scheduler}: not run ({KUBE_GANGS})")
                continue
            lines.append(
                f"    {scheduler}: {run.bound:,}/{run.pods:,} bound in {run.wall_s:.1f} s "
                f"({run.pods_per_s:.0f} pods/s; ready after {run.ready_s:.1f} s), {run.cpu_s:.2f} s CPU "
                f"({run.cpu_per_1000:.2f} s per 1,000 pods); {run.writes:,} writes through the client "
                f"limit, which alone takes {floor(run.writes, f.qps, f.burst):.1f} s"
            )
        kube, gpufleet = f.run("kube-scheduler", workload), f.run("gpufleet", workload)
        if kube is not None and gpufleet is not None and kube.pods_per_s and kube.cpu_s:
            lines.append(
                f"    gpufleet/kube-scheduler: pods/s {gpufleet.pods_per_s / kube.pods_per_s:.2f}x, "
                f"CPU {gpufleet.cpu_s / kube.cpu_s:.2f}x"
                + (f" ({KUBE_GANGS})" if workload == "gangs" else "")
            )
    return "\n".join(lines)


def floor(writes: int, qps: float, burst: int) -> float:
    """The least time ``writes`` requests take through a full token bucket of ``burst`` at ``qps``."""
    return max(0, writes - burst) / qps


def complete(figures: SchedulerLiveFigures | str) -> bool:
    return isinstance(figures, str) or all(r.bound == r.pods for r in figures.runs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scheduler_live", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="200 pods on 50 nodes, 20 gangs")
    args = parser.parse_args(argv)
    figures = run_scheduler_live(50, 200, 20) if args.quick else run_scheduler_live()
    print(describe_scheduler_live(figures), flush=True)
    return 0 if complete(figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
