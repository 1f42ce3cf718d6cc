"""``gpufleet snapshot``, ``gpufleet explain`` and ``gpufleet whatif`` on a large live cluster: the test
control plane with 1,000 kwok nodes (8 GPUs each) and 20,000 pods, 50 of them pending. The what-if gives
the first pending pod a PriorityClass above every other pod's and simulates both sides for 10 minutes.

Each command runs in its own process; its CPU time and peak memory are that process's own
(``wait4``), so the control plane's work does not count. ``kubectl get nodes,pods -A -o json``
runs back to back with the snapshot, and the ratio of their CPU times is printed: it says what
gpufleet's paging and writing cost beside kubectl's own read of the same objects.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMESPACE = "bench-live"
GPUS_PER_NODE = 8


@dataclass(frozen=True)
class Run:
    cpu_s: float
    wall_s: float
    peak_rss_mib: float
    output: str


@dataclass(frozen=True)
class LiveFigures:
    nodes: int
    pods: int
    pending: int
    populate_s: float
    snapshot: Run
    kubectl_get: Run
    explain: Run
    explained: int
    whatif: Run


#: the what-if's change: the first pending pod above every other pod (it preempts room for itself)
URGENT = f"""apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: urgent}}
value: 100000
---
apiVersion: gpufleet.io/v1alpha1
kind: Change
metadata: {{name: urgent-wait}}
spec:
  pods:
  - selector: {{namespace: {NAMESPACE}, names: [wait-000]}}
    set: {{priorityClassName: urgent}}
"""


def measured(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``command`` to its end; its own CPU time and peak RSS (``wait4``'s rusage)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    assert proc.stdout is not None
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}:\n{output[-2000:]}")
    return Run(usage.ru_utime + usage.ru_stime, time.monotonic() - started, usage.ru_maxrss / 1024, output)


def populate(cp: Any, nodes: int, pods: int, pending: int) -> float:
    """Create the nodes and the bound pods (``spec.nodeName`` set, as a scheduler leaves them) with 16
    requests in flight, and ``pending`` 8-GPU pods no node can take; wait until kwok runs them all."""
    import httpx2 as httpx

    started = time.monotonic()
    client = httpx.Client(
        base_url=cp.server,
        verify=ssl.create_default_context(cafile=str(cp.credentials.ca_cert)),
        headers={"Authorization": f"Bearer {cp.credentials.tokens['admin']}"},
        timeout=60,
    )
    client.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})

    def post(path: str, body: dict[str, Any]) -> None:
        response = client.post(path, json=body)
        if response.status_code not in (200, 201, 409):
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:300]}")

    node_names = [f"bench-{i:04d}" for i in range(nodes)]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda name: post("/api/v1/nodes", _node(name)), node_names))
        # round robin: every node holds pods - pending // nodes pods or one more, 7 of them 1 GPU each
        bound = [(f"w-{i:05d}", node_names[i % nodes], i // nodes) for i in range(pods - pending)]
        list(pool.map(lambda p: post(f"/api/v1/namespaces/{NAMESPACE}/pods", _pod(*p)), bound))
        waiting = [(f"wait-{i:03d}", None, GPUS_PER_NODE) for i in range(pending)]
        list(pool.map(lambda p: post(f"/api/v1/namespaces/{NAMESPACE}/pods", _pod(*p)), waiting))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:  # kwok plays the kubelet of every bound pod: Running
        listed = client.get(
            f"/api/v1/namespaces/{NAMESPACE}/pods",
            params={"fieldSelector": "status.phase=Pending,spec.nodeName!=", "limit": "1"},
        ).json()
        if not listed.get("items"):
            break
        time.sleep(2)
    client.close()
    return time.monotonic() - started


def _node(name: str) -> dict[str, Any]:
    capacity = {"cpu": "128", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": str(GPUS_PER_NODE)}
    return {
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {"kubernetes.io/hostname": name, "gpufleet-bench": "live"},
        },
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _pod(name: str, node: str | None, slot: int) -> dict[str, Any]:
    gpus = GPUS_PER_NODE if node is None else (1 if slot < GPUS_PER_NODE - 1 else 0)
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {"requests": {"cpu": "100m"}}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox", "resources": resources}]}
    if node is not None:
        spec["nodeName"] = node
    else:  # only the bench's nodes, so that the message counts them alone
        spec["nodeSelector"] = {"gpufleet-bench": "live"}
    return {"metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}}, "spec": spec}


def measure(cp: Any, out: Path) -> tuple[Run, Run, Run, int, Run]:
    gpufleet = [str(Path(sys.executable).with_name("gpufleet"))]
    kubeconfig = str(cp.kubeconfig)
    snapshot = measured([*gpufleet, "snapshot", "--kubeconfig", kubeconfig, "-A", "--out", str(out)])
    kubectl = [str(cp.bins / "kubectl"), "--kubeconfig", kubeconfig]
    kubectl_get = measured([*kubectl, "get", "nodes,pods", "-A", "-o", "json"])
    explain = measured([*gpufleet, "explain", str(out), "--json"])
    explained = explain.output.count('"pod": ')
    change = out.parent / "urgent.yaml"
    change.write_text(URGENT)
    whatif = [*gpufleet, "whatif", str(out), str(change), "--for", "10m", "-o", "json"]
    return snapshot, kubectl_get, explain, explained, measured([*whatif, "--out", str(out.parent / "whatif")])


def start_control_plane() -> Any:
    """A control plane of the bench's own (a ``ControlPlane``), or why there is none (a string)."""
    from e2e.components import BuildError, build, built
    from e2e.controlplane import ControlPlane

    if built() is None:
        return "skipped: the control plane is not built (make controlplane)"
    try:
        return ControlPlane(build(lambda line: None)).start()
    except BuildError as exc:
        return f"skipped: {exc}"


