"""JobSet (``jobset.x-k8s.io/v1alpha2``, kubernetes-sigs/jobset): replicated Jobs run as one workload,
driven as its controller (``pkg/controllers/jobset_controller.go``, ``{success,failure,startup}_policy.go``,
``depends_on.go``) and webhooks (``pkg/webhooks/{jobset,pod}_webhook.go``) drive it.

Read as the JobSet webhook defaults and validates it (``jobSetWebhook.Default``, ``ValidateCreate``):

- ``replicatedJobs[]``: ``name`` (required, unique; the child Job names ``<jobset>-<name>-<jobIdx>``
  must be DNS-1035 labels of at most 63 characters, ``placement.GenJobName``), ``replicas`` (default
  1), ``groupName`` (default ``default``), ``template``: a batch Job template whose ``parallelism``,
  ``completions`` and ``backoffLimit`` default as a Job's (``pkg/apis/batch/v1/defaults.go``);
  ``completionMode`` defaults to ``Indexed`` (then ``completions`` is required, as the API server
  requires it of the child Job) and the pod ``restartPolicy`` to ``OnFailure``.
- ``successPolicy`` defaults to ``operator: All`` of every replicated Job; ``targetReplicatedJobs``
  must name replicated Jobs. ``startupPolicy.startupPolicyOrder`` is ``AnyOrder`` (default) or
  ``InOrder``; ``dependsOn`` (one previous replicated Job, ``Ready`` or ``Complete``) excludes
  ``InOrder``. ``failurePolicy``: ``maxRestarts``, ``restartStrategy`` (``Recreate``,
  ``BlockingRecreate``; ``InPlaceRestart`` needs a feature gate that is off by default), ``rules``
  (names default to ``failurePolicyRule<N>`` and must be unique; ``RestartJob`` and
  ``RestartJobAndIgnoreMaxRestarts`` need the ``RestartJob`` gate, off by default: an error, as the
  webhook's).
- ``network`` (a headless Service for pod hostnames) changes nothing scheduled: read silently.
  ``coordinator`` (checked as ``validateCoordinator``) labels and annotates every Job's pods with
  ``jobset.sigs.k8s.io/coordinator: <jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``.
  ``managedBy`` naming another controller than ``jobset.sigs.k8s.io/jobset-controller``
  (MultiKueue's), ``ttlSecondsAfterFinished``, ``volumeClaimPolicies`` and any other field are not
  modelled: a warning each; so are the Job template's fields not read here (``successPolicy``, ...). Its
  ``activeDeadlineSeconds`` (not negative, ``validateJobSpec``) is each child Job's own, as is its
  ``podReplacementPolicy`` (checked as a Job's, ``validatePodReplacementPolicy``). Its
  ``podFailurePolicy`` is read and checked as a Job's
  (``kube.pod_failure_policy``), against the pod ``restartPolicy`` the webhook defaults: unset, it is
  ``OnFailure``, which the API server refuses for the child Job; so are ``backoffLimitPerIndex`` and
  ``maxFailedIndexes`` (``backoffLimit`` then defaulting to MaxInt32, ``SetDefaults_Job``).

Child Jobs and pods (``constructJob``, ``labelAndAnnotateObject``): each replicated Job has
``replicas`` child Jobs ``<jobset>-<rjob>-<jobIdx>``, each driven by ``job.JobController``
(``parallelism`` pods until ``completions`` succeed, failed pods replaced after the Job's pod failure
backoff until ``backoffLimit``; under ``restartPolicy: OnFailure``, the webhook's default, the kubelet's
container restarts count toward it, ``pastBackoffLimitOnFailure``). A pod being deleted (a preemption, an
eviction, a drain, Kueue's eviction) is heard as its deletion begins, as for any Job (``pod_terminating``):
under ``TerminatingOrFailed``, the default without a ``podFailurePolicy``, it counts failed then and is
replaced after the pod failure backoff while it terminates; under ``Failed`` it holds its replacement back
until it ended Failed. An Indexed Job's pod is
``<job>-<index>-<suffix>``, a NonIndexed one's ``<job>-<suffix>``: upstream the suffix is the API server's
random ``generateName`` one; here it is 5 characters of the same alphabet drawn from a SHA-1 of the pod's
namespace, Job, index, restart attempt and re-creation count, so names are stable and a restarted JobSet's
pods get new ones. Pods carry the labels and annotations upstream sets (``jobset.sigs.k8s.io/{jobset-name,
replicatedjob-name, replicatedjob-replicas, global-replicas, job-index, job-global-index, job-key,
group-name, group-replicas, job-group-index, restart-attempt}``, and ``coordinator``; ``job-key`` is
the SHA-1 of ``<ns>/<job>``), the Job controller's ``batch.kubernetes.io/job-name`` and ``job-name``,
and for Indexed Jobs ``batch.kubernetes.io/job-completion-index``; they are owned by their child Job.
``jobset-uid`` is not set (the simulation has no UIDs).

How it ends (``reconcile``): a child Job fails as the Job controller fails it (``job.JobController``,
told how each pod failed, ``failed_with``): when its failures pass ``backoffLimit``
(``BackoffLimitExceeded``, "Job has reached the specified backoff limit") or when a ``FailJob`` rule of
its ``podFailurePolicy`` matches a failed pod (``PodFailurePolicy``, "Container <c> for pod <ns>/<pod>
failed with exit code <n> matching FailJob rule at index <i>", or "Pod <ns>/<pod> has condition
DisruptionTarget matching FailJob rule at index <i>"); a pod an ``Ignore`` rule matches does not count;
with ``backoffLimitPerIndex`` its failed indexes fail it (``FailedIndexes``, ``MaxFailedIndexesExceeded``);
past its ``activeDeadlineSeconds`` from its own start (``pastActiveDeadline``: its creation, or the JobSet's
resume under Kueue, ``resumeJob`` clearing ``status.startTime``; a suspended Job's deadline does not run) it
fails ``DeadlineExceeded`` and deletes its pods (``kind.HasDeadline``: the driver arms one deadline per child
Job and restart attempt); a deadline of 0 fails it before it creates any (``syncJob`` checks
``pastActiveDeadline`` before ``manageJob``), under Kueue as Kueue admits the JobSet, its gated pods dropped
uncounted (``JobController.run_with_counts``).
However it failed, the Job first has ``FailureTarget`` and deletes its active pods (``deleteActivePods``);
the JobSet reads its ``Failed`` condition (``getChildJobs``, ``JobFinished``), which the Job controller sets
only once none of its pods is terminating (``delayTerminalCondition``): the failure policy judges the Job
then, after the pods' grace period, the Jobs in the order they got the condition
(``ChildJob.finished_type``). Likewise a Job that succeeded (``SuccessCriteriaMet``, then ``Complete``)
counts for the success policy once it has ``Complete``.
Without a ``failurePolicy`` a failed Job fails the JobSet (``FailedJobs``). With one, the first rule
that applies to a failed Job (``findFirstFailedPolicyRuleAndJob``, ``ruleIsApplicable``: the Job's
``Failed`` reason among ``onJobFailureReasons``, its message matching one of
``onJobFailureMessagePatterns``, its replicated Job among ``targetReplicatedJobs``) acts, for the
earliest failed Job it applies to, else ``RestartJobSet``: ``FailJobSet``
fails it; ``RestartJobSet`` restarts it while ``restartsCountTowardsMax < maxRestarts`` (else
``ReachedMaxRestarts``); ``RestartJobSetAndIgnoreMaxRestarts`` restarts it without counting. A
restart deletes every child Job (foreground: their pods are deleted, bound ones get their grace
period) and creates each again (``restart-attempt`` one higher) once its old pods are gone
(``Recreate``) or once all old pods are gone (``BlockingRecreate``). The success policy completes the
JobSet when ``All`` (or ``Any``) of the targeted replicated Jobs' Jobs completed. A finished JobSet
deletes its active Jobs' pods.

Start-up: ``InOrder`` creates a replicated Job's Jobs only once every Job of the previous one is
ready (its ready and succeeded pods reach ``min(parallelism, completions)``; a pod is ready when its
containers run, as gpufleet has no readiness probes), ``allReplicasStarted``; ``dependsOn`` waits
for the named replicated Job to be ``Ready`` (ready, succeeded or failed Jobs) or ``Complete``.
``suspend: true`` creates no pods (under Kueue, Kueue's admission holds them instead).

Exclusive placement (``alpha.jobset.sigs.k8s.io/exclusive-topology: <node label key>`` on the JobSet
or a replicated Job's template): the pod webhook gives each Job's leader (completion index 0) a
required pod affinity to its own Job's pods (``job-key In``) and a required anti-affinity to other
Jobs' pods of its priority (``job-key Exists, NotIn``; ``jobset.sigs.k8s.io/priority In``), both over
that topology key and every namespace; followers are admitted only once the leader is bound, with a
nodeSelector on the leader's domain (``setNodeSelector``); a NonIndexed Job has no leader, and none of
its pods is admitted. The scheduler's InterPodAffinity then decides,
so each Job has a domain to itself and a Job finds none when the domains run out. Upstream the Job
controller retries the refused followers with its backoff; here they are created when the leader binds.
With ``alpha.jobset.sigs.k8s.io/node-selector`` the pods get the nodeSelector
``alpha.jobset.sigs.k8s.io/namespaced-job: <ns>_<job>`` and a toleration of
``alpha.jobset.sigs.k8s.io/no-schedule`` instead (the nodes are labelled by the user).

Kueue (``pkg/controller/jobs/jobset``): one workload, a pod set per replicated Job named after it, of
``replicas * min(parallelism, completions)`` pods, less the pods of its Jobs that completed
(``reclaimablePods``). JobSet has no gang of its own: pod templates
labelled ``scheduling.x-k8s.io/pod-group`` form one as any pods do.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from gpufleet.model.failed_indexes import MAX_INT32
from gpufleet.model.generated_names import generate_name
from gpufleet.model.node import Node, Toleration
from gpufleet.model.pod import OwnerRef, Pod, Requirement
from gpufleet.model.pod_affinity import PodAffinity, PodAffinityTerm
from gpufleet.model.pod_failure_policy import ContainerExit, PodFailurePolicy
from gpufleet.model.workloads import Created, Job, PodGroup, PodSet, labelled
from gpufleet.workloads import register_kind
from gpufleet.workloads.job import COMPLETE, FAILED, JobController
from gpufleet.workloads.kind import (
    COMPLETING_RESTART_POLICIES,
    EndsWithCondition,
    ManifestReader,
    work_queue_delay_s,
)
from gpufleet.workloads.pytorchjob import invalid, required, unsupported

API = ("jobset.x-k8s.io", "v1alpha2", "JobSet")
PREFIX = "jobset.sigs.k8s.io/"
JOBSET_NAME, REPLICATED_JOB_NAME = PREFIX + "jobset-name", PREFIX + "replicatedjob-name"
REPLICATED_JOB_REPLICAS, GLOBAL_REPLICAS = PREFIX + "replicatedjob-replicas", PREFIX + "global-replicas"
JOB_INDEX, JOB_GLOBAL_INDEX, JOB_KEY = PREFIX + "job-index", PREFIX + "job-global-index", PREFIX + "job-key"
GROUP_NAME, GROUP_REPLICAS, JOB_GROUP_INDEX = (
    PREFIX + "group-name",
    PREFIX + "group-replicas",
    PREFIX + "job-group-index",
)
RESTART_ATTEMPT, PRIORITY = PREFIX + "restart-attempt", PREFIX + "priority"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE_TAINT = "alpha.jobset.sigs.k8s.io/no-schedule"
JOB_NAME, LEGACY_JOB_NAME = "batch.kubernetes.io/job-name", "job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"

ALL, ANY = "All", "Any"
FAIL_JOBSET, RESTART_JOBSET = "FailJobSet", "RestartJobSet"
RESTART_IGNORING_MAX = "RestartJobSetAndIgnoreMaxRestarts"
GATED_ACTIONS = ("RestartJob", "RestartJobAndIgnoreMaxRestarts")  # the RestartJob feature gate, off
ACTIONS = (FAIL_JOBSET, RESTART_JOBSET, RESTART_IGNORING_MAX, *GATED_ACTIONS)
RESTART_STRATEGIES = ("Recreate", "BlockingRecreate", "InPlaceRestart")
STARTUP_ORDERS = ("AnyOrder", "InOrder")
DEPENDENCY_STATUSES = ("Ready", "Complete")
COMPLETION_MODES = ("NonIndexed", "Indexed")
#: ``validOnJobFailureReasons``
FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
MAX_NAME = 63
REQUIRED = "Required value"  # field.Required with no detail, as the CRD's schema says it
_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
#: JobSpec fields read here; of the others these are not modelled (as for a plain Job)
JOB_SPEC_READ = (
    "parallelism",
    "completions",
    "backoffLimit",
    "completionMode",
    "template",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "activeDeadlineSeconds",
    "podReplacementPolicy",
)
REPLICATED_JOB_READ = ("name", "replicas", "groupName", "template", "dependsOn")
_TOP_UNMODELLED = ("ttlSecondsAfterFinished", "volumeClaimPolicies")
#: ``managedBy`` naming the built-in controller (any other: another controller, MultiKueue's, runs it)
CONTROLLER_NAME = "jobset.sigs.k8s.io/jobset-controller"
COORDINATOR = PREFIX + "coordinator"
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


@dataclass(frozen=True)
class ReplicatedJob:
    name: str
    replicas: int
    template: Pod  # the pod template, restartPolicy defaulted
    parallelism: int = 1
    completions: int | None = 1
    backoff_limit: int = 6
    indexed: bool = True
    group: str = "default"
    #: ``alpha.jobset.sigs.k8s.io/exclusive-topology`` for its Jobs (the JobSet's, else the template's)
    exclusive_topology: str | None = None
    node_selector_strategy: bool = False
    depends_on: tuple[tuple[str, str], ...] = ()  # (replicated Job, Ready or Complete)
    #: its Jobs' ``podFailurePolicy`` (``model.pod_failure_policy``)
    pod_failure_policy: PodFailurePolicy | None = None
    #: its Jobs' ``backoffLimitPerIndex`` and ``maxFailedIndexes`` (``model.failed_indexes``); None: unset
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    #: its Jobs' ``activeDeadlineSeconds``, each from its own start; None: unset
    active_deadline_s: float | None = None
    #: its Jobs' ``podReplacementPolicy`` (``constructJob`` copies the template's spec; None: unset, the
    #: Job's default, ``Job.only_replace_failed_pods``)
    pod_replacement_policy: str | None = None

    @property
    def pods_per_job(self) -> int:
        """``min(parallelism, completions)``: a ready Job's pods (``calculateReplicatedJobStatuses``)."""
        return self.parallelism if self.completions is None else min(self.parallelism, self.completions)


