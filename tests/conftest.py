"""Shared builders for tests: nodes and pods in canonical units, scenarios run to their summary,
and the real control plane (``control_plane``: built once into a cache, started once a session)."""

from __future__ import annotations

import functools
import heapq
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from gpufleet.cluster.state import ClusterState
from gpufleet.control.clock import Priority
from gpufleet.kube import load_scenario
from gpufleet.model.node import Node, Taint, Toleration
from gpufleet.model.pod import Pod
from gpufleet.model.scenario import Scenario
from gpufleet.report import finished_summary
from gpufleet.sim.invariants import InvariantChecks
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.summary import build_summary

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # e2e/ lives beside src/, outside the package
    sys.path.insert(0, str(ROOT))


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C (SIGINT) heard again where the suite started with it ignored: a shell without job control
    starts a background job (``make test &`` in a script) so, every child inherits that, and the tests
    that stop a gpufleet command with Ctrl-C, as a user does, would find it running on. A handler (not
    SIG_IGN) is not inherited across exec, so the children start with SIGINT's default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the real control plane ``controlplane``: ``make test`` runs the others
    over every core first (pytest-xdist), then these in one process, where the control plane (and the
    fidelity run's extra one) starts once. Over the cores a test file stays on one worker
    (``xdist_group``), so its module fixtures are made once; the Ray files share one, as each starts
    Ray's processes and ``--ray auto`` would join another's cluster.

    The tests of the session's fidelity run (``fidelity``) come first and those of the workload controllers'
    sets (``controller_sets``) last, every other test keeping its place between them: the sets run in the
    background from the end of the fidelity run, beside the tests between (``controller_sets``)."""
    for item in items:
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.controlplane)
        elif item.path.name.startswith(("test_ray_", "test_sweep_ray")):
            item.add_marker(pytest.mark.xdist_group("ray"))
        else:
            item.add_marker(pytest.mark.xdist_group(str(item.path)))
    items.sort(key=_session_place)


def _session_place(item: pytest.Item) -> int:
    fixtures = getattr(item, "fixturenames", ())
    return 0 if "fidelity" in fixtures else 2 if "controller_sets" in fixtures else 1


GPU = "nvidia.com/gpu"
T = TypeVar("T")
C = TypeVar("C")
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


def invariants_checked(scenario: Scenario, seed: int | None = None) -> Simulation:
    """The scenario run to its end with every invariant of ``gpufleet.sim.invariants`` checked after every
    event (a violation raises ``InvariantViolation``)."""
    sim = Simulation(scenario, seed=seed)
    sim.invariants = checks = InvariantChecks()
    sim.run()
    assert checks.events == sim.loop.steps
    return sim


def simulated(
    paths: Sequence[Path], seed: int | None = None, duration_s: float | None = None
) -> dict[str, Any]:
    """The scenario run to its end (or ``duration_s``) with ``seed`` (else its own): ``summary.json``'s
    content as ``gpufleet simulate`` writes it (with ``latency`` and ``jobs``, checked against the
    schema)."""
    return finished_summary(build_summary(run_simulation(paths, duration_s, seed)))


def run_simulation(
    paths: Sequence[Path], duration_s: float | None = None, seed: int | None = None
) -> Simulation:
    """The scenario loaded from ``paths`` and simulated to its end (or ``duration_s``) with ``seed``
    (else its own); the ``Simulation`` as it ended."""
    scenario = load_scenario(list(paths))
    if duration_s is not None:
        scenario = replace(scenario, simulation=replace(scenario.simulation, duration_s=duration_s))
    sim = Simulation(scenario, seed=seed)
    sim.run()
    return sim


def pods_by_name(summary: dict[str, Any], namespaced: bool = False) -> dict[str, dict[str, Any]]:
    """The summary's pod records by name (``namespace/name`` with ``namespaced``)."""
    return {(p["name"] if namespaced else p["name"].split("/", 1)[1]): p for p in summary["pods"]}


def write(tmp_path: Path, *texts: str) -> list[Path]:
    """Each YAML text written to its own file in ``tmp_path`` (``0.yaml``, ``1.yaml``, ...), in order."""
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"{i}.yaml")
        paths[-1].write_text(text)
    return paths


def simulated_text(tmp_path: Path, text: str) -> dict[str, Any]:
    """``simulated`` of one scenario text, written to ``tmp_path/scenario.yaml``."""
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return simulated([path])


def simulated_controller(
    paths: Sequence[Path], key: str, kind: type[C], duration_s: float | None = None
) -> tuple[dict[str, Any], C, dict[str, Any]]:
    """The scenario simulated (``run_simulation``): its pods by name, the controller filed under ``key``
    (e.g. ``PyTorchJob/ml/mnist``) as it ended, checked to be a ``kind``, and the summary."""
    sim = run_simulation(paths, duration_s)
    controller = sim.controllers[key]
    assert isinstance(controller, kind)
    summary = build_summary(sim)
    return pods_by_name(summary), controller, summary


