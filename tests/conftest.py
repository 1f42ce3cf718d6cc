"""Shared builders for tests: nodes and pods in canonical units, scenarios run to their summary,
and the real control plane (``control_plane``: built once into a cache, started once a session)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gpufleet.kube import load_scenario
from gpufleet.model.node import Node, Taint
from gpufleet.model.pod import Pod
from gpufleet.report import finished_summary
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # e2e/ lives beside src/, outside the package
    sys.path.insert(0, str(ROOT))

GPU = "nvidia.com/gpu"
T = TypeVar("T")
GI = 2**30


def gpu_node(
    name: str,
    gpus: int = 8,
    cpu: int = 96,
    mem_gi: int = 768,
    taints: tuple[Taint, ...] = (),
    labels: dict[str, str] | None = None,
) -> Node:
    return Node(
        name,
        labels=dict(labels or {}),
        taints=taints,
        capacity={"cpu": cpu * 1000, "memory": mem_gi * GI, "pods": 110, GPU: gpus},
    )


def gpu_pod(name: str, gpus: int, cpu: int | None = None, mem_gi: int | None = None, **kw: object) -> Pod:
    cpu = gpus * 8 if cpu is None else cpu
    mem_gi = gpus * 64 if mem_gi is None else mem_gi
    requests = {"cpu": cpu * 1000, "memory": mem_gi * GI}
    if gpus:
        requests[GPU] = gpus
    return Pod(name, requests=requests, **kw)  # type: ignore[arg-type]


def wait_until(what: str, check: Callable[[], T | None], timeout_s: float = 30.0) -> T:
    """``check()``'s first truthy value, polled every 0.1 s: on a real control plane a test waits for
    an outcome, never for a fixed time; ``what`` names it when it does not come in ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout_s:g} s")


def kwok_node(
    name: str, gpus: int = 8, labels: dict[str, str] | None = None, taints: tuple[Taint, ...] = ()
) -> dict[str, Any]:
    """A v1 Node that the test control plane's kwok plays (annotated ``kwok.x-k8s.io/node: fake``):
    32 CPUs, 256 GiB, ``gpus`` GPUs, labelled with its hostname and ``labels``."""
    from e2e.controlplane import KWOK_NODE_ANNOTATION

    from gpufleet.kube.manifests import node_manifest

    hostname = {"kubernetes.io/hostname": name, **(labels or {})}
    node = gpu_node(name, gpus, cpu=32, mem_gi=256, taints=taints, labels=hostname)
    return node_manifest(node, {KWOK_NODE_ANNOTATION: "fake"})


@pytest.fixture(autouse=True)
def no_ray_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sweeps run where a test tells them (processes, or ``--ray local``), never on a Ray cluster
    that ``RAY_ADDRESS`` in the caller's environment names."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def simulated(
    paths: Sequence[Path], seed: int | None = None, duration_s: float | None = None
) -> dict[str, Any]:
    """The scenario run to its end (or ``duration_s``) with ``seed`` (else its own): ``summary.json``'s
    content as ``gpufleet simulate`` writes it (with ``latency`` and ``jobs``, checked against the
    schema)."""
    scenario = load_scenario(list(paths))
    if duration_s is not None:
        scenario = replace(scenario, simulation=replace(scenario.simulation, duration_s=duration_s))
    sim = Simulation(scenario, seed=seed)
    sim.run()
    return finished_summary(build_summary(sim))


def pods_by_name(summary: dict[str, Any], namespaced: bool = False) -> dict[str, dict[str, Any]]:
    """The summary's pod records by name (``namespace/name`` with ``namespaced``)."""
    return {(p["name"] if namespaced else p["name"].split("/", 1)[1]): p for p in summary["pods"]}


def _unavailable(reason: str, what: str = "control plane") -> None:
    """Without what they need (Go to build the control plane, Prometheus) the live tests are skipped;
    under CI (``CI=true``) that is a failure."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"the {what} is required under CI: {reason}", pytrace=False)
    pytest.skip(f"no {what}: {reason}")


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[Any]:
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok on loopback, shared by
    the session's tests (each cleans what it made). Their logs are kept in ``out/e2e-logs`` when a
    test of the session failed."""
    from e2e.components import BuildError, build, built, go_binary
    from e2e.controlplane import ControlPlane, ControlPlaneError

    if built() is None and go_binary() is None:
        _unavailable("the Go toolchain is not on PATH to build it")

    def say(line: str) -> None:
        print(line, file=sys.__stderr__, flush=True)

    try:
        cp = ControlPlane(build(say)).start()
    except (BuildError, ControlPlaneError) as exc:
        _unavailable(str(exc))
    version = (cp.get("/version") or {}).get("gitVersion")
    say(f"control plane (Kubernetes {version}) ready in {cp.started_s:.1f} s")
    yield cp
    if request.session.testsfailed:
        kept = cp.keep_logs(ROOT / "out" / "e2e-logs")
        say(f"control plane logs kept in {kept}")
    cp.remove()


@pytest.fixture(scope="module")
def prometheus(control_plane: Any) -> Iterator[Any]:
    """Prometheus (Debian's package, unpacked into the cache on first use) scraping kube-state-metrics
    on the session's control plane every second (an ``e2e.prometheus.Prometheus``), for one test
    module: both are stopped after it, so they do not watch the rest of the session's pods."""
    from e2e import kube_state_metrics
    from e2e import prometheus as server

    try:
        binary = server.binary()
    except server.PrometheusUnavailable as exc:
        _unavailable(str(exc), "Prometheus")
    started = server.start(control_plane, binary, [kube_state_metrics.start(control_plane)])
    yield started
    server.stop(control_plane)
    kube_state_metrics.stop(control_plane)


@pytest.fixture(scope="session")
def fidelity(control_plane: Any) -> Any:
    """The fidelity run shared by the fidelity tests: every kube-scheduler case, then (where a
    cluster-autoscaler binary was given) every cluster-autoscaler case, on the session's control
    plane; the report goes to ``out/fidelity/`` (an ``e2e.fidelity.run.Fidelity``)."""
    from e2e.components import cluster_autoscaler
    from e2e.fidelity import report
    from e2e.fidelity.autoscaler_cases import autoscaler_cases
    from e2e.fidelity.autoscaler_run import run_autoscaler_cases
    from e2e.fidelity.real import RealCluster
    from e2e.fidelity.run import Fidelity, run_cases
    from e2e.fidelity.sources import all_cases

    scheduler, seconds = run_cases(RealCluster(control_plane), all_cases())
    binary, autoscaler, summary = cluster_autoscaler(), None, None
    if binary is not None:
        autoscaler, ca_seconds = run_autoscaler_cases(control_plane, binary, autoscaler_cases())
        summary = report.autoscaler_summary(autoscaler, ca_seconds)
    report.write(scheduler, ROOT / "out" / "fidelity", seconds, control_plane.started_s, summary)
    return Fidelity(scheduler, autoscaler)