@dataclass(frozen=True)
class FailureRule:
    name: str
    action: str
    reasons: tuple[str, ...] = ()
    message_patterns: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()

    def applies(self, job: FailedJob) -> bool:
        """``ruleIsApplicable``: the failed Job's reason is one of ``onJobFailureReasons``, its message
        matches one of ``onJobFailureMessagePatterns`` (``regexp.MatchString``: anywhere in it) and its
        replicated Job is one of ``targetReplicatedJobs`` (each: any when empty)."""
        reason = not self.reasons or job.reason in self.reasons
        message = not self.message_patterns or any(re.search(p, job.message) for p in self.message_patterns)
        return reason and message and (not self.targets or job.rjob in self.targets)


@dataclass(frozen=True)
class FailedJob:
    """A failed child Job as the failure policy reads it: its name, its replicated Job
    (``jobset.sigs.k8s.io/replicatedjob-name``) and its ``Failed`` condition's reason and message."""

    name: str
    rjob: str
    reason: str
    message: str


@dataclass(frozen=True)
class FailurePolicy:
    """``failurePolicy``: ``maxRestarts``, whether a restart waits for every old pod to be gone
    (``BlockingRecreate``), and the rules."""

    max_restarts: int = 0
    blocking_recreate: bool = False
    rules: tuple[FailureRule, ...] = ()


