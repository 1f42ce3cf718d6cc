"""The simulator's limits on what one scenario asks for, checked as it is loaded: a scenario whose
objects expand to more nodes, pods or timeline samples than a run can hold is refused in one line
naming its document and field, rather than run for days or until memory runs out.

Not an upstream rule. Kubernetes' own scalability envelope (``kubernetes.io/docs/setup/best-practices/
cluster-large``: at most 5,000 nodes, 150,000 pods, 110 pods per node) is far below these limits; the
limits are there so that a typo (``replicas: 1000000000``) or a hostile file cannot ask for more than
the machine running gpufleet has. The loader charges each object as it reads it (``ScaleBudget``):

- nodes present at time 0 (Node documents, and each NodePool's ``replicas`` and ``warm``, ``min`` when
  larger): at most ``MAX_NODES`` in all. Nodes an autoscaler adds later are made for pods, which are
  bounded in turn.
- pods one workload keeps at once (a Deployment's, ReplicaSet's or StatefulSet's ``replicas``, a Job's
  ``parallelism`` up to its ``completions``, a LeaderWorkerSet's ``replicas`` x ``size``, a JobSet's
  replicated Jobs, a training job's replicas, a RayCluster's head and workers), and the replicas an
  HPA or KEDA may scale one to (``maxReplicas``, ``maxReplicaCount``): at most
  ``MAX_WORKLOAD_PODS`` each.
- pods one Job runs over its life (``completions``; a JobSet's replicas x completions): at most
  ``MAX_WORKLOAD_RUNS``.
- pods asked for at once by every object together (bare Pods and workloads): at most ``MAX_PODS``.
- work items one QueueFeed pushes over the run (its ``items``' counts, and its ``rate`` over the
  run's length): at most ``MAX_WORK_ITEMS``.
- timeline samples (the run's length, ``spec.duration`` or the 30 days a run lasts at most without
  one, over ``spec.sampleInterval``): at most ``MAX_SAMPLES``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.load import QueueFeed
from gpufleet.model.simulation import MAX_DURATION_S, NodePool, SimulationSettings
from gpufleet.model.workloads import DaemonSet, Deployment, Job, Workload
from gpufleet.workloads.jobset import JobSet
from gpufleet.workloads.leaderworkerset import LeaderWorkerSet
from gpufleet.workloads.mpijob import MPIJob
from gpufleet.workloads.pytorchjob import PyTorchJob
from gpufleet.workloads.raycluster import RayCluster, RayClusterSpec
from gpufleet.workloads.rayjob import RayJob
from gpufleet.workloads.replicaset import ReplicaSet
from gpufleet.workloads.statefulset import StatefulSet
from gpufleet.workloads.trainjob import TrainJob
from gpufleet.workloads.volcano_job import VolcanoJob

MAX_NODES = 100_000
MAX_WORKLOAD_PODS = 100_000
MAX_WORKLOAD_RUNS = 1_000_000
MAX_PODS = 1_000_000
MAX_SAMPLES = 3_000_000  # a month sampled every second
MAX_WORK_ITEMS = 1_000_000


def beyond(limit: int, what: str) -> str:
    """The end of a refusal: ``exceeds the simulator's limit of 100,000 pods per workload``."""
    return f"exceeds the simulator's limit of {limit:,} {what} (docs/fuzzing.md, Limits)"


def _job_pods(parallelism: int, completions: int | None) -> int:
    return parallelism if completions is None else min(parallelism, completions)


def _ray_pods(spec: RayClusterSpec | None) -> int:
    if spec is None:
        return 0
    return 1 + sum(group.replicas * group.num_of_hosts for group in spec.groups)


def pods_at_once(workload: Workload) -> tuple[int, str]:
    """The pods ``workload`` keeps at once when all are wanted, and the field of ``spec`` that says so
    (a DaemonSet's: one per node, within the node limit; a kind not listed here: 0)."""
    match workload:
        case Job():
            return _job_pods(workload.parallelism, workload.completions), "parallelism"
        case Deployment() | ReplicaSet() | StatefulSet():
            return workload.replicas, "replicas"
        case LeaderWorkerSet():
            return workload.replicas * workload.size, "replicas"
        case JobSet():
            jobs = workload.replicated_jobs
            return sum(j.replicas * _job_pods(j.parallelism, j.completions) for j in jobs), "replicatedJobs"
        case PyTorchJob():
            return workload.total_replicas, "pytorchReplicaSpecs"
        case MPIJob():
            return 1 + workload.workers, "mpiReplicaSpecs"
        case RayCluster():
            return _ray_pods(workload.spec), "workerGroupSpecs"
        case RayJob():
            return 1 + _ray_pods(workload.cluster), "rayClusterSpec"
        case TrainJob():
            return sum(j.replicas * j.count for j in workload.jobs), "trainer.numNodes"
        case VolcanoJob():
            return sum(task.replicas for task in workload.tasks), "tasks"
        case DaemonSet():
            return 0, ""
    return 0, ""