def run_live(nodes: int = 1_000, pods: int = 20_000, pending: int = 50, cp: Any = None) -> LiveFigures | str:
    """The figures, or why they could not be taken (the control plane is not built). ``cp``: a
    running control plane to use (it is left running, and the bench's objects are deleted)."""
    import tempfile

    own = cp is None
    if cp is None:
        cp = start_control_plane()
        if isinstance(cp, str):
            return cp
    try:
        populate_s = populate(cp, nodes, pods, pending)
        with tempfile.TemporaryDirectory(prefix="gpufleet-bench-live-") as tmp:
            snapshot, kubectl, explain, explained, whatif = measure(cp, Path(tmp) / "snapshot")
        return LiveFigures(nodes, pods, pending, populate_s, snapshot, kubectl, explain, explained, whatif)
    finally:
        if own:
            cp.remove()
        else:
            cp.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
            cp.kubectl("delete", "nodes", "-l", "gpufleet-bench=live", "--wait=false")


def describe_live(figures: LiveFigures | str) -> str:
    if isinstance(figures, str):
        return f"live snapshot and explain: {figures}"
    f = figures
    return "\n".join(
        (
            f"live cluster, {f.nodes:,} nodes and {f.pods:,} pods ({f.pending} pending), made in "
            f"{f.populate_s:.0f} s:",
            f"  snapshot: {f.snapshot.cpu_s:.2f} s CPU ({f.snapshot.wall_s:.2f} s wall), peak "
            f"{f.snapshot.peak_rss_mib:.0f} MiB; kubectl get nodes,pods -A -o json back to back: "
            f"{f.kubectl_get.cpu_s:.2f} s CPU, peak {f.kubectl_get.peak_rss_mib:.0f} MiB "
            f"(snapshot/kubectl CPU {f.snapshot.cpu_s / f.kubectl_get.cpu_s:.2f}x)",
            f"  explain on the snapshot: {f.explain.cpu_s:.2f} s CPU ({f.explain.wall_s:.2f} s wall), peak "
            f"{f.explain.peak_rss_mib:.0f} MiB, {f.explained} pending pods explained",
            f"  whatif on the snapshot (one pending pod made urgent, 10 minutes): {f.whatif.cpu_s:.2f} s CPU "
            f"({f.whatif.wall_s:.2f} s wall), peak {f.whatif.peak_rss_mib:.0f} MiB",
        )
    )