def first_failed_rule_and_job(
    rules: Sequence[FailureRule], failed: Sequence[FailedJob]
) -> tuple[FailureRule, FailedJob] | None:
    """``findFirstFailedPolicyRuleAndJob``: the first rule that applies to a failed Job, with the Job that
    failed first of those it applies to (``failed`` in the order the Jobs failed); None when none applies."""
    for rule in rules:
        job = next((j for j in failed if rule.applies(j)), None)
        if job is not None:
            return rule, job
    return None


@dataclass
class JobSet:
    name: str
    namespace: str
    replicated_jobs: tuple[ReplicatedJob, ...]
    created: Created = field(default_factory=Created)
    success_operator: str = ALL
    success_targets: tuple[str, ...] = ()
    #: ``failurePolicy``; None: a failed Job fails the JobSet
    failure_policy: FailurePolicy | None = None
    in_order: bool = False
    suspend: bool = False
    #: ``jobset.sigs.k8s.io/coordinator``: the coordinator pod's stable endpoint, when one is named
    coordinator: str | None = None
    #: Kueue manages it (``kueue.x-k8s.io/queue-name``): it holds the pods, created gated, until it admits it
    queued: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        """The first replicated Job's pod template."""
        return self.replicated_jobs[0].template


# -- the reader --------------------------------------------------------------------------------


def _strings(manifest: ManifestReader, path: str) -> tuple[str, ...]:
    value = manifest.value(path)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        manifest.error(path, invalid(value, "must be a list of strings"))
        return ()
    return tuple(value)


def _enum(manifest: ManifestReader, path: str, allowed: Sequence[str], default: str) -> str:
    value = manifest.value(path)
    if value is None:
        return default
    if value not in allowed:
        manifest.error(path, unsupported(value, allowed))
        return default
    return str(value)


def _check_name(manifest: ManifestReader, path: str, value: str, too_long: str) -> None:
    """``validation.IsDNS1035Label`` of a generated name, as the webhook words it."""
    if len(value) > MAX_NAME:
        manifest.error(path, invalid(value, too_long))
    elif not _DNS_1035.fullmatch(value):
        manifest.error(path, invalid(value, DNS_1035_MESSAGE))


