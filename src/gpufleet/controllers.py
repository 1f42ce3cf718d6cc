"""Workload controllers: Job, Deployment and DaemonSet create and replace their pods.

Names are made deterministic: ``<job>-<index>`` (retries add ``-r<n>``), ``<deployment>-<n>``
(``n`` from 0, never reused), ``<daemonset>-<node>``. A Job keeps ``parallelism`` pods
active until ``completions`` have succeeded (work-queue mode when completions is unset:
done once any pod succeeds). A DaemonSet pod is pinned to its node with required node
affinity on ``metadata.name`` and gets the tolerations the DaemonSet controller adds
(``pkg/controller/daemon/util``); it runs on nodes whose labels and taints admit it.
"""

from __future__ import annotations

from dataclasses import replace

from gpufleet.model.node import NO_EXECUTE, NO_SCHEDULE, Node, Toleration, tolerated
from gpufleet.model.pod import OwnerRef, Pod, Requirement, SelectorTerm
from gpufleet.model.workloads import DaemonSet, Deployment, Job

DAEMONSET_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", effect=NO_EXECUTE),
    Toleration("node.kubernetes.io/unreachable", "Exists", effect=NO_EXECUTE),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", effect=NO_SCHEDULE),
    Toleration("node.kubernetes.io/unschedulable", "Exists", effect=NO_SCHEDULE),
)


class JobController:
    """``pkg/controller/job``: keep ``parallelism`` pods active until ``completions`` succeed;
    a failed pod is replaced under the same index (``-r<n>``) until ``backoffLimit`` failures."""

    def __init__(self, job: Job):
        self.job = job
        self.next_index = 0
        self.active: dict[str, int] = {}  # pod key -> completion index
        self.retries: list[int] = []  # indices whose pod failed, to create again
        self.attempts: dict[int, int] = {}
        self.succeeded = 0
        self.failed = 0
        self.done = False

    def _stamp(self, index: int) -> Pod:
        attempt = self.attempts.get(index, 0)
        suffix = f"-r{attempt}" if attempt else ""
        job = self.job
        pod = job.template.stamped(f"{job.name}-{index}{suffix}", OwnerRef("Job", job.name))
        pod = replace(pod, namespace=job.namespace)
        self.active[pod.key] = index
        return pod

    def wanted(self) -> list[Pod]:
        job = self.job
        if self.done:
            return []
        out = []
        while self.retries and len(self.active) < job.parallelism:
            out.append(self._stamp(self.retries.pop(0)))
        if job.completions is None:
            remaining = job.parallelism - self.next_index if self.succeeded == 0 else 0
        else:
            remaining = job.completions - self.succeeded - len(self.active) - len(self.retries)
        while len(self.active) < job.parallelism and remaining > 0:
            out.append(self._stamp(self.next_index))
            self.next_index += 1
            remaining -= 1
        return out

    def finished(self, pod: Pod, succeeded: bool) -> None:
        index = self.active.pop(pod.key, None)
        if index is None:
            return
        if succeeded:
            self.succeeded += 1
            complete = self.job.completions is None or self.succeeded >= self.job.completions
            self.done = complete and (self.job.completions is not None or not self.active)
            return
        self.failed += 1
        if self.failed > self.job.backoff_limit:
            self.done = True  # BackoffLimitExceeded
            return
        self._retry(index)

    def suspend(self, pod: Pod) -> None:
        """``spec.suspend`` (Kueue evicted the Job): the pod is deleted without counting as failed,
        and its index is created again (``-r<n>``) for when the Job resumes."""
        index = self.active.pop(pod.key, None)
        if index is not None:
            self._retry(index)

    def _retry(self, index: int) -> None:
        self.attempts[index] = self.attempts.get(index, 0) + 1
        self.retries.append(index)


class DeploymentController:
    """A ReplicaSet's job: keep ``replicas`` pods, replacing any that end."""

    def __init__(self, deployment: Deployment):
        self.deployment = deployment
        self.replicas = deployment.replicas  # spec.replicas, which autoscalers change
        self.next_index = 0
        self.active: set[str] = set()

    def wanted(self) -> list[Pod]:
        d = self.deployment
        out = []
        while len(self.active) < self.replicas:
            pod = replace(
                d.template.stamped(f"{d.name}-{self.next_index}", OwnerRef("Deployment", d.name)),
                namespace=d.namespace,
            )
            self.next_index += 1
            self.active.add(pod.key)
            out.append(pod)
        return out

    def finished(self, pod: Pod, succeeded: bool) -> None:
        self.active.discard(pod.key)


def daemon_should_run(template: Pod, node: Node) -> bool:
    """``NodeShouldRunDaemonPod``: node selector/affinity match and no untolerated taint."""
    tolerations = template.tolerations + DAEMONSET_TOLERATIONS
    if not template.matches_node_selector(node):
        return False
    return all(t.effect not in (NO_SCHEDULE, NO_EXECUTE) or tolerated(t, tolerations) for t in node.taints)


class DaemonSetController:
    def __init__(self, daemonset: DaemonSet):
        self.daemonset = daemonset
        self.covered: set[str] = set()

    def pod_for(self, node: Node) -> Pod | None:
        ds = self.daemonset
        if node.name in self.covered or not daemon_should_run(ds.template, node):
            return None
        self.covered.add(node.name)
        pin = SelectorTerm(fields=(Requirement("metadata.name", "In", (node.name,)),))
        pod = ds.template.stamped(f"{ds.name}-{node.name}", OwnerRef("DaemonSet", ds.name))
        return replace(
            pod,
            namespace=ds.namespace,
            required_terms=(pin,),
            tolerations=ds.template.tolerations + DAEMONSET_TOLERATIONS,
        )