def only_controller(paths: Sequence[Path], kind: type[C]) -> C:
    """The controller (checked to be a ``kind``) of the one workload of a kind other than gpufleet's
    own that the scenario at ``paths`` holds."""
    from gpufleet.workloads import controller_for

    (workload,) = load_scenario(list(paths)).other_workloads
    made = controller_for(workload)
    assert isinstance(made, kind)
    return made


A10_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: gpu-{i}
  labels: {{nvidia.com/gpu.product: NVIDIA-A10, {labels}}}
status:
  capacity: {{cpu: "96", memory: 768Gi, pods: "110", nvidia.com/gpu: "8"}}
"""
A10_LABELS = 'nvidia.com/gpu.memory: "24576", nvidia.com/gpu.count: "8"'


def a10_nodes(count: int = 1, labels: str = A10_LABELS, per_rack: int = 1) -> str:
    """``count`` Nodes ``gpu-<i>`` of 8 A10 GPUs, 96 CPUs and 768 GiB, as YAML documents: labelled
    ``nvidia.com/gpu.product: NVIDIA-A10`` and ``labels`` (flow-style pairs; ``{rack}`` stands for
    ``i // per_rack``)."""
    return "---".join(A10_NODE.format(i=i, labels=labels.format(rack=i // per_rack)) for i in range(count))


# One ClusterQueue of 96 CPUs and 17 GPUs preempting within itself by priority (LocalQueue ``q`` in ``ml``),
# and an urgent 8-GPU Job of 10 min queued there at 10 min: it preempts a lower-priority workload.
URGENT_JOB_AT_10M_IN_KUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: nvidia.com/gpu, nominalQuota: 17}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
---
apiVersion: batch/v1
kind: Job
metadata:
  name: urgent
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: urgent}
spec:
  template:
    metadata:
      annotations: {gpufleet.io/submit-at: 10m, gpufleet.io/duration: 10m}
    spec:
      restartPolicy: Never
      containers:
      - name: u
        image: u
        resources:
          limits: {cpu: 1, nvidia.com/gpu: 8}
"""


# A Node n0 of 64 CPUs, 256 GiB and 8 GPUs, unlabelled.
NODE_N0 = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
"""


def coscheduling(scheduler: str = "default-scheduler") -> str:
    """A KubeSchedulerConfiguration whose profile ``scheduler`` runs scheduler-plugins' Coscheduling
    (every extension point) and sorts its queue by it: a PodGroup's members wait at Permit for the gang."""
    plugins = "{multiPoint: {enabled: [{name: Coscheduling}]}, queueSort: {enabled: [{name: Coscheduling}], "
    plugins += 'disabled: [{name: "*"}]}}'
    return (
        "\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        f"- {{schedulerName: {scheduler}, plugins: {plugins}}}\n"
    )


# A pod of 8 GPUs, ``ml/urgent``, of PriorityClass ``urgent`` (1000000): submitted at 5m, runs 10m.
URGENT_POD = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000000
---
apiVersion: v1
kind: Pod
metadata:
  name: urgent
  namespace: ml
  annotations: {gpufleet.io/submit-at: 5m, gpufleet.io/duration: 10m}
spec:
  priorityClassName: urgent
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 8}
"""

# A Simulation of 10 minutes.
SIMULATION_10M = (
    "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {duration: 10m}\n"
)


def resource_flavor(name: str, version: str = "v1beta2", spec: str = "") -> str:
    """A Kueue ResourceFlavor document; ``spec``: its spec's lines (indented two spaces), if any."""
    body = f"\nspec:\n{spec}" if spec else ""
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: ResourceFlavor
metadata: {{name: {name}}}{body}
"""


def gpu_resource_groups(flavor: str, gpus: int) -> str:
    """The ``resourceGroups`` lines of a Kueue ClusterQueue's or Cohort's spec (indented two spaces):
    a nominal quota of ``gpus`` GPUs of ``flavor``."""
    return f"""  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: {flavor}
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: {gpus}}}
"""


def cluster_queue(name: str, flavor: str, gpus: int, version: str = "v1beta2", spec: str = "") -> str:
    """A Kueue ClusterQueue document for all namespaces with a quota of ``gpus`` GPUs of ``flavor``;
    ``spec``: more lines of its spec (indented two spaces)."""
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
{spec}""" + gpu_resource_groups(flavor, gpus)


def local_queue(name: str, namespace: str, cluster_queue: str, version: str = "v1beta2") -> str:
    """A Kueue LocalQueue document ``namespace/name`` feeding ``cluster_queue``."""
    return f"""
apiVersion: kueue.x-k8s.io/{version}
kind: LocalQueue
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{clusterQueue: {cluster_queue}}}
"""