def _replicated_job(
    manifest: ManifestReader, i: int, seen: Sequence[str]
) -> tuple[ReplicatedJob, Created] | None:
    at = f"replicatedJobs[{i}]"
    entry = manifest.value(at)
    if not isinstance(entry, dict):
        manifest.error(at, invalid(entry, "must be an object"))
        return None
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        manifest.error(f"{at}.name", REQUIRED)
        name = f"replicatedjob-{i}"
    elif name in seen:
        manifest.error(f"{at}.name", f'Duplicate value: "{name}"')
    replicas = manifest.count(f"{at}.replicas", 1)
    group = manifest.value(f"{at}.groupName") or "default"
    _check_name(
        manifest,
        f"{at}.name",
        f"{manifest.name}-{name}-{max(replicas - 1, 0)}",
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
    )
    manifest.unmodelled([f"{at}.{f}" for f in entry if f not in REPLICATED_JOB_READ])

    job_at = f"{at}.template.spec"
    job_spec = manifest.value(job_at)
    job_spec = job_spec if isinstance(job_spec, dict) else {}
    given = {k for k, v in job_spec.items() if v is not None}
    parallelism = manifest.count(f"{job_at}.parallelism", 1)
    completions: int | None = None if "parallelism" in given else 1  # parallelism alone: a work queue
    if "completions" in given:
        completions = manifest.count(f"{job_at}.completions", 1)
    mode = _enum(manifest, f"{job_at}.completionMode", COMPLETION_MODES, "Indexed")  # the webhook's default
    per_index, max_failed = manifest.per_index(job_at, mode == "Indexed", completions)
    # SetDefaults_Job: backoffLimit defaults to MaxInt32 with backoffLimitPerIndex
    backoff_limit = manifest.count(f"{job_at}.backoffLimit", 6 if per_index is None else MAX_INT32)
    if mode == "Indexed" and completions is None:
        manifest.error(f"{job_at}.completions", required("when completion mode is Indexed"))
    if mode == "Indexed" and completions is not None:
        pod = f"{manifest.name}-{name}-{max(replicas - 1, 0)}-{max(completions - 1, 0)}-abcde"
        _check_name(
            manifest,
            f"{at}.name",
            pod,
            "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
        )
    manifest.unmodelled([f"{job_at}.{f}" for f in job_spec if f not in JOB_SPEC_READ])
    template_metadata = manifest.value(f"{at}.template.metadata")
    annotations = template_metadata.get("annotations") if isinstance(template_metadata, dict) else None
    annotations = annotations if isinstance(annotations, dict) else {}

    # the webhook defaults an unset restartPolicy to OnFailure; a child Job's pods may not restart Always
    restart_at = f"{job_at}.template.spec.restartPolicy"
    given_policy = manifest.value(restart_at)
    default = "OnFailure" if given_policy is None else None  # its pods are read with it
    template, created = manifest.template(
        f"{job_at}.template", ("Always", *COMPLETING_RESTART_POLICIES), restart_policy=default
    )
    if given_policy == "Always":
        manifest.error(restart_at, unsupported(given_policy, COMPLETING_RESTART_POLICIES))
    pod_failure_policy = manifest.pod_failure_policy(job_at, restart_policy=default)
    replacement = manifest.pod_replacement_policy(job_at, pod_failure_policy)
    deadline = manifest.value(f"{job_at}.activeDeadlineSeconds")
    if deadline is not None:  # validateJobSpec: not negative
        deadline = manifest.count(f"{job_at}.activeDeadlineSeconds", 0)

    exclusive = manifest.annotations.get(EXCLUSIVE)
    strategy = NODE_SELECTOR_STRATEGY in manifest.annotations if exclusive is not None else False
    if isinstance(annotations.get(EXCLUSIVE), str):  # the replicated Job's own overrides the JobSet's
        exclusive = annotations[EXCLUSIVE]
        strategy = NODE_SELECTOR_STRATEGY in annotations

    depends: list[tuple[str, str]] = []
    given_depends = manifest.value(f"{at}.dependsOn")
    if i == 0 and given_depends:
        detail = "DependsOn can't be set for the first ReplicatedJob"
        manifest.error(f"{at}.dependsOn", invalid(given_depends, detail))
    for j, item in enumerate(given_depends if isinstance(given_depends, list) and i > 0 else []):
        item_at = f"{at}.dependsOn[{j}]"
        target = item.get("name") if isinstance(item, dict) else None
        status = _enum(manifest, f"{item_at}.status", DEPENDENCY_STATUSES, "Ready")
        if target not in seen:
            detail = f"replicatedJob: {name} cannot depend on replicatedJob: {target or ''}"
            manifest.error(f"{item_at}.name", invalid(target, detail))
        else:
            depends.append((str(target), status))
    rjob = ReplicatedJob(
        name,
        replicas,
        template,
        parallelism,
        completions,
        backoff_limit,
        mode == "Indexed",
        str(group),
        exclusive,
        strategy,
        tuple(depends),
        pod_failure_policy,
        per_index,
        max_failed,
        None if deadline is None else float(deadline),
        replacement,
    )
    return rjob, created


def read_failure_policy(
    manifest: ManifestReader, names: Sequence[str], at: str = "failurePolicy"
) -> FailurePolicy:
    """A JobSet spec's ``failurePolicy`` at ``spec.<at>`` (a TrainJob runtime's JobSet template's too),
    defaulted and checked as the webhook does (``validateFailurePolicy``); ``names``: the replicated Jobs."""
    max_restarts = manifest.count(f"{at}.maxRestarts", 0)
    strategy = _enum(manifest, f"{at}.restartStrategy", RESTART_STRATEGIES, "Recreate")
    if strategy == "InPlaceRestart":
        detail = "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"
        manifest.error(f"{at}.restartStrategy", invalid(strategy, detail))
    rules: list[FailureRule] = []
    raw = manifest.value(f"{at}.rules")
    if raw is not None and not isinstance(raw, list):
        manifest.error(f"{at}.rules", invalid(raw, "must be a list"))
    for i, rule in enumerate(raw if isinstance(raw, list) else []):
        rule_at = f"{at}.rules[{i}]"
        rule = rule if isinstance(rule, dict) else {}
        name = rule.get("name") or f"failurePolicyRule{i}"  # the webhook's default
        if not isinstance(name, str) or not _RULE_NAME.match(name) or len(name) > 128:
            detail = (
                "a failure policy rule name must start with an alphabetic character, optionally followed "
                "by a string of alphanumeric characters or '_,:', and must end with an alphanumeric "
                "character or '_'"
            )
            manifest.error(f"{rule_at}.name", invalid(name, detail))
        elif name in (r.name for r in rules):
            manifest.error(f"{rule_at}.name", f'Duplicate value: "{name}": rule names are not unique')
        action = _enum(manifest, f"{rule_at}.action", ACTIONS, RESTART_JOBSET)
        if rule.get("action") is None:
            manifest.error(f"{rule_at}.action", REQUIRED)
        if action in GATED_ACTIONS:
            detail = f"{action} is not allowed when the RestartJob feature gate is disabled"
            manifest.error(f"{rule_at}.action", invalid(action, detail))
        targets = _strings(manifest, f"{rule_at}.targetReplicatedJobs")
        for target in targets:
            if target not in names:
                detail = (
                    f"invalid replicatedJob name '{target}' in failure policy does not appear in "
                    ".spec.ReplicatedJobs"
                )
                manifest.error(f"{rule_at}.targetReplicatedJobs", invalid(target, detail))
        reasons = _strings(manifest, f"{rule_at}.onJobFailureReasons")
        for reason in reasons:
            if reason not in FAILURE_REASONS:
                manifest.error(f"{rule_at}.onJobFailureReasons", unsupported(reason, FAILURE_REASONS))
        patterns = _strings(manifest, f"{rule_at}.onJobFailureMessagePatterns")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as e:
                manifest.error(f"{rule_at}.onJobFailureMessagePatterns", invalid(pattern, str(e)))
        rules.append(FailureRule(name, action, reasons, patterns, targets))
    return FailurePolicy(max_restarts, strategy == "BlockingRecreate", tuple(rules))


def _coordinator(manifest: ManifestReader, rjobs: Sequence[ReplicatedJob]) -> str | None:
    """``CoordinatorEndpoint`` ``<jobset>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``, checked as
    ``validateCoordinator`` and ``validateCoordinatorLabelValue`` check it."""
    if manifest.value("coordinator") is None:
        return None
    name = manifest.value("coordinator.replicatedJob")
    job_index = manifest.count("coordinator.jobIndex", 0)
    pod_index = manifest.count("coordinator.podIndex", 0)
    rjob = next((r for r in rjobs if r.name == name), None)
    if rjob is None:
        detail = f"coordinator replicatedJob {name} does not exist"
        manifest.error("coordinator.replicatedJob", invalid(name, detail))
        return None
    if job_index >= rjob.replicas:
        detail = f"coordinator job index {job_index} is invalid for replicatedJob {name}"
        manifest.error("coordinator.jobIndex", invalid(job_index, detail))
    elif not rjob.indexed or rjob.completions is None:
        detail = "job for coordinator pod must be indexed completion mode, and completions number must be set"
        manifest.error("coordinator.replicatedJob", invalid(name, detail))
    elif pod_index >= rjob.completions:
        detail = (
            f"coordinator pod index {pod_index} is invalid for replicatedJob {name} job index {job_index}"
        )
        manifest.error("coordinator.podIndex", invalid(pod_index, detail))
    subdomain = manifest.value("network.subdomain") or manifest.name
    endpoint = f"{manifest.name}-{name}-{job_index}-{pod_index}.{subdomain}"
    if len(endpoint) > MAX_NAME or not _LABEL_VALUE.fullmatch(endpoint):
        detail = f'spec will lead to invalid label value "{endpoint}" for coordinator label "{COORDINATOR}"'
        manifest.error("coordinator", invalid(endpoint, detail))
    return endpoint


