"""Volcano's ``Job`` (``batch.volcano.sh/v1alpha1``): tasks of pods, a PodGroup for the gang, and
lifecycle policies, driven as Volcano's job controller drives it (``pkg/controllers/job``:
``job_controller_actions.go`` ``syncJob``/``killPods``, ``job_controller_util.go`` ``createJobPod`` and
``applyPolicies``, ``state/*.go``).

Read as the admission webhook defaults and validates it (``pkg/webhooks/admission/jobs/{mutate,
validate}``): ``queue`` defaults to ``default``, ``schedulerName`` to ``volcano``, ``maxRetry`` (0 or
absent) to 3, a task's ``name`` to ``default<index>``, its ``minAvailable`` to its ``replicas``, the
job's ``minAvailable`` (0 or absent) to the sum of the tasks' ``minAvailable``. Rejected: no task, a
duplicated task name, a task ``minAvailable`` above its ``replicas``, a job ``minAvailable`` above the
total replicas, an unknown plugin, policies with an invalid event or action, an event named twice, ``*``
beside other events, both an event and an ``exitCode``, ``exitCode: 0``, an ``exitCode`` named twice
in one list (an ``exitCode`` policy's action is not checked: one the job's state does not know acts as
``SyncJob``); and (``kube.load``) a ``queue`` no Queue of the scenario has (``unable to find job
queue``; ``default`` always exists).

Pods (``createJobPod``): ``<job>-<task>-<index>`` (``MakePodName``), owned by the Job (``ownerReferences``
kind ``Job``, apiVersion ``batch.volcano.sh/v1alpha1``), labelled ``volcano.sh/{task-index,job-name,
task-spec,job-namespace,queue-name}``, annotated ``volcano.sh/{task-index,task-spec,job-name,queue-name,
job-version,template-uid,job-retry-count}`` and ``scheduling.k8s.io/group-name: <job>-<uid>``. The
template's ``schedulerName`` and ``priorityClassName`` win over the job's. The PodGroup
(``createOrUpdatePodGroup``) is named ``<job>-<uid>`` with ``minMember`` = ``minAvailable`` and the job's
``queue``. gpufleet has no uids: ``<uid>`` is a UUID made from the job's namespace and name (version 5),
the same on every run.

A pod's end is an event (``updatePod``/``deletePod``): ``PodFailed`` (it failed in place, e.g.
OOMKilled under ``restartPolicy: Never``), ``PodEvicted`` (it was deleted: evicted, preempted, its node
gone), ``TaskCompleted`` (it succeeded and so did every pod of its task). A ``PodFailed`` event carries
the exit code of the pod's first container status (``updatePod``; 0 without a terminated state): the
pod's ``gpufleet.io/exit-code``, 137 for a container OOM-killed; none for a process a GPU or node fault
killed, nor with a deleted pod's ``PodEvicted`` (``deletePod``). The task's policies are looked up
first, then the job's, each list in order: the first whose event (or ``*``) is the event, or whose
``exitCode`` is the failed pod's, decides (``applyPolicies``); an event no policy matches is
``SyncJob``. gpufleet's exit code is the first container's, and the kubelet sorts container statuses
by name: in a task whose first container's name does not sort first, a warning says no ``exitCode``
policy matches.

- ``SyncJob``: a deleted pod is created again under its name; a failed one stays Failed. When every pod
  has ended, the job is ``Completed`` if at least ``minAvailable`` succeeded (and, when the job's
  ``minAvailable`` is the sum of the tasks', each task's), else ``Failed`` (``runningState``).
- ``RestartJob`` / ``RestartTask`` / ``RestartPod``: the job's (task's, pod's) pods are deleted, finished
  ones included, the retry count goes up and they are created again once gone (``Restarting``); when the
  retry count reaches ``maxRetry`` the job is ``Failed`` and its pods are deleted instead
  (``restartingState``).
- ``AbortJob`` / ``CompleteJob`` / ``TerminateJob``: the pods not finished are deleted; the job is
  ``Aborted`` / ``Completed`` / ``Terminated`` once they are gone (``Aborting``...). A finished job
  creates nothing more.

The job's ``Pending``/``Running`` phases are not told apart (the controller hears of its pods' ends
only); ``phase`` is ``Pending`` until the job restarts or ends.

Not modelled, a warning each: ``minSuccess``, ``ttlSecondsAfterFinished``, ``volumes``,
``runningEstimate``, ``networkTopology``, the tasks' ``dependsOn``, ``topologyPolicy``,
``partitionPolicy`` and ``maxRetry`` (the ``TaskFailed`` event), a policy's ``timeout`` (it acts at once),
the events ``PodPending``, ``TaskFailed``, ``Unknown``, ``JobUpdated`` (they never happen here), the
actions ``ResumeJob`` and ``RestartPartition``, and the per-task minimum of the gang (the PodGroup's
``minTaskMember``) where it matters. ``plugins`` (``ssh``, ``svc``, ``env``, ``mpi``, ``pytorch``,
``tensorflow``, ``ray``, ``hcclrank``) give pods hostfiles, Services and environment variables: nothing
scheduled, read silently.
Kueue has no Volcano integration: a Volcano Job is never admitted through Kueue.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from gpufleet.model.node import Node
from gpufleet.model.pod import VOLCANO_GROUP_ANNOTATION, OwnerRef, Pod
from gpufleet.model.pod_failure_policy import ContainerExit
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.workloads import register_kind
from gpufleet.workloads.kind import ManifestReader
from gpufleet.workloads.pytorchjob import invalid, required, unsupported

API = ("batch.volcano.sh", "v1alpha1", "Job")
DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3
DEFAULT_TASK = "default"  # DefaultTaskSpec
PLUGINS = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")
RESTART_POLICIES = ("Always", "OnFailure", "Never")

TASK_INDEX = "volcano.sh/task-index"
TASK_SPEC = "volcano.sh/task-spec"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
TEMPLATE_UID = "volcano.sh/template-uid"
RETRY_COUNT = "volcano.sh/job-retry-count"

# bus/v1alpha1 events and actions, as the webhook accepts them in policies (``policyEventMap``)
ANY, POD_FAILED, POD_EVICTED, TASK_COMPLETED = "*", "PodFailed", "PodEvicted", "TaskCompleted"
EVENTS = (ANY, POD_FAILED, POD_EVICTED, "PodPending", "Unknown", TASK_COMPLETED, "TaskFailed", "JobUpdated")
UNMODELLED_EVENTS = frozenset({"PodPending", "Unknown", "TaskFailed", "JobUpdated"})
SYNC, RESTART_JOB, RESTART_TASK, RESTART_POD = "SyncJob", "RestartJob", "RestartTask", "RestartPod"
ABORT_JOB, COMPLETE_JOB, TERMINATE_JOB = "AbortJob", "CompleteJob", "TerminateJob"
ACTIONS = (
    ABORT_JOB,
    RESTART_JOB,
    RESTART_TASK,
    RESTART_POD,
    "RestartPartition",
    TERMINATE_JOB,
    COMPLETE_JOB,
    "ResumeJob",
)
UNMODELLED_ACTIONS = frozenset({"RestartPartition", "ResumeJob"})
#: an ending action: the phase while its pods go, and the phase once they are gone
ENDINGS = {
    ABORT_JOB: ("Aborting", "Aborted"),
    COMPLETE_JOB: ("Completing", "Completed"),
    TERMINATE_JOB: ("Terminating", "Terminated"),
}
FINISHED = frozenset({"Completed", "Failed", "Aborted", "Terminated"})

_READ = ("tasks", "minAvailable", "schedulerName", "queue", "maxRetry", "policies", "plugins")
_READ_TASK = ("name", "replicas", "template", "minAvailable", "policies")
_READ_POLICY = ("event", "events", "action", "exitCode", "timeout")


@dataclass(frozen=True)
class Policy:
    """A ``LifecyclePolicy``: its ``events`` or its ``exitCode``, and its ``action`` (an exit code's is
    not validated: one the job's state does not know acts as ``SyncJob``)."""

    events: tuple[str, ...]
    action: str
    exit_code: int | None = None


@dataclass(frozen=True)
class Task:
    name: str
    replicas: int
    template: Pod
    min_available: int
    policies: tuple[Policy, ...] = ()
    #: whether the exit code an ``exitCode`` policy reads, its first container status's, is the one
    #: gpufleet gives (its first container's; the kubelet sorts the statuses by container name)
    exit_code_known: bool = True


@dataclass
class VolcanoJob:
    name: str
    namespace: str
    tasks: tuple[Task, ...]
    created: Created
    min_available: int
    queue: str = DEFAULT_QUEUE
    max_retry: int = DEFAULT_MAX_RETRY
    policies: tuple[Policy, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def template(self) -> Pod:
        """The first task's template (an empty one for a job rejected for having no task)."""
        return self.tasks[0].template if self.tasks else Pod(name="", namespace=self.namespace)

    @property
    def uid(self) -> str:
        """gpufleet's stand-in for the job's ``metadata.uid``: a UUID of its namespace and name."""
        path = f"{API[0]}/{API[1]}/namespaces/{self.namespace}/jobs/{self.name}"
        return str(uuid.uuid5(uuid.NAMESPACE_URL, path))

    @property
    def pod_group_name(self) -> str:
        """``generateRelatedPodGroupName``: ``<job>-<uid>``."""
        return f"{self.name}-{self.uid}"


def _policies(manifest: ManifestReader, at: str) -> tuple[Policy, ...]:
    """A ``policies`` list, validated as ``validatePolicies`` validates it."""
    raw = manifest.value(at)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        manifest.error(at, invalid(raw, "must be a list"))
        return ()
    out: list[Policy] = []
    seen: set[str] = set()
    exit_codes: set[int] = set()
    for i, item in enumerate(raw):
        where = f"{at}[{i}]"
        policy = item if isinstance(item, dict) else {}
        manifest.unmodelled([f"{where}.{f}" for f in policy if f not in _READ_POLICY])
        manifest.unmodelled([f"{where}.timeout"])
        events = [str(e) for e in (policy.get("events") or [])]
        if policy.get("event"):
            events.append(str(policy["event"]))
        events = list(dict.fromkeys(events))
        if events and policy.get("exitCode") is not None:
            manifest.error(where, invalid(policy, "must not specify event and exitCode simultaneously"))
            continue
        if not events:
            exit_policy = _exit_code_policy(manifest, where, policy, exit_codes)
            if exit_policy is not None:
                out.append(exit_policy)
            continue
        action = policy.get("action")
        if action not in ACTIONS:
            manifest.error(f"{where}.action", unsupported(action, ACTIONS))
            continue
        for event in events:
            if event not in EVENTS:
                manifest.error(f"{where}.event", unsupported(event, EVENTS))
            elif event in seen:
                manifest.error(f"{where}.event", invalid(event, "duplicate event across different policy"))
            seen.add(event)
        if set(events) & UNMODELLED_EVENTS:
            manifest.unmodelled([f"{where}.event" if policy.get("event") else f"{where}.events"])
        if action in UNMODELLED_ACTIONS:
            manifest.unmodelled([f"{where}.action"])
            continue
        out.append(Policy(tuple(events), str(action)))
    if ANY in seen and len(seen) > 1:
        manifest.error(at, invalid(sorted(seen), "if there's * here, no other policy should be here"))
    return tuple(out)


def _exit_code_policy(
    manifest: ManifestReader, where: str, policy: Mapping[str, object], seen: set[int]
) -> Policy | None:
    """A policy of an ``exitCode`` (``validatePolicies``: required without an event, not 0, not named
    twice in one list; its action is not checked)."""
    code = policy.get("exitCode")
    if code is None:
        manifest.error(where, required("either event and exitCode should be specified"))
        return None
    if not isinstance(code, int) or isinstance(code, bool):
        manifest.error(f"{where}.exitCode", invalid(code, "must be an integer"))
        return None
    if code == 0:
        manifest.error(f"{where}.exitCode", invalid(0, "0 is not a valid error code"))
        return None
    if code in seen:
        manifest.error(f"{where}.exitCode", invalid(code, f"duplicate exitCode {code}"))
        return None
    seen.add(code)
    action = str(policy.get("action") or "")
    if action in UNMODELLED_ACTIONS:
        manifest.unmodelled([f"{where}.action"])
        return None
    return Policy((), action, code)


def _task(manifest: ManifestReader, i: int, defaults: Mapping[str, object]) -> tuple[Task, Created]:
    at = f"tasks[{i}]"
    raw = manifest.value(at)
    fields = raw if isinstance(raw, dict) else {}
    manifest.unmodelled([f"{at}.{f}" for f in fields if f not in _READ_TASK])
    name = str(manifest.value(f"{at}.name") or f"{DEFAULT_TASK}{i}")
    replicas = manifest.count(f"{at}.replicas", 0)
    template, created = manifest.template(f"{at}.template", RESTART_POLICIES, defaults)
    min_available = manifest.count(f"{at}.minAvailable", replicas)
    if min_available > replicas:
        detail = f"'minAvailable' is greater than 'replicas' in task: {name}, job: {manifest.name}"
        manifest.error(f"{at}.minAvailable", invalid(min_available, detail))
    policies = _policies(manifest, f"{at}.policies")
    containers = manifest.value(f"{at}.template.spec.containers")
    names = (
        [str(c.get("name")) for c in containers if isinstance(c, dict)]
        if isinstance(containers, list)
        else []
    )
    exit_code_known = not names or names[0] == min(names)
    task = Task(
        name,
        replicas,
        replace(template, namespace=manifest.namespace),
        min_available,
        policies,
        exit_code_known,
    )
    return task, created


def read_volcano_job(manifest: ManifestReader) -> VolcanoJob:
    """A ``batch.volcano.sh/v1alpha1`` Job, defaulted and validated as Volcano's webhooks do."""
    manifest.unmodelled(
        ["minSuccess", "ttlSecondsAfterFinished", "volumes", "runningEstimate", "networkTopology"]
    )
    scheduler = manifest.value("schedulerName") or DEFAULT_SCHEDULER
    defaults: dict[str, object] = {"schedulerName": scheduler}
    priority_class = manifest.value("priorityClassName")
    if priority_class:
        defaults["priorityClassName"] = priority_class
    raw_tasks = manifest.value("tasks")
    tasks: list[Task] = []
    created = Created()
    if not isinstance(raw_tasks, list) or not raw_tasks:
        manifest.error("tasks", required("No task specified in job spec"))
    else:
        read = [_task(manifest, i, defaults) for i in range(len(raw_tasks))]
        tasks = [t for t, _ in read]
        created = min((c for _, c in read), key=lambda c: c.submit_at_s)
        names = [t.name for t in tasks]
        for i, name in enumerate(names):
            if name in names[:i]:
                manifest.error(f"tasks[{i}].name", invalid(name, f"duplicated task name {name}"))
    total = sum(t.replicas for t in tasks)
    task_min_total = sum(t.min_available for t in tasks)
    min_available = manifest.count("minAvailable", 0) or task_min_total
    if min_available > total:
        detail = "job 'minAvailable' should not be greater than total replicas in tasks"
        manifest.error("minAvailable", invalid(min_available, detail))
    if min_available >= task_min_total:  # CheckTaskValid: the per-task minimums apply then
        manifest.unmodelled(
            [f"tasks[{i}].minAvailable" for i, t in enumerate(tasks) if t.min_available < t.replicas]
        )
    queue = manifest.value("queue") or DEFAULT_QUEUE
    max_retry = manifest.count("maxRetry", 0) or DEFAULT_MAX_RETRY
    plugins = manifest.value("plugins")
    for name in plugins if isinstance(plugins, dict) else {}:
        if name not in PLUGINS:
            manifest.error(f"plugins.{name}", unsupported(name, PLUGINS))
    policies = _policies(manifest, "policies")
    exit_policies = any(p.exit_code is not None for p in policies)
    for i, task in enumerate(tasks):
        if not task.exit_code_known and (
            exit_policies or any(p.exit_code is not None for p in task.policies)
        ):
            manifest.warn(
                f"tasks[{i}].template.spec.containers",
                "an exitCode policy reads the first container status, of the container whose name sorts "
                "first (the kubelet sorts them by name); gpufleet's exit codes (gpufleet.io/exit-code, an "
                "OOM kill) are the first container's: no exitCode policy matches this task's failures",
            )
    return VolcanoJob(
        manifest.name,
        manifest.namespace,
        tuple(tasks),
        created,
        min_available,
        str(queue),
        max_retry,
        policies,
    )


Slot = tuple[str, int]  # (task name, index)


@register_kind(VolcanoJob, api=API, read=read_volcano_job)
class VolcanoJobController:
    """Volcano's job controller for one Job: one pod per task index; a pod's end is an event its
    policies answer (``kind.HearsDeletions``; ``kind.ReadsFailedPods``: a failed pod's exit code),
    deleting pods in answer (``kind.DeletesPods``)."""

    kind: ClassVar[str] = "Job"
    api_group: ClassVar[str] = API[0]
    per_node: ClassVar[bool] = False

    def __init__(self, job: VolcanoJob) -> None:
        self.job = job
        self.tasks = {t.name: t for t in job.tasks}
        self.active: dict[str, Slot] = {}  # pod key -> its slot
        self.ended: dict[Slot, bool] = {}  # slots whose pod ended and is kept: succeeded?
        self.killing: dict[str, Slot] = {}  # pods it deleted that are not gone yet
        self._kill: list[str] = []
        self._deleted: str | None = None  # the pod about to be reported finished was deleted
        #: pod key -> its first container's exit code, told by ``failed_with`` (0: none)
        self._exit_codes: dict[str, int] = {}
        self.retry_count = 0
        self.version = 0  # Status.Version: bumped when the whole job is killed
        #: Pending, Restarting, Aborting, Completing, Terminating, Completed, Failed, Aborted, Terminated
        self.phase = "Pending"

    @property
    def key(self) -> str:
        return self.job.key

    def _pod(self, task: Task, index: int) -> Pod:
        job = self.job
        labels = {
            TASK_INDEX: str(index),
            JOB_NAME: job.name,
            TASK_SPEC: task.name,
            JOB_NAMESPACE: job.namespace,
            QUEUE_NAME: job.queue,
        }
        pod = task.template.stamped(f"{job.name}-{task.name}-{index}", OwnerRef(self.kind, job.name), labels)
        annotations = {
            **pod.annotations,
            TASK_INDEX: str(index),
            TASK_SPEC: task.name,
            VOLCANO_GROUP_ANNOTATION: job.pod_group_name,
            JOB_NAME: job.name,
            QUEUE_NAME: job.queue,
            JOB_VERSION: str(self.version),
            TEMPLATE_UID: f"{job.name}-{task.name}",
            RETRY_COUNT: str(self.retry_count),
        }
        pod = replace(pod, namespace=job.namespace, annotations=annotations)
        self.active[pod.key] = (task.name, index)
        return pod

    def wanted(self, nodes: Sequence[Node] = ()) -> list[Pod]:
        """A pod for each task index that has none (``syncJob``), unless the job is ending."""
        if self.phase in FINISHED or self.phase in {p for p, _ in ENDINGS.values()}:
            return []
        if self.phase == "Restarting" and not self.killing:
            self.phase = "Pending"
        taken = set(self.active.values()) | set(self.killing.values()) | set(self.ended)
        return [
            self._pod(task, i)
            for task in self.job.tasks
            for i in range(task.replicas)
            if (task.name, i) not in taken
        ]

    def pod_groups(self) -> list[PodGroup]:
        job = self.job
        return [PodGroup(job.pod_group_name, job.namespace, job.min_available, None, job.created, job.queue)]

    # -- a pod ended -------------------------------------------------------------------------
    def deleted(self, pod: Pod) -> None:
        self._deleted = pod.key

    def failed_with(self, pod: Pod, reason: str | None, terminated: ContainerExit | None = None) -> None:
        """One of its pods ended Failed (``kind.ReadsFailedPods``; told right before ``finished``): the
        exit code of its ``PodFailed`` event (``updatePod``: its first container status's terminated
        state, else 0)."""
        code = None if terminated is None else terminated.exit_code
        self._exit_codes[pod.key] = 0 if code is None else code

    def doomed(self) -> list[tuple[str, str]]:
        """The pods its last action deletes (``kind.DeletesPods``)."""
        out, self._kill = self._kill, []
        return [(key, "Deleted") for key in out]

    def finished(self, pod: Pod, succeeded: bool) -> bool:
        deleted, self._deleted = self._deleted == pod.key, None
        exit_code = self._exit_codes.pop(pod.key, 0)
        if pod.key in self.killing:  # one it deleted is gone
            del self.killing[pod.key]
            if not self.killing and self.phase in {p for p, _ in ENDINGS.values()}:
                self.phase = next(done for going, done in ENDINGS.values() if going == self.phase)
            return self.phase == "Restarting"
        slot = self.active.pop(pod.key, None)
        if slot is None or self.phase in FINISHED:
            return False
        task = self.tasks[slot[0]]
        if succeeded:
            self.ended[slot] = True
            done = all(self.ended.get((task.name, i)) for i in range(task.replicas))
            event: str | None = TASK_COMPLETED if done else None
        elif deleted:
            event = POD_EVICTED
        else:
            self.ended[slot] = False
            event = POD_FAILED
        failed_code = exit_code if event == POD_FAILED and task.exit_code_known else 0
        action = self._action(task, event, failed_code)
        if action == RESTART_JOB:
            self._restart(list(self.tasks), whole_job=True)
        elif action == RESTART_TASK:
            self._restart([task.name])
        elif action == RESTART_POD:
            self._restart([task.name], only=slot)
        elif action in ENDINGS:
            self._end(*ENDINGS[action])
        else:
            self._sync()
        return self.phase not in FINISHED or bool(self._kill)  # a reconcile deletes what it kills

    def _action(self, task: Task, event: str | None, exit_code: int) -> str:
        """``applyPolicies``: the task's policies first, then the job's, in order; the first whose event
        (``*`` any) or ``exitCode`` (a ``PodFailed`` event's; 0, no code, matches none) matches acts."""
        if event is None:
            return SYNC
        for policy in (*task.policies, *self.job.policies):
            if (
                event in policy.events
                or ANY in policy.events
                or (exit_code and policy.exit_code == exit_code)
            ):
                return policy.action
        return SYNC

    def _kill_pods(self, keep: set[Slot] | None = None, scope: set[Slot] | None = None) -> None:
        for key, slot in sorted(self.active.items()):
            if (scope is None or slot in scope) and (keep is None or slot not in keep):
                del self.active[key]
                self.killing[key] = slot
                self._kill.append(key)

    def _restart(self, task_names: list[str], whole_job: bool = False, only: Slot | None = None) -> None:
        """``killJob``/``killTarget`` with ``PodRetainPhaseNone``, then ``Restarting``; at ``maxRetry``
        the job fails instead (``restartingUpdateStatus``)."""
        scope = {(name, i) for name in task_names for i in range(self.tasks[name].replicas)}
        if only is not None:
            scope = {only}
        self.retry_count += 1
        if whole_job:
            self.version += 1
        for slot in scope:
            self.ended.pop(slot, None)
        if self.retry_count >= self.job.max_retry:
            self._fail()
            return
        self._kill_pods(scope=scope)
        self.phase = "Restarting"

    def _fail(self) -> None:
        """``Failed``: a finished job's pods that still run are deleted (``finishedState``)."""
        self.phase = "Failed"
        self._kill_pods()

    def _end(self, going: str, done: str) -> None:
        """``killJob`` with ``PodRetainPhaseSoft``: the pods not finished go; then the final phase."""
        self._kill_pods()
        self.phase = going if self.killing else done

    def _sync(self) -> None:
        """``runningState``'s status update: once every pod has ended, Completed or Failed."""
        job = self.job
        if len(self.ended) < sum(t.replicas for t in job.tasks) or self.active or self.killing:
            return
        succeeded = {
            name: sum(1 for (n, _), ok in self.ended.items() if ok and n == name) for name in self.tasks
        }
        if job.min_available >= sum(t.min_available for t in job.tasks) and any(
            succeeded[t.name] < t.min_available for t in job.tasks
        ):
            self.phase = "Failed"
        else:
            self.phase = "Completed" if sum(succeeded.values()) >= job.min_available else "Failed"

    def node_added(self, node: Node) -> list[Pod]:
        return []

    def suspended(self, pod: Pod) -> None:
        self.active.pop(pod.key, None)
