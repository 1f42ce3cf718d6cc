"""The Job controller's fidelity cases: one batch/v1 Job each, run to its end by kube-controller-manager's
Job controller (``pkg/controller/job``, Kubernetes 1.34.10) on kwok and by gpufleet's
(``gpufleet.workloads.job``) in its simulator; see ``e2e.fidelity.job_run``.

A case runs in a namespace of its own (``jf-<name>``) on a node of its own (``jf-<name>``: 32 CPUs, 256 GiB,
8 GPUs, played by kwok), its pods pinned there (``nodeSelector`` on the hostname), so that the cases can run
side by side. Its pods run ``gpufleet.io/duration`` (2 s unless said) and then exit with
``gpufleet.io/exit-code`` (kwok's ``pod-complete`` and ``pod-fail`` Stages, gpufleet's
``kube.pod_annotations``): every pod of a Job exits the same way, so a case's failures are all alike and its
rules are chosen for that. Its pods' ``restartPolicy`` is ``Never`` unless said; under ``OnFailure`` a
non-zero exit restarts the container in place after the kubelet's back-off (kwok's ``pod-container-exit``
and ``pod-container-restart``, gpufleet's ``sim.pod_lifecycle``).
``terminationGracePeriodSeconds: 0``: kwok removes a deleted pod at once, and gpufleet then does too.

What is compared is the end (``Outcome``): the Job's terminal condition (``Complete`` or ``Failed``) and its
reason, ``status.succeeded`` and ``status.failed``, how many pods the Job created, and an Indexed Job's
``completedIndexes`` and ``failedIndexes``; and, unless the case says why not (``untimed``), the times
(``e2e.fidelity.job_times``): each pod's creation and when the Job's end was decided. Each case says the
outcome upstream's rules give (``expected``), so that a case that no longer shows what it was written for is
seen on either side, and where gpufleet is known to differ, not yet mended (``differs``). The pod failure
backoff (``DefaultJobPodFailureBackOff``: 10 s, doubling) makes every retry wait: the cases keep
``backoffLimit`` small so that each ends within about 40 s.

A case may patch the Job's ``spec.suspend`` as a user does (``Patch``): the real side patches ``at_s`` after
the Job's creation, or later once the Job is where the patch means it (suspended: once one of its pods runs;
resumed: once it is suspended with no pod left); gpufleet at the same time on its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node

KWOK_NODE = {"kwok.x-k8s.io/node": "fake"}
HOSTNAME = "kubernetes.io/hostname"
JOB_NAME = "train"


@dataclass(frozen=True)
class Outcome:
    """How a Job ended: its terminal condition as ``<type>/<reason>`` (empty: none within the time allowed)
    and what its status and pods say."""

    condition: str
    succeeded: int
    failed: int
    pods: int  # the pods the Job created
    completed_indexes: str = ""  # status.completedIndexes (an Indexed Job)
    failed_indexes: str = ""  # status.failedIndexes (an Indexed Job with backoffLimitPerIndex)


@dataclass(frozen=True)
class Patch:
    """``kubectl patch job --type=merge -p '{"spec": {"suspend": ...}}'``; gpufleet patches at ``at_s``."""

    suspend: bool
    at_s: float


@dataclass(frozen=True)
class JobCase:
    name: str
    note: str
    spec: dict[str, Any]  # the Job's spec, less its template
    expected: Outcome
    exit_code: int = 0
    duration: str = "2s"
    patches: tuple[Patch, ...] = field(default=())
    restart_policy: str = "Never"  # the pod template's (a Job's pods: Never or OnFailure)
    #: why its times are not compared (``e2e.fidelity.job_times``); empty: they are
    untimed: str = ""
    #: where gpufleet is known to end the case otherwise than upstream, not yet mended: what differs (its
    #: tests are expected to fail until it is); empty: nowhere
    differs: str = ""

    @property
    def namespace(self) -> str:
        return f"jf-{self.name}"

    @property
    def key(self) -> str:
        """The Job as gpufleet files it (``Job/<namespace>/<name>``)."""
        return f"Job/{self.namespace}/{JOB_NAME}"

    def node(self) -> dict[str, Any]:
        """The case's own node, a kwok fake node, named and labelled (hostname) as its namespace."""
        node = Node(
            self.namespace,
            labels={HOSTNAME: self.namespace},
            capacity={"cpu": 32_000, "memory": 256 * 2**30, "pods": 110, "nvidia.com/gpu": 8},
        )
        return node_manifest(node, KWOK_NODE)

    def job(self) -> dict[str, Any]:
        """The Job: its pods of one GPU on the case's node, running ``duration`` and exiting ``exit_code``."""
        annotations = {"gpufleet.io/duration": self.duration}
        if self.exit_code:
            annotations["gpufleet.io/exit-code"] = str(self.exit_code)
        template = {
            "metadata": {"annotations": annotations},
            "spec": {
                "restartPolicy": self.restart_policy,
                "terminationGracePeriodSeconds": 0,
                "nodeSelector": {HOSTNAME: self.namespace},
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.example.com/train:v1",
                        "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}},
                    }
                ],
            },
        }
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": JOB_NAME, "namespace": self.namespace},
            "spec": {**self.spec, "template": template},
        }