def queued_job(
    name: str,
    at: str,
    gpus: int = 8,
    labels: str = "",
    annotations: str = "gpufleet.io/duration: 1h",
    spec: str = "",
) -> str:
    """A batch Job ``default/name`` for the LocalQueue ``queue`` (``labels``: more flow-style pairs, each
    after a comma) submitted at ``at``, its pod of ``gpus`` GPUs annotated ``annotations``; ``spec``:
    more lines of its spec (indented two spaces). A YAML document after a ``---``."""
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: queue{labels}}}
  annotations: {{gpufleet.io/submit-at: {at}}}
spec:
{spec}  template:
    metadata:
      annotations: {{{annotations}}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: trainer
        resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""


def kueue_queues(
    flavor: str,
    gpus: int,
    queue: str,
    namespace: str,
    version: str = "v1beta2",
    flavor_spec: str = "",
    queue_spec: str = "",
) -> str:
    """A ResourceFlavor ``flavor``, the ClusterQueue ``cq`` with ``gpus`` GPUs of it (``queue_spec``: more
    lines of its spec) and the LocalQueue ``namespace/queue`` feeding it, as YAML documents."""
    return "---".join(
        [
            resource_flavor(flavor, version, flavor_spec),
            cluster_queue("cq", flavor, gpus, version, queue_spec),
            local_queue(queue, namespace, "cq", version),
        ]
    )


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


#: the workload controllers' sets started in the background by the fidelity run (``controller_sets``)
_CONTROLLER_SETS = pytest.StashKey[Any]()


@pytest.fixture(scope="session")
def fidelity(control_plane: Any, request: pytest.FixtureRequest) -> Any:
    """The fidelity run shared by the fidelity tests: every kube-scheduler case (on the session's control
    plane and as many more as ``e2e.fidelity.run.CONTROL_PLANES`` asks, side by side), then (where a
    cluster-autoscaler binary was given) every cluster-autoscaler case, on the session's control plane;
    the report goes to ``out/fidelity/`` (an ``e2e.fidelity.run.Fidelity``). The session's kube-scheduler
    gets upstream's default configuration back after it. Where the session has tests of the workload
    controllers' sets, they start in the background as it ends (``controller_sets``)."""
    from e2e.components import cluster_autoscaler
    from e2e.fidelity import report
    from e2e.fidelity.autoscaler_cases import autoscaler_cases
    from e2e.fidelity.autoscaler_run import run_autoscaler_cases
    from e2e.fidelity.controller_sets import InBackground
    from e2e.fidelity.run import Fidelity, run_cases, side_by_side
    from e2e.fidelity.sources import all_cases

    with side_by_side(control_plane) as clusters:
        scheduler, seconds = run_cases(clusters, all_cases())
    side_planes, first_config = tuple(c.cp for c in clusters[1:]), control_plane.scheduler_config
    binary, autoscaler, summary = cluster_autoscaler(), None, None
    if binary is not None:
        autoscaler, ca_seconds = run_autoscaler_cases(control_plane, binary, autoscaler_cases())
        summary = report.autoscaler_summary(autoscaler, ca_seconds)
    if control_plane.scheduler_config is not None:
        control_plane.restart_scheduler(None)
    if any("controller_sets" in getattr(item, "fixturenames", ()) for item in request.session.items):
        logs = ROOT / "out" / "e2e-logs" / "controller-sets"
        request.session.stash[_CONTROLLER_SETS] = InBackground(control_plane.bins, logs)
    out = ROOT / "out" / "fidelity"
    report.write(scheduler, out, seconds, control_plane.started_s, summary, len(clusters))
    return Fidelity(scheduler, autoscaler, side_planes, first_config)


@pytest.fixture(scope="session")
def controller_sets(control_plane: Any, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The workload controllers' fidelity sets (Job, ReplicaSet, StatefulSet, node lifecycle, Deployment
    rollouts: their ``run_*_cases`` results by set, ``e2e.fidelity.controller_sets``): those the fidelity run
    started in the background as it ended, on a control plane of their own (its logs in
    ``out/e2e-logs/controller-sets``), beside the tests that came between; in a session without the fidelity
    run, on the session's control plane now."""
    from e2e.fidelity.controller_sets import run_controller_sets

    started = request.session.stash.get(_CONTROLLER_SETS, None)
    return started.result() if started is not None else run_controller_sets(control_plane)


def page_figures(page: str) -> dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]:
    """The Plotly charts of an HTML page by div id: each one's traces and layout, as drawn."""
    decoder = json.JSONDecoder()
    figures = {}
    for match in re.finditer(r'Plotly\.newPlot\(\s*"([^"]+)",\s*', page):
        data, end = decoder.raw_decode(page, match.end())
        layout, _ = decoder.raw_decode(page, page.index("{", end))
        figures[match.group(1)] = (data, layout)
    return figures