def pods_over_life(workload: Workload) -> tuple[int, str]:
    """The pods a Job (or a JobSet's Jobs) runs to completion over its life, and the field that says so."""
    match workload:
        case Job() if workload.completions is not None:
            return workload.completions, "completions"
        case JobSet():
            jobs = workload.replicated_jobs
            return sum(j.replicas * (j.completions or j.parallelism) for j in jobs), "replicatedJobs"
    return 0, ""


@dataclass
class ScaleBudget:
    """What the scenario's objects asked for so far; each charge past a limit is an error of the
    document that went over it."""

    nodes: int = 0
    pods: int = 0

    def node(self, report: Reporter, path: str = "", count: int = 1) -> None:
        self.nodes = _charge(report, path, count, self.nodes, MAX_NODES, "nodes at the start", "nodes")

    def node_pool(self, report: Reporter, pool: NodePool) -> None:
        self.node(report, "spec.replicas", max(pool.replicas, pool.min) + pool.warm)

    def pod(self, report: Reporter, path: str = "", count: int = 1) -> None:
        self.pods = _charge(report, path, count, self.pods, MAX_PODS, "pods at once", "pods")

    def workload(self, report: Reporter, workload: Workload) -> None:
        count, field = pods_at_once(workload)
        runs, runs_field = pods_over_life(workload)
        if count > MAX_WORKLOAD_PODS:
            detail = f"{count:,} pods at once {beyond(MAX_WORKLOAD_PODS, 'pods per workload')}"
            report.error(f"spec.{field}", detail)
        elif runs > MAX_WORKLOAD_RUNS:
            detail = f"{runs:,} pods over its life {beyond(MAX_WORKLOAD_RUNS, 'pods run by one workload')}"
            report.error(f"spec.{runs_field}", detail)
        else:
            self.pod(report, "spec", count)

    @staticmethod
    def replicas(report: Reporter, path: str, count: int | None) -> None:
        """The most replicas a scaler may set (HPA ``maxReplicas``, KEDA ``maxReplicaCount``)."""
        if count is not None and count > MAX_WORKLOAD_PODS:
            report.error(path, invalid(count, beyond(MAX_WORKLOAD_PODS, "pods per workload")))

    @staticmethod
    def samples(report: Reporter, settings: SimulationSettings) -> None:
        """The timeline's samples: the run's length (at most 30 days without ``spec.duration``) over
        ``spec.sampleInterval``."""
        length = _length(settings)
        interval = settings.sample_interval_s
        if interval > 0 and length / interval > MAX_SAMPLES:
            path = "spec.sampleInterval" if settings.duration_s is None else "spec.duration"
            detail = f"{length / interval:,.0f} timeline samples {beyond(MAX_SAMPLES, 'samples')}"
            report.error(path, f"{detail}: sample less often or run shorter")

    @staticmethod
    def feed(report: Reporter, feed: QueueFeed, settings: SimulationSettings) -> None:
        """The items ``feed`` pushes over the run (its rate's expected arrivals, up to its ``until``)."""
        length = _length(settings)
        items: float = sum(batch.count for batch in feed.items)
        if feed.rate is not None:
            until = length if feed.rate.until_s is None else min(feed.rate.until_s, length)
            items += feed.rate.per_hour * max(0.0, until - feed.rate.from_s) / 3600
        if items > MAX_WORK_ITEMS:
            detail = f"{items:,.0f} work items over the run {beyond(MAX_WORK_ITEMS, 'items per QueueFeed')}"
            report.error("spec", detail)


def _length(settings: SimulationSettings) -> float:
    """How long the run may last: ``spec.duration``, else 30 days."""
    return MAX_DURATION_S if settings.duration_s is None else settings.duration_s


def _charge(report: Reporter, path: str, count: int, total: int, limit: int, what: str, unit: str) -> int:
    """``total`` plus ``count``; an error at ``path`` when that passes ``limit`` (once: the object that
    crossed it)."""
    total += count
    if total > limit >= total - count:
        report.error(path, f"{count:,} {what} bring the scenario to {total:,}, which {beyond(limit, unit)}")
    return total