def _exit_codes(action: str, operator: str, *codes: int) -> dict[str, Any]:
    """A ``podFailurePolicy`` rule on the exit codes of the pod's containers."""
    return {"action": action, "onExitCodes": {"operator": operator, "values": list(codes)}}


INDEXED = {"completionMode": "Indexed"}

JOB_CASES: tuple[JobCase, ...] = (
    JobCase(
        "backoff-limit",
        "a pod that keeps failing: retried after 10 s, then more failures than backoffLimit fail the Job",
        {"backoffLimit": 1},
        Outcome("Failed/BackoffLimitExceeded", 0, 2, 2),
        exit_code=1,
    ),
    JobCase(
        "backoff-limit-parallel",
        "two pods failing at once pass backoffLimit 1 together: no retry is created",
        {"backoffLimit": 1, "parallelism": 2, "completions": 4},
        Outcome("Failed/BackoffLimitExceeded", 0, 2, 2),
        exit_code=1,
    ),
    JobCase(
        "fail-job",
        "podFailurePolicy FailJob on the exit code: the first failure fails the Job, reason PodFailurePolicy",
        {"backoffLimit": 6, "podFailurePolicy": {"rules": [_exit_codes("FailJob", "In", 42)]}},
        Outcome("Failed/PodFailurePolicy", 0, 1, 1),
        exit_code=42,
    ),
    JobCase(
        "count-before-fail-job",
        "the first rule that matches decides: Count before a FailJob that matches too counts toward "
        "backoffLimit",
        {
            "backoffLimit": 1,
            "podFailurePolicy": {
                "rules": [
                    _exit_codes("Ignore", "In", 1, 2),
                    _exit_codes("Count", "In", 5),
                    _exit_codes("FailJob", "NotIn", 1),
                ]
            },
        },
        Outcome("Failed/BackoffLimitExceeded", 0, 2, 2),
        exit_code=5,
    ),
    JobCase(
        "ignore",
        "Ignore does not count a failure (backoffLimit 0 is never passed) but its replacement waits the pod "
        "failure backoff (10 s, then 20 s): two pods before activeDeadlineSeconds ends the Job",
        {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 20,
            "podFailurePolicy": {"rules": [_exit_codes("Ignore", "In", 3)]},
        },
        Outcome("Failed/DeadlineExceeded", 0, 0, 2),
        exit_code=3,
    ),
    JobCase(
        "deadline-deletes-running-pod",
        "activeDeadlineSeconds while a pod runs: the Job fails and deletes the pod, counted failed as it is "
        "in that sync (running: no exit code, so the Ignore rule on 137, the exit code of a killed "
        "container, does not match it; trackJobStatusAndRemoveFinalizers)",
        {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 3,
            "podFailurePolicy": {"rules": [_exit_codes("Ignore", "In", 137)]},
        },
        Outcome("Failed/DeadlineExceeded", 0, 1, 1),
        duration="30s",
    ),
    JobCase(
        "ignore-per-index",
        "Ignore under backoffLimitPerIndex 0: no index fails, each index waits its own backoff (10 s, then "
        "20 s, counting its ignored failures) until activeDeadlineSeconds ends the Job",
        {
            **INDEXED,
            "completions": 2,
            "parallelism": 2,
            "backoffLimitPerIndex": 0,
            "activeDeadlineSeconds": 20,
            "podFailurePolicy": {"rules": [_exit_codes("Ignore", "In", 3)]},
        },
        Outcome("Failed/DeadlineExceeded", 0, 0, 4),
        exit_code=3,
    ),
    JobCase(
        "per-index-max-failed",
        "backoffLimitPerIndex 1: each index is retried once after its own backoff, then fails; a second "
        "failed index is more than maxFailedIndexes 1",
        {**INDEXED, "completions": 2, "parallelism": 2, "backoffLimitPerIndex": 1, "maxFailedIndexes": 1},
        Outcome("Failed/MaxFailedIndexesExceeded", 0, 4, 4, failed_indexes="0,1"),
        exit_code=1,
    ),
    JobCase(
        "fail-index",
        "podFailurePolicy FailIndex fails an index at its first failure; all indexes failed: FailedIndexes",
        {
            **INDEXED,
            "completions": 2,
            "parallelism": 2,
            "backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [_exit_codes("FailIndex", "In", 7)]},
        },
        Outcome("Failed/FailedIndexes", 0, 2, 2, failed_indexes="0,1"),
        exit_code=7,
    ),
    JobCase(
        "success-policy",
        "successPolicy succeededIndexes 0-1: met once indexes 0 and 1 succeeded (one pod at a time), index 2 "
        "never created",
        {
            **INDEXED,
            "completions": 3,
            "parallelism": 1,
            "successPolicy": {"rules": [{"succeededIndexes": "0-1"}]},
        },
        Outcome("Complete/SuccessPolicy", 2, 0, 2, completed_indexes="0,1"),
    ),
    JobCase(
        "completions",
        "completions 3, parallelism 2, every pod succeeding",
        {"completions": 3, "parallelism": 2},
        Outcome("Complete/CompletionsReached", 3, 0, 3),
    ),
    JobCase(
        "work-queue",
        "parallelism 2 without completions (a work queue): done once a pod succeeded and none runs",
        {"parallelism": 2},
        Outcome("Complete/CompletionsReached", 2, 0, 2),
    ),
    JobCase(
        "indexed-completions",
        "an Indexed Job of completions 3, parallelism 2, every index succeeding",
        {**INDEXED, "completions": 3, "parallelism": 2},
        Outcome("Complete/CompletionsReached", 3, 0, 3, completed_indexes="0-2"),
    ),
    JobCase(
        "created-suspended",
        "suspend at creation: no pod; resumed, it runs its pods",
        {"completions": 2, "parallelism": 2, "suspend": True},
        Outcome("Complete/CompletionsReached", 2, 0, 2),
        patches=(Patch(False, 5.0),),
    ),
    JobCase(
        "suspended-while-running",
        "suspended while its pod runs: the pod is deleted and not counted failed (deleteJobPods removes its "
        "tracking finalizer first); resumed, a new pod runs",
        {"backoffLimit": 0},
        Outcome("Complete/CompletionsReached", 1, 0, 2),
        duration="6s",
        patches=(Patch(True, 3.0), Patch(False, 5.0)),
    ),
    JobCase(
        "backoff-doubling",
        "the pod failure backoff doubles per failure since the last success (getRemainingTime): retries 10 s "
        "then 20 s after the failure before, the third failure passes backoffLimit 2",
        {"backoffLimit": 2},
        Outcome("Failed/BackoffLimitExceeded", 0, 3, 3),
        exit_code=1,
    ),
    JobCase(
        "parallelism-below-completions",
        "completions 5, parallelism 2: a new pod as each one succeeds, in three waves (manageJob's "
        "wantActive: min(parallelism, completions - succeeded))",
        {"completions": 5, "parallelism": 2},
        Outcome("Complete/CompletionsReached", 5, 0, 5),
    ),
    JobCase(
        "parallelism-above-completions",
        "completions 2, parallelism 5: only the two pods the completions need (wantActive)",
        {"completions": 2, "parallelism": 5},
        Outcome("Complete/CompletionsReached", 2, 0, 2),
    ),
    JobCase(
        "completions-zero",
        "completions 0: complete at once without a pod (syncJob: succeeded >= completions)",
        {"completions": 0},
        Outcome("Complete/CompletionsReached", 0, 0, 0),
    ),
    JobCase(
        "success-policy-count",
        "successPolicy succeededCount 2 of completions 4, one pod at a time: met once two indexes "
        "succeeded, whichever they are; indexes 2 and 3 never created",
        {
            **INDEXED,
            "completions": 4,
            "parallelism": 1,
            "successPolicy": {"rules": [{"succeededCount": 2}]},
        },
        Outcome("Complete/SuccessPolicy", 2, 0, 2, completed_indexes="0,1"),
    ),
    JobCase(
        "fail-index-one-at-a-time",
        "FailIndex under parallelism 1: index 1 is created at once after index 0 failed (the backoff is per "
        "index, getRemainingTimePerIndex), and its failure passes maxFailedIndexes 1; index 2 never created",
        {
            **INDEXED,
            "completions": 3,
            "parallelism": 1,
            "backoffLimitPerIndex": 3,
            "maxFailedIndexes": 1,
            "podFailurePolicy": {"rules": [_exit_codes("FailIndex", "In", 7)]},
        },
        Outcome("Failed/MaxFailedIndexesExceeded", 0, 2, 2, failed_indexes="0,1"),
        exit_code=7,
    ),
    JobCase(
        "backoff-limit-with-per-index",
        "backoffLimit still counts every failure under backoffLimitPerIndex: two failures, one per index, "
        "pass backoffLimit 1 before either index reaches its limit of 1",
        {**INDEXED, "completions": 2, "parallelism": 2, "backoffLimit": 1, "backoffLimitPerIndex": 1},
        Outcome("Failed/BackoffLimitExceeded", 0, 2, 2),
        exit_code=1,
    ),
    JobCase(
        "deadline-after-resume",
        "created suspended, its activeDeadlineSeconds 8 does not run (pastActiveDeadline: no startTime while "
        "suspended); resumed at 8 s, startTime is set then and the deadline fails its running pod at 16 s",
        {"backoffLimit": 0, "activeDeadlineSeconds": 8, "suspend": True},
        Outcome("Failed/DeadlineExceeded", 0, 1, 1),
        duration="30s",
        patches=(Patch(False, 8.0),),
    ),
    JobCase(
        "resume-resets-deadline",
        "activeDeadlineSeconds 20, suspended at 2 s while its pod runs, resumed at 8 s: syncJob resets "
        "startTime on resume, so the Job fails at 28 s, not at 20 s",
        {"backoffLimit": 0, "activeDeadlineSeconds": 20},
        Outcome("Failed/DeadlineExceeded", 0, 1, 2),
        duration="30s",
        patches=(Patch(True, 2.0), Patch(False, 8.0)),
    ),
    JobCase(
        "on-failure-restart-count",
        "restartPolicy OnFailure: the kubelet restarts the failing container in place, at once and then "
        "after 10 s (its back-off), and the Job counts the restarts toward backoffLimit 2 "
        "(pastBackoffLimitOnFailure: restartCount, raised as each new container starts), then deletes its "
        "pod, counted failed",
        {"backoffLimit": 2},
        Outcome("Failed/BackoffLimitExceeded", 0, 1, 1),
        exit_code=1,
        restart_policy="OnFailure",
    ),
    JobCase(
        "deadline-is-no-disruption",
        "a pod the Job deletes at its deadline has no DisruptionTarget condition: an onPodConditions FailJob "
        "rule on it does not match, the reason stays DeadlineExceeded and the pod counts failed",
        {
            "backoffLimit": 0,
            "activeDeadlineSeconds": 3,
            "podFailurePolicy": {
                "rules": [
                    {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
                ]
            },
        },
        Outcome("Failed/DeadlineExceeded", 0, 1, 1),
        duration="30s",
    ),
)