def read_jobset(manifest: ManifestReader) -> JobSet:
    """A ``jobset.x-k8s.io/v1alpha2`` JobSet, defaulted and validated as the JobSet webhook does."""
    manifest.value("network")  # a headless Service for pod hostnames: nothing scheduled changes
    manifest.unmodelled(list(_TOP_UNMODELLED))
    if manifest.value("managedBy") not in (None, CONTROLLER_NAME):
        manifest.unmodelled(["managedBy"])  # another controller (MultiKueue's) runs it, not modelled
    raw = manifest.value("replicatedJobs")
    read: list[tuple[ReplicatedJob, Created]] = []
    if raw is not None and not isinstance(raw, list):
        manifest.error("replicatedJobs", invalid(raw, "must be a list"))
    for i in range(len(raw) if isinstance(raw, list) else 0):
        found = _replicated_job(manifest, i, [r.name for r, _ in read])
        if found is not None:
            read.append(found)
    rjobs = tuple(r for r, _ in read)
    names = [r.name for r in rjobs]
    created = min((c for _, c in read), key=lambda c: c.submit_at_s, default=Created())

    for policy in ("successPolicy", "failurePolicy", "startupPolicy", "coordinator", "network"):
        if (value := manifest.value(policy)) is not None and not isinstance(value, dict):
            manifest.error(policy, invalid(value, "must be an object"))
    operator = _enum(manifest, "successPolicy.operator", (ALL, ANY), ALL)
    if isinstance(manifest.value("successPolicy"), dict) and manifest.value("successPolicy.operator") is None:
        manifest.error("successPolicy.operator", REQUIRED)
    targets = _strings(manifest, "successPolicy.targetReplicatedJobs")
    for target in targets:
        if target not in names:
            detail = f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs"
            manifest.error("successPolicy.targetReplicatedJobs", invalid(target, detail))
    order = _enum(manifest, "startupPolicy.startupPolicyOrder", STARTUP_ORDERS, "AnyOrder")
    if order == "InOrder" and any(r.depends_on for r in rjobs):
        detail = "StartupPolicy and DependsOn APIs are mutually exclusive"
        manifest.error("startupPolicy", invalid(order, detail))
    given_policy = manifest.value("failurePolicy") is not None
    failure_policy = read_failure_policy(manifest, names) if given_policy else None
    suspend = manifest.value("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        manifest.error("suspend", invalid(suspend, "must be a boolean"))
    # a JobSet that Kueue manages is created suspended and resumed on admission: Kueue holds its pods
    kueue = "kueue.x-k8s.io/queue-name" in manifest.labels
    if not rjobs:  # none given (or all rejected above): a JobSet with nothing to run
        rjobs = (ReplicatedJob("", 0, Pod(name="", namespace=manifest.namespace)),)
    return JobSet(
        manifest.name,
        manifest.namespace,
        rjobs,
        created,
        operator,
        targets,
        failure_policy,
        order == "InOrder",
        suspend is True and not kueue,
        _coordinator(manifest, rjobs),
        kueue,
    )


# -- the controller ----------------------------------------------------------------------------


def child_job_name(jobset: str, replicated_job: str, job_index: int) -> str:
    """``placement.GenJobName``: a JobSet's child Job, ``<jobset>-<replicatedJob>-<jobIndex>``."""
    return f"{jobset}-{replicated_job}-{job_index}"


def job_key(namespace: str, job: str) -> str:
    """``jobHashKey``: the SHA-1 of ``<namespace>/<job>``."""
    return hashlib.sha1(f"{namespace}/{job}".encode()).hexdigest()


class ChildJob(JobController):
    """One child Job of a JobSet, driven by the Job controller; its pods named, labelled and (under
    exclusive placement) placed as the JobSet's webhooks make them."""

    def __init__(
        self, job: Job, rjob: ReplicatedJob, restart: int, marks: Mapping[str, str], held: bool = False
    ) -> None:
        super().__init__(job)
        self.rjob = rjob
        self.held = held  # Kueue holds its JobSet (``JobSetController.held``)
        self.restart = restart
        self.marks = dict(marks)  # the labels (and annotations) labelAndAnnotateObject sets
        self.parallelism = job.parallelism
        #: exclusive placement by affinity: the topology domain of the leader's node, once it is bound
        self.domain: str | None = None

    @property
    def leader_first(self) -> bool:
        return self.rjob.exclusive_topology is not None and not self.rjob.node_selector_strategy

    @property
    def finished_type(self) -> str | None:
        """``JobFinished``: the Job's ``Failed`` or ``Complete`` condition, what the JobSet reads of it
        (``getChildJobs``); None while it has neither. The Job controller sets it only once none of the Job's
        pods is terminating (``delayTerminalCondition``, ``JobController.status_conditions``): a Job that
        failed (past ``backoffLimit`` by its failed pods or, under ``OnFailure``, its containers' restarts; a
        ``podFailurePolicy`` rule; its failed indexes; its deadline) or succeeded is first ``FailureTarget``
        or ``SuccessCriteriaMet`` while the pods it deleted (``deleteActivePods``) terminate."""
        conditions = self.status_conditions()
        last = conditions[-1].type if conditions else None
        return last if last in (FAILED, COMPLETE) else None

    @property
    def failed_job(self) -> bool:
        """The Job has its ``Failed`` condition (``finished_type``)."""
        return self.finished_type == FAILED

    @property
    def complete(self) -> bool:
        """The Job has its ``Complete`` condition (``finished_type``)."""
        return self.finished_type == COMPLETE

    def failed_as(self) -> FailedJob:
        """The Job as the failure policy reads it once it failed (its ``Failed`` condition)."""
        reason, message = self.failure or ("", "")
        return FailedJob(self.job.name, self.rjob.name, reason, message)

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """The Job's pods; under exclusive placement its followers only once the leader is bound
        (the pod webhook refuses them before); as any Job's, none for a Job of ``activeDeadlineSeconds: 0``
        but while Kueue holds it (``JobController.wanted``)."""
        if self.leader_first:
            if not self.rjob.indexed:
                return []  # no pod is the leader (completion index 0): the pod webhook refuses them all
            if not self.active:
                self.domain = None  # a new leader chooses again
            parallelism = self.parallelism if self.domain is not None else 1
            self.job = replace(self.job, parallelism=parallelism)
        return super().wanted(nodes)

    def pod_name(self, index: int, attempt: int) -> str:
        """``<job>-<index>-<suffix>`` (NonIndexed: ``<job>-<suffix>``), the suffix drawn from the pod's
        namespace, Job, index, restart attempt and re-creation count."""
        job = self.job
        stem = f"{job.name}-{index}" if self.rjob.indexed else job.name
        return generate_name(f"{stem}-", f"{job.namespace}/{job.name}/{index}/{self.restart}/{attempt}")

    def pod(self, index: int, attempt: int) -> Pod:
        job, rjob = self.job, self.rjob
        name = self.pod_name(index, attempt)
        marks = {**self.marks, JOB_NAME: job.name, LEGACY_JOB_NAME: job.name}
        if rjob.indexed:
            marks[COMPLETION_INDEX] = str(index)
        template = rjob.template
        annotations = {**template.annotations, **marks, **self.index_failure_marks(index)}
        labels = dict(marks)
        if not (rjob.exclusive_topology is not None and rjob.node_selector_strategy):
            labels[PRIORITY] = str(template.priority)  # the pod webhook's, for every pod it mutates
        node_selector = dict(template.node_selector)
        tolerations = template.tolerations
        affinity = template.pod_affinity
        topology = rjob.exclusive_topology
        if topology is not None:
            annotations[EXCLUSIVE] = topology
            if rjob.node_selector_strategy:
                annotations[NODE_SELECTOR_STRATEGY] = "true"
                node_selector[NAMESPACED_JOB] = f"{job.namespace}_{job.name}"
                tolerations += (Toleration(NO_SCHEDULE_TAINT, "Exists", "", "NoSchedule"),)
            elif index == 0:
                affinity = self._exclusive_affinity(affinity, labels[JOB_KEY], labels[PRIORITY], topology)
            elif self.domain is not None:
                node_selector[topology] = self.domain
        pod = template.stamped(name, OwnerRef("Job", job.name), labels)
        return replace(
            pod,
            namespace=job.namespace,
            annotations=annotations,
            node_selector=node_selector,
            tolerations=tolerations,
            pod_affinity=affinity,
        )

    @staticmethod
    def _exclusive_affinity(base: PodAffinity | None, key: str, priority: str, topology: str) -> PodAffinity:
        """``setExclusiveAffinities``: with the Job's own pods, away from other Jobs' pods of its priority."""
        every_namespace: tuple[Requirement, ...] = ()  # namespaceSelector: {}
        same = PodAffinityTerm(
            (Requirement(JOB_KEY, "In", (key,)),), topology, namespace_selector=every_namespace
        )
        others = PodAffinityTerm(
            (
                Requirement(JOB_KEY, "Exists", ()),
                Requirement(JOB_KEY, "NotIn", (key,)),
                Requirement(PRIORITY, "In", (priority,)),
            ),
            topology,
            namespace_selector=every_namespace,
        )
        base = base or PodAffinity()
        return replace(base, required=(*base.required, same), anti_required=(*base.anti_required, others))

    def leader_bound(self, pod: Pod, node: Node) -> bool:
        """The leader's node gives the Job its domain (``setNodeSelector``); a node without the
        topology label gives none, and the followers are never admitted (as upstream)."""
        if not self.leader_first or self.domain is not None or pod.labels.get(COMPLETION_INDEX) != "0":
            return False
        self.domain = node.labels.get(self.rjob.exclusive_topology or "")
        return self.domain is not None


def _deadline_name(child: ChildJob) -> str:
    """The name a child Job's deadline is armed under (``kind.HasDeadline``): its name and restart attempt."""
    return f"{child.job.name}/{child.restart}"


def _first_failed(message: str, job: FailedJob) -> str:
    """``messageWithFirstFailedJob``."""
    return f"{message} (first failed job: {job.name})"


@dataclass
class _Leaving:
    """Pods of deleted Jobs, until they are gone (a foreground deletion)."""

    pods: dict[str, str] = field(default_factory=dict)  # pod key -> its Job's name

    def holds(self, job: str) -> bool:
        return job in self.pods.values()


@register_kind(JobSet, api=API, read=read_jobset)
class JobSetController(EndsWithCondition):
    """The JobSet controller's reconcile: its child Jobs created (in order, after their dependencies,
    after a restart's deletions), each driven by the Job controller; the success and failure policies
    judged each time a Job ends."""

    ENDED: ClassVar[tuple[str, str]] = ("Completed", "Failed")
    #: its child Jobs' class (how their pods are named)
    CHILD: ClassVar[type[ChildJob]] = ChildJob

    kind: ClassVar[str] = "JobSet"
    per_node: ClassVar[bool] = False

    def __init__(self, jobset: JobSet) -> None:
        self.jobset = jobset
        self.rjobs = {r.name: r for r in jobset.replicated_jobs}
        self.children: dict[str, ChildJob] = {}  # the current attempt's Jobs, by name
        self.owner_of: dict[str, ChildJob] = {}  # the current attempt's pods (not ended)
        self.running: set[str] = set()
        self.leaving = _Leaving()
        self.to_delete: list[tuple[str, str]] = []
        self.restarts = 0
        self.restarts_toward_max = 0
        self.failed_order: list[str] = []  # child Jobs in the order they got their ``Failed`` condition
        self._delay = 0.0  # the wait before the reconcile that the last pod's end asks for
        #: Created, Running, Restarting, Completed, Failed or Suspended; ``message`` says why it ended
        self.status = "Suspended" if jobset.suspend else "Created"
        self.message = ""
        #: Kueue holds it suspended until it admits it (``JobSet.queued``): its Jobs' pods are created gated
        self.held = jobset.queued
        self.now_s = 0.0  # the run's time as it was last told (``tick``)

    @property
    def key(self) -> str:
        return self.jobset.key

    @property
    def active(self) -> set[str]:
        """Its pods not yet ended, those of deleted Jobs included (Kueue holds the quota until then)."""
        return set(self.owner_of) | set(self.leaving.pods)

    # -- Jobs --------------------------------------------------------------------------------
    def _marks(self, rjob: ReplicatedJob, index: int, job: str) -> dict[str, str]:
        jobset = self.jobset
        rjobs = jobset.replicated_jobs
        before = next(i for i, r in enumerate(rjobs) if r.name == rjob.name)
        group = [r for r in rjobs if r.group == rjob.group]
        group_before = sum(r.replicas for r in group[: group.index(rjob)])
        return {
            JOBSET_NAME: jobset.name,
            REPLICATED_JOB_NAME: rjob.name,
            RESTART_ATTEMPT: str(self.restarts),
            REPLICATED_JOB_REPLICAS: str(rjob.replicas),
            GLOBAL_REPLICAS: str(sum(r.replicas for r in rjobs)),
            JOB_INDEX: str(index),
            JOB_KEY: job_key(jobset.namespace, job),
            JOB_GLOBAL_INDEX: str(sum(r.replicas for r in rjobs[:before]) + index),
            GROUP_NAME: rjob.group,
            GROUP_REPLICAS: str(sum(r.replicas for r in group)),
            JOB_GROUP_INDEX: str(group_before + index),
            **({COORDINATOR: jobset.coordinator} if jobset.coordinator is not None else {}),
        }

    def _create_jobs(self, rjob: ReplicatedJob) -> None:
        """``constructJobsFromTemplate``: each missing Job, once its old one (a restart's) is gone."""
        policy = self.jobset.failure_policy
        if policy is not None and policy.blocking_recreate and self.leaving.pods:
            return
        for index in range(rjob.replicas):
            name = child_job_name(self.jobset.name, rjob.name, index)
            if name in self.children or self.leaving.holds(name):
                continue
            job = Job(
                name,
                self.jobset.namespace,
                rjob.template,
                rjob.parallelism,
                rjob.completions,
                rjob.backoff_limit,
                self.jobset.created,
                pod_failure_policy=rjob.pod_failure_policy,
                indexed=rjob.indexed,
                backoff_limit_per_index=rjob.backoff_limit_per_index,
                max_failed_indexes=rjob.max_failed_indexes,
                active_deadline_s=rjob.active_deadline_s,
                pod_replacement_policy=rjob.pod_replacement_policy,
            )
            marks = self._marks(rjob, index, name)
            self.children[name] = self.CHILD(job, rjob, self.restarts, marks, self.held)
            self.children[name].tick(self.now_s)

    def tick(self, now_s: float) -> None:
        """``kind.KeepsTime``: the run's time, which its child Jobs' pod failure backoff reads
        (``JobController.tick``)."""
        self.now_s = now_s
        for child in self.children.values():
            child.tick(now_s)

    def _jobs_of(self, rjob: str) -> list[ChildJob]:
        return [c for c in self.children.values() if c.rjob.name == rjob]

    def _ready(self, child: ChildJob) -> bool:
        ready = sum(1 for k in child.active if k in self.running)
        return child.succeeded + ready >= child.rjob.pods_per_job

    def _started(self, rjob: ReplicatedJob) -> int:
        """Its Jobs that are ready, succeeded or failed (``allReplicasStarted``, ``DependencyReady``)."""
        return sum(1 for c in self._jobs_of(rjob.name) if c.failed_job or c.complete or self._ready(c))

    def _dependencies_met(self, rjob: ReplicatedJob) -> bool:
        """``dependencyReachedStatus``."""
        for name, status in rjob.depends_on:
            target = self.rjobs[name]
            if status == "Complete":
                reached = sum(1 for c in self._jobs_of(name) if c.complete) == target.replicas
            else:
                reached = self._started(target) == target.replicas
            if not reached:
                return False
        return True

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """``reconcileReplicatedJobs``: the Jobs to create now, then every Job's pods."""
        if self.jobset.suspend or self.finished_as is not None:
            return []
        for rjob in self.jobset.replicated_jobs:
            if not self._dependencies_met(rjob):
                continue
            if self.jobset.in_order and self._started(rjob) == rjob.replicas:
                continue
            self._create_jobs(rjob)
            if self.jobset.in_order:
                break  # the next replicated Job waits for this one's Jobs to be ready
        out: list[Pod] = []
        for child in self.children.values():
            for pod in child.wanted(nodes):
                self.owner_of[pod.key] = child
                out.append(pod)
        if out and self.status == "Created":
            self.status = "Running"
        return out

    def doomed(self) -> list[tuple[str, str]]:
        """The pods of the Jobs a restart or the JobSet's end deleted (``deleteJobs``), and the active pods of
        a Job that failed (its ``deleteActivePods``), which it waits for before its ``Failed`` condition and
        so before the JobSet judges it (``finished_type``)."""
        doomed, self.to_delete = self.to_delete, []
        if self.finished_as is None:
            for child in self.children.values():
                if child.failure is not None:
                    doomed += [(key, reason) for key, reason in child.doomed() if key in self.owner_of]
        return doomed

    def _delete_jobs(self) -> None:
        for key, child in sorted(self.owner_of.items()):
            self.leaving.pods[key] = child.job.name
            self.to_delete.append((key, "Deleted"))
        self.owner_of.clear()
        self.running.clear()

    # -- how it ends ---------------------------------------------------------------------------
    def _end(self, status: str, message: str) -> None:
        self.status, self.message = status, message
        self._delete_jobs()

    def _restart(self, counts: bool) -> None:
        """``failurePolicyRecreateAll``: every Job deleted, created again under ``restart-attempt + 1``."""
        self.restarts += 1
        self.restarts_toward_max += counts
        self.status = "Restarting"
        self._delete_jobs()
        self.children.clear()
        self.failed_order.clear()

    def _judge(self) -> None:
        """``executeFailurePolicy``, then ``executeSuccessPolicy``."""
        jobset = self.jobset
        if self.failed_order:
            failed = [self.children[name].failed_as() for name in self.failed_order]
            policy = jobset.failure_policy
            if policy is None:
                self._end("Failed", _first_failed("jobset failed due to one or more job failures", failed[0]))
                return
            found = first_failed_rule_and_job(policy.rules, failed)
            # no rule applies: defaultFailurePolicyRuleAction, for the Job that failed first
            action, job = (RESTART_JOBSET, failed[0]) if found is None else (found[0].action, found[1])
            if action == FAIL_JOBSET:
                self._end("Failed", _first_failed("applying FailJobSet failure policy action", job))
            elif action == RESTART_JOBSET and self.restarts_toward_max >= policy.max_restarts:
                self._end(
                    "Failed", _first_failed("jobset failed due to reaching max number of restarts", job)
                )
            else:
                self._restart(counts=action == RESTART_JOBSET)
            return
        targets = jobset.success_targets
        succeeded = sum(
            1 for c in self.children.values() if c.complete and (not targets or c.rjob.name in targets)
        )
        if jobset.success_operator == ANY:
            expected = 1
        else:
            expected = sum(r.replicas for r in jobset.replicated_jobs if not targets or r.name in targets)
        if succeeded and succeeded >= expected:
            self._end(self.ENDED[0], "jobset completed successfully")

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """``kind.ReadsFailedPods``: how the pod failed, for its Job's ``podFailurePolicy``."""
        child = self.owner_of.get(pod.key)
        if child is not None:
            child.failed_with(pod, reason, terminated)

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        self._delay = 0.0
        if self.leaving.pods.pop(pod.key, None) is not None:
            return True  # a deleted Job's pod is gone: its Job may be created again
        child = self.owner_of.pop(pod.key, None)
        self.running.discard(pod.key)
        if child is None or self.finished_as is not None:
            return False
        child.finished(pod, succeeded)
        restarts = self.restarts
        self._judge_if_finished(child)
        if self.restarts > restarts:
            self._delay = work_queue_delay_s(self.restarts - 1)
        elif not child.done:
            self._delay = child.retry_delay_s()
        return True

    def pod_terminating(self, pod: Pod, suspended: bool = False) -> bool:
        """``kind.HearsTerminating``: one of its Jobs' pods is being deleted (a preemption, an eviction, a
        drain; ``suspended``: Kueue's eviction): its Job, a batch/v1 Job run by the Job controller, hears it
        as a plain Job does (``JobController.pod_terminating``: ``podReplacementPolicy``), so under
        ``TerminatingOrFailed`` it counts the pod failed and replaces it after its pod failure backoff while
        the pod terminates. A Job that failed so (``FailureTarget``) deletes its active pods at once
        (``doomed``) and is judged by the failure policy once the pod is gone (``finished``): the JobSet reads
        a Job's ``Failed`` condition (``JobFinished``), which waits for its terminating pods
        (``delayTerminalCondition``). Returns whether the Job may want a pod, or delete its pods, now (after
        ``retry_delay_s``)."""
        child = self.owner_of.get(pod.key)
        if child is None or self.finished_as is not None:
            return False
        wants = child.pod_terminating(pod, suspended)
        self._delay = child.retry_delay_s()
        return wants

    def restarted(self, pod: Pod) -> None:
        """``kind.CountsRestarts``: the kubelet restarted a container of one of its Jobs' pods; a Job it
        fails (``pastBackoffLimitOnFailure``) is judged by the failure policy as any failed Job."""
        child = self.owner_of.get(pod.key)
        if child is None or self.finished_as is not None:
            return
        child.restarted(pod)
        self._judge_if_finished(child)

    def _judge_if_finished(self, child: ChildJob) -> None:
        """The reconcile after a change to ``child`` (a pod of it ended, a container restarted, its deadline
        passed): ``getChildJobs`` sorts the Jobs by their ``Failed`` or ``Complete`` condition
        (``JobFinished``, ``ChildJob.finished_type``); a failed Job runs the failure policy
        (``executeFailurePolicy``), the Jobs in the order they got the condition
        (``findFirstFailedPolicyRuleAndJob``: its ``lastTransitionTime``), a complete one the success policy
        (``executeSuccessPolicy``). As both conditions wait for the Job's terminating pods, a Job that failed
        however it failed is judged once the active pods it deleted are gone (each after its grace
        period)."""
        finished = child.finished_type
        if finished == FAILED and child.job.name not in self.failed_order:
            self.failed_order.append(child.job.name)
            self._judge()
        elif finished == COMPLETE:
            self._judge()

    def deadlines(self) -> dict[str, float]:
        """``kind.HasDeadline``: each running child Job's ``activeDeadlineSeconds``, named ``<job>/<restart
        attempt>``: it runs from the Job's creation (its ``status.startTime``; a restart's new Jobs, or a
        resume, start it again, as ``resumeJob`` clears it)."""
        return {
            _deadline_name(c): c.job.active_deadline_s
            for c in self.children.values()
            if c.job.active_deadline_s is not None and not c.done
        }

    def deadline_passed(self, name: str) -> None:
        """A child Job's deadline passed: the Job controller fails it (``pastActiveDeadline``,
        ``DeadlineExceeded``), then the failure policy judges it (a rule's ``onJobFailureReasons:
        [DeadlineExceeded]`` applies). A Job of an earlier attempt, or one that ended, is left alone."""
        child = next((c for c in self.children.values() if _deadline_name(c) == name), None)
        if child is None or child.done or self.finished_as is not None:
            return
        child.deadline_passed()
        self._judge_if_finished(child)

    def retry_delay_s(self) -> float:
        """The wait before the reconcile after a failed pod (``kind.BacksOff``): the Job controller's pod
        failure backoff when a Job replaces the pod; the work queue's retry when the JobSet restarted
        (5 ms doubling per restart, so a JobSet whose pod fails at once restarts ever more slowly,
        never in a loop at one instant); none for a deleted Job's pod gone or an end."""
        return self._delay

    def pod_bound(self, pod: Pod, node: Node) -> bool:
        child = self.owner_of.get(pod.key)
        return child is not None and child.leader_bound(pod, node)

    def pod_ready(self, pod: Pod) -> bool:
        """A pod runs (is ready): a Job may be ready, and the next replicated Job may start."""
        if pod.key not in self.owner_of:
            return False
        self.running.add(pod.key)
        if self.status == "Restarting" and all(self._ready(c) or c.complete for c in self.children.values()):
            self.status = "Running"  # setRestartingConditionFalse: all jobs are ready
        return self.jobset.in_order or any(r.depends_on for r in self.jobset.replicated_jobs)

    def pod_sets(self) -> list[PodSet]:
        """Kueue's JobSet integration: a pod set per replicated Job, of ``replicas * min(parallelism,
        completions)`` pods (``podsCount``), its pods those of the replicated Job's Jobs."""
        return [
            PodSet(r.name, r.replicas * r.pods_per_job, r.template, labelled(REPLICATED_JOB_NAME, r.name))
            for r in self.jobset.replicated_jobs
        ]

    def reclaimable_pods(self) -> dict[str, int]:
        """Kueue's ``JobSet.ReclaimablePods``: per replicated Job, the pods of its Jobs that completed
        (``replicatedJobsStatus[].succeeded`` x ``PodsCountPerReplica``, ``min(parallelism,
        completions)``)."""
        out = {}
        for r in self.jobset.replicated_jobs:
            succeeded = sum(1 for c in self._jobs_of(r.name) if c.complete)
            if 0 < succeeded <= r.replicas:
                out[r.name] = succeeded * r.pods_per_job
        return out

    def pod_groups(self) -> list[PodGroup]:
        return []

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def run_with_counts(self, counts: Mapping[str, int]) -> list[str]:
        """Kueue admitted it (``RunWithPodSetsInfo``: ``spec.suspend: false``;
        ``control.port.AdmitsPartially``, every pod set at its full count): it and its Jobs are no longer
        ``held``; the gated pods of a Job of ``activeDeadlineSeconds: 0``, which is past its deadline as it
        resumes (``JobController.run_with_counts``), are not its own: their keys."""
        self.held = False
        return [key for child in self.children.values() for key in child.run_with_counts(counts)]

    def restore_counts(self) -> None:
        """Kueue evicted it (``Stop``: suspended): it and its Jobs are ``held`` again."""
        self.held = True
        for child in self.children.values():
            child.held = True

    def suspended(self, pod: Pod) -> None:
        """Kueue evicted it: its Jobs are suspended and their pods deleted, then created again on
        admission, without counting as failed. A Job that failed before is judged once its last pod is gone,
        suspended or not (``reconcile`` runs ``executeFailurePolicy`` before ``suspendJobs``)."""
        if self.leaving.pods.pop(pod.key, None) is not None:
            return
        child = self.owner_of.pop(pod.key, None)
        self.running.discard(pod.key)
        if child is not None:
            child.suspended(pod)
            if self.finished_as is None:
                self._judge_if_finished(child)