def scale_up_reply(state: Any, pods: Sequence[Pod], options: Sequence[Any], **fields: Any) -> Any:
    """cluster-autoscaler's ``scale_up`` for ``pods`` over the pools ``options``: at 0 s, with the default
    scheduler profile, the least-waste expander, no pool backed off, nothing excluded (``fields``: other
    ``ScaleUpRequest`` fields, or these replaced)."""
    import numpy as np

    from gpufleet.autoscaling.cluster_autoscaler import ScaleUpRequest, scale_up

    request: dict[str, Any] = dict(
        now=0.0, state=state, profile=default_profile(), pending=pods, options=options,
        backed_off=frozenset(), expander="least-waste", rng=np.random.default_rng(0), exclude=frozenset(),
        total_reached=False,
    )  # fmt: skip
    request.update(fields)
    return scale_up(ScaleUpRequest(**request))


def scale_down_request(state: Any, candidates: Sequence[Any], **fields: Any) -> Any:
    """cluster-autoscaler's scale-down asked of ``candidates`` on ``state`` with upstream's defaults
    (``scaleDownUnneededTime`` and ``scaleDownDelayAfterAdd`` 10 minutes, no scale-up for long, nothing
    unneeded, deleting or budgeted) and the default scheduler profile (``fields``: others, or these
    replaced)."""
    from gpufleet.autoscaling.cluster_autoscaler import ScaleDownRequest
    from gpufleet.autoscaling.scale_down import UtilizationRule

    request: dict[str, Any] = dict(
        now=0.0, state=state, profile=default_profile(), candidates=candidates, utilization=UtilizationRule(),
        unneeded_time_s=600.0, delay_after_add_s=600.0, last_scale_up_s=-1e9, unneeded_since={},
        deleting=frozenset(), budgets=[], allowed={}, daemon_pods=frozenset(), computing=None,
    )  # fmt: skip
    request.update(fields)
    return ScaleDownRequest(**request)


def scale_down_with(state: Any, candidates: Sequence[Any], **fields: Any) -> Any:
    """``scale_down`` of ``scale_down_request``."""
    from gpufleet.autoscaling.cluster_autoscaler import scale_down

    return scale_down(scale_down_request(state, candidates, **fields))


@functools.cache
def default_profile() -> Any:
    """The default scheduler profile (built once)."""
    from gpufleet.model.scheduler_config import ProfileConfig
    from gpufleet.scheduling.profile import build_profile

    return build_profile(ProfileConfig())


class ManualClock:
    """A clock the test advances by hand (``run_until``), keeping a loop's actions in time and priority
    order: what the controllers' ``Clock`` port asks of the simulator's event loop."""

    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, int, Callable[[], None]]] = []
        self._seq = 0

    def at(
        self, time: float, priority: Priority, action: Callable[[], None], background: bool = False
    ) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (max(time, self.now), int(priority), self._seq, action))

    def run_until(self, t: float) -> None:
        while self._queue and self._queue[0][0] <= t:
            time, _, _, action = heapq.heappop(self._queue)
            self.now = time
            action()
        self.now = t


@dataclass
class QueuedPodStatus:
    """A plain pod as ``KueueQueues`` reads it through ``PlainPodsQueuePort``."""

    pod: Pod
    phase: str = "Pending"
    ready: bool = False
    message: str | None = None
    bound_s: float | None = None
    deleted_s: float | None = None


class PlainPodsQueuePort:
    """The ``QueuePort`` Kueue's controller (``control.kueue_queues``) reads and acts through, kept by hand
    over plain pods: what it released and deleted is recorded; a pod it deletes is gone at once, or with
    ``grace`` stays until the test ends it (its grace period)."""

    def __init__(self, grace: bool = False) -> None:
        self.state = ClusterState([])
        self.pods: dict[str, QueuedPodStatus] = {}
        self.released: list[str] = []
        self.deleted: list[str] = []
        self.grace = grace

    def queued_workload(self, pod: Pod) -> None:
        return None

    def pod_group_of(self, pod: Pod) -> None:
        return None

    def queue_created(self, pod: Pod) -> None:
        return None

    def set_message(self, key: str, message: str) -> None:
        self.pods[key].message = message

    def hold(self, key: str, message: str) -> None:
        self.pods[key].message = message

    def release(self, key: str, node_selector: dict[str, str], tolerations: tuple[Toleration, ...]) -> None:
        self.released.append(key)
        self.pods[key].message = None

    def delete_pod(self, key: str, reason: str) -> None:
        self.deleted.append(key)
        if not self.grace:
            self.pods[key].deleted_s = 0.0

    def workload_resumed(self, key: str) -> None:
        return None

    def workload_suspended(self, key: str) -> None:
        return None
