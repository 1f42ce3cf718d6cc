"""Workloads whose controllers create pods: ``batch/v1`` Job, ``apps/v1`` Deployment and DaemonSet.

Defaults follow ``pkg/apis/batch/v1/defaults.go`` (without ``parallelism`` and
``completions`` both are 1; ``parallelism`` alone means a work queue, ``completions``
unset; ``backoffLimit`` 6) and ``pkg/apis/apps/v1/defaults.go`` (``replicas`` 1).
Validation follows ``pkg/apis/batch/validation`` (a Job's pods restart ``OnFailure`` or
``Never``; counts are not negative; ``Indexed`` needs ``completions``; ``backoffLimitPerIndex`` and
``maxFailedIndexes`` only for an Indexed Job, ``backoffLimit`` then defaulting to MaxInt32) and
``pkg/apis/apps/validation`` (pods restart ``Always``; the selector is not empty and
matches the template's labels); a Deployment's ``strategy`` and ``minReadySeconds`` are read by
``kube.deployment_strategy``. A Job's ``podFailurePolicy`` is read by ``kube.pod_failure_policy``; its
``podReplacementPolicy`` (``Failed`` or ``TerminatingOrFailed``, only ``Failed`` with a ``podFailurePolicy``:
``validatePodReplacementPolicy``) and ``ttlSecondsAfterFinished`` (not negative; the TTL-after-finished
controller, ``workloads.ttl_after_finished``) are modelled, ``managedBy`` is not;
its ``activeDeadlineSeconds`` (not negative) is modelled but for a Job Kueue manages; its ``suspend`` is
(``Job.suspend``: Kueue's while Kueue manages it, else for good; a KEDA ScaledJob's ``jobTargetRef``'s is
not). A Job being deleted (``metadata.deletionTimestamp``) is read (``Job.deleting``) with how the garbage
collector deletes it, from its ``metadata.finalizers`` (``Job.gc``, ``model.job_deletion``), and a warning
that says what is modelled of it. The template
is a ``Pod`` named ``""``; the workload's own ``gpufleet.io/submit-at`` sets its creation time, else
its template's does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from gpufleet.kube import deployment_strategy, objects, pod_annotations, pods
from gpufleet.kube.kueue_job import partial_admission
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.pod_failure_policy import pod_failure_policy
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Reporter, invalid, required, unsupported
from gpufleet.kube.success_policy import success_policy
from gpufleet.model.job_deletion import deletion, describe
from gpufleet.model.kueue import QUEUE_NAME_LABEL
from gpufleet.model.pod import Pod, Requirement
from gpufleet.model.pod_failure_policy import PodFailurePolicy
from gpufleet.model.workloads import (
    REPLACE_FAILED,
    REPLACE_TERMINATING_OR_FAILED,
    Created,
    DaemonSet,
    Deployment,
    Job,
    Workload,
)
from gpufleet.workloads.kind import COMPLETING_RESTART_POLICIES, CONTROLLER_RESTART_POLICIES, Reader

DEFAULT_BACKOFF_LIMIT = 6
MAX_INT32 = 2**31 - 1
#: ``pkg/apis/batch/validation``: ``maxFailedIndexesForIndexedJob``, ``completionsSoftLimit``,
#: ``parallelismLimitForHighCompletions``, ``maxFailedIndexesLimitForHighCompletions``
MAX_FAILED_INDEXES, COMPLETIONS_SOFT_LIMIT = 100_000, 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS, MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS = 10_000, 10_000
COMPLETION_MODES = ("NonIndexed", "Indexed")

#: Fields (beside pod template fields) that change when pods are created or stop, not modelled.
_UNMODELLED_JOB = (
    "suspend",
    "managedBy",
)
_UNMODELLED_DAEMONSET = ("updateStrategy",)
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def job(meta: Meta, body: Mapping[str, Any], report: Reporter, priorities: Priorities, order: int) -> Job:
    """A ``batch/v1`` Job, with Kueue's partial-admission annotations where Kueue manages it, and its
    ``spec.suspend``."""
    spec = mapping(body.get("spec"))
    read = job_from_spec(meta, spec, report, "spec", priorities, order, reads_suspend=True)
    indexed = spec.get("completionMode") == "Indexed"
    managed = QUEUE_NAME_LABEL in meta.labels
    partial = partial_admission(meta, report, managed, read.parallelism, read.completions, indexed)
    metadata = mapping(body.get("metadata"))
    deleting = metadata.get("deletionTimestamp") is not None
    finalizers = metadata.get("finalizers")
    gc = deletion([str(f) for f in finalizers] if isinstance(finalizers, list) else []) if deleting else None
    if gc is not None:
        report.at("metadata").warn("deletionTimestamp", f"the Job is being deleted: {describe(gc)}")
    return replace(
        read,
        min_parallelism=partial.min_parallelism,
        completions_equal_parallelism=partial.completions_equal_parallelism,
        suspend=spec.get("suspend") is True,
        deleting=deleting,
        gc=gc,
    )


def job_from_spec(
    meta: Meta,
    spec: Mapping[str, Any],
    report: Reporter,
    spec_path: str,
    priorities: Priorities,
    order: int,
    reads_suspend: bool = False,
) -> Job:
    """A Job named ``meta.name`` from a ``JobSpec`` at ``spec_path`` of ``report``'s document.

    ``meta`` is the metadata of the object that holds the spec (a Job, or a KEDA ScaledJob whose
    ``spec.jobTargetRef`` is a JobSpec); only its ``gpufleet.io/submit-at`` applies. ``reads_suspend``: the
    caller reads ``suspend`` (a Job); else it is a warning but where Kueue manages the Job.
    """
    at_spec = report.at(spec_path)
    # a Job Kueue manages is created suspended and unsuspended on admission: that is modelled
    kueue = QUEUE_NAME_LABEL in meta.labels
    unmodelled = tuple(f for f in _UNMODELLED_JOB if not ((kueue or reads_suspend) and f == "suspend"))
    template, created = _common(
        meta, spec, report, at_spec, priorities, order, COMPLETING_RESTART_POLICIES, unmodelled
    )
    given = _set(spec)
    parallelism = _count(spec, "parallelism", 1, at_spec)
    completions: int | None = None if "parallelism" in given else 1  # parallelism alone: a work queue
    if "completions" in given:
        completions = _count(spec, "completions", 1, at_spec)
    mode = spec.get("completionMode") or COMPLETION_MODES[0]
    if mode not in COMPLETION_MODES:
        at_spec.error("completionMode", unsupported(mode, COMPLETION_MODES))
    elif mode == "Indexed" and completions is None:
        at_spec.error("completions", required("when completion mode is Indexed"))
    indexed = mode == "Indexed"
    succeeded_when = success_policy(spec, at_spec, indexed, completions)
    per_index, max_failed = _per_index(spec, at_spec, indexed, completions)
    # SetDefaults_Job: backoffLimit defaults to MaxInt32 with backoffLimitPerIndex
    default_backoff = DEFAULT_BACKOFF_LIMIT if per_index is None else MAX_INT32
    backoff_limit = _count(spec, "backoffLimit", default_backoff, at_spec)
    policy = pod_failure_policy(spec, at_spec)
    deadline = None
    if isinstance(spec.get("activeDeadlineSeconds"), int):  # under Kueue: from each admission
        deadline = float(_count(spec, "activeDeadlineSeconds", 0, at_spec))
    ttl = None
    if isinstance(spec.get("ttlSecondsAfterFinished"), int):  # ValidateNonnegativeField
        ttl = float(_count(spec, "ttlSecondsAfterFinished", 0, at_spec))
    return Job(
        meta.name,
        meta.namespace,
        template,
        parallelism,
        completions,
        backoff_limit,
        created,
        pod_failure_policy=policy,
        active_deadline_s=deadline,
        indexed=indexed,
        success_policy=succeeded_when,
        backoff_limit_per_index=per_index,
        max_failed_indexes=max_failed,
        pod_replacement_policy=pod_replacement_policy(spec, at_spec, policy),
        ttl_after_finished_s=ttl,
    )


def pod_replacement_policy(
    spec: Mapping[str, Any], at_spec: Reporter, policy: PodFailurePolicy | None
) -> str | None:
    """``spec.podReplacementPolicy`` as ``validatePodReplacementPolicy`` checks it: ``Failed`` or
    ``TerminatingOrFailed``, only ``Failed`` with a ``podFailurePolicy``; None when unset
    (``SetDefaults_Job``: ``Failed`` with a ``podFailurePolicy``, else ``TerminatingOrFailed``;
    ``Job.only_replace_failed_pods``)."""
    value = spec.get("podReplacementPolicy")
    if value is None:
        return None
    allowed = [REPLACE_FAILED] if policy is not None else [REPLACE_FAILED, REPLACE_TERMINATING_OR_FAILED]
    if value not in allowed:
        at_spec.error("podReplacementPolicy", unsupported(value, allowed))
        return None
    return str(value)


def _per_index(
    spec: Mapping[str, Any], at_spec: Reporter, indexed: bool, completions: int | None
) -> tuple[int | None, int | None]:
    """``backoffLimitPerIndex`` and ``maxFailedIndexes`` as ``validateJobSpec`` checks them: not negative,
    ``maxFailedIndexes`` only with ``backoffLimitPerIndex``, both only in Indexed mode, ``maxFailedIndexes``
    at most ``completions`` and 10^5, and required (at most 10^4, ``parallelism`` too) above 10^5
    completions."""
    per_index = _count(spec, "backoffLimitPerIndex", -1, at_spec) if "backoffLimitPerIndex" in spec else -1
    max_failed = _count(spec, "maxFailedIndexes", -1, at_spec) if "maxFailedIndexes" in spec else -1
    has_per_index = isinstance(spec.get("backoffLimitPerIndex"), int)
    has_max = isinstance(spec.get("maxFailedIndexes"), int)
    if has_max and not has_per_index:
        at_spec.error("backoffLimitPerIndex", required("when maxFailedIndexes is specified"))
    if indexed:
        if completions is not None and has_max and max_failed > completions:
            at_spec.error(
                "maxFailedIndexes", invalid(max_failed, "must be less than or equal to completions")
            )
        if has_max and max_failed > MAX_FAILED_INDEXES:
            at_spec.error(
                "maxFailedIndexes", invalid(max_failed, f"must be less than or equal to {MAX_FAILED_INDEXES}")
            )
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and has_per_index:
            high = (
                f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            )
            if not has_max:
                at_spec.error(
                    "maxFailedIndexes",
                    required(f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"),
                )
            parallelism = spec.get("parallelism")
            if isinstance(parallelism, int) and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
                limit = PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS
                at_spec.error(
                    "parallelism", invalid(parallelism, f"must be less than or equal to {limit} {high}")
                )
            if has_max and max_failed > MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS:
                limit = MAX_FAILED_INDEXES_FOR_HIGH_COMPLETIONS
                at_spec.error(
                    "maxFailedIndexes", invalid(max_failed, f"must be less than or equal to {limit} {high}")
                )
    else:
        if has_per_index:
            at_spec.error("backoffLimitPerIndex", invalid(per_index, "requires indexed completion mode"))
        if has_max:
            at_spec.error("maxFailedIndexes", invalid(max_failed, "requires indexed completion mode"))
    return (per_index if has_per_index else None), (max_failed if has_max else None)


def deployment(
    meta: Meta, body: Mapping[str, Any], report: Reporter, priorities: Priorities, order: int
) -> Deployment:
    restart = CONTROLLER_RESTART_POLICIES
    spec = mapping(body.get("spec"))
    at_spec = report.at("spec")
    template, created = _common(meta, spec, report, at_spec, priorities, order, restart, ())
    check_selector(body, report, "deployment")
    replicas = _count(spec, "replicas", 1, at_spec)
    read_strategy = deployment_strategy.strategy(spec, at_spec)
    min_ready = deployment_strategy.min_ready_seconds(spec, at_spec)
    return Deployment(meta.name, meta.namespace, template, replicas, created, read_strategy, min_ready)


def daemonset(
    meta: Meta, body: Mapping[str, Any], report: Reporter, priorities: Priorities, order: int
) -> DaemonSet:
    restart = CONTROLLER_RESTART_POLICIES
    spec = mapping(body.get("spec"))
    template, created = _common(
        meta, spec, report, report.at("spec"), priorities, order, restart, _UNMODELLED_DAEMONSET
    )
    check_selector(body, report, "daemonset")
    return DaemonSet(meta.name, meta.namespace, template, created)


def _set(spec: Mapping[str, Any]) -> set[str]:
    """Fields given a value (null reads as unset, as a Go pointer)."""
    return {k for k, v in spec.items() if v is not None}


def _common(
    meta: Meta,
    spec: Mapping[str, Any],
    report: Reporter,
    at_spec: Reporter,
    priorities: Priorities,
    order: int,
    restart_policies: tuple[str, ...],
    unmodelled: tuple[str, ...],
) -> tuple[Pod, Created]:
    """The template and the creation of a workload, after the checks every workload shares.

    ``report`` is at the document (its ``metadata``), ``at_spec`` at the workload spec.
    """
    at_spec.unmodelled_fields(spec, unmodelled)
    return pod_template(meta, spec, "template", report, at_spec, priorities, order, restart_policies)


def pod_template(
    meta: Meta,
    spec: Mapping[str, Any],
    path: str,
    report: Reporter,
    at_spec: Reporter,
    priorities: Priorities,
    order: int,
    restart_policies: tuple[str, ...],
    keys: frozenset[str] = pod_annotations.WORKLOAD_KEYS,
    restart_policy: str | None = None,
) -> tuple[Pod, Created]:
    """The pod template at ``spec.<path>`` (dotted) and when the workload is created: its own
    ``gpufleet.io/submit-at``, else its template's. ``keys``: the annotations the workload's own
    metadata may carry. ``restart_policy``: the pod ``restartPolicy`` the controller sets over the
    template's (a training operator's replica ``restartPolicy``), which its pods are read with."""
    own = pod_annotations.read(meta.annotations, report.at("metadata"), keys)
    template = _at(spec, path)
    template_spec = mapping(template.get("spec"))
    at_template = at_spec.at(path)
    own_policy = template_spec.get("restartPolicy") or pods.RESTART_POLICIES[0]
    if own_policy not in restart_policies:
        at_template.error("spec.restartPolicy", unsupported(own_policy, restart_policies))
    if restart_policy is not None:
        template_spec = {**template_spec, "restartPolicy": restart_policy}
    template_meta = replace(objects.meta(template, namespaced=False), name="", namespace=meta.namespace)
    pod = pods.pod(template_meta, template_spec, at_template, priorities)
    submit_at_s = pod_annotations.number(own, pod_annotations.SUBMIT_AT)
    return pod, Created(pod.behavior.submit_at_s if submit_at_s is None else submit_at_s, order)


def _at(spec: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The object at a dotted ``path`` below ``spec``; a part may index a list (``tasks[0]``)."""
    value: Any = spec
    for part in path.split("."):
        value = _item(mapping(value), part)
    return mapping(value)


def _item(parent: Mapping[str, Any], part: str) -> Any:
    """``parent[part]``, where ``part`` may index a list (``tasks[0]``); None when absent."""
    name, _, index = part.partition("[")
    value = parent.get(name)
    if not index:
        return value
    position = int(index.rstrip("]"))
    return value[position] if isinstance(value, list) and 0 <= position < len(value) else None


def _top(path: str) -> str:
    """The ``spec`` field a dotted path starts at (``tasks`` for ``tasks[0].template``)."""
    return path.split(".", 1)[0].split("[", 1)[0]


def _count(spec: Mapping[str, Any], field: str, default: int, report: Reporter) -> int:
    """A count that must not be negative; ``default`` when absent. ``report`` is at the spec."""
    value = spec.get(field)
    if not isinstance(value, int):
        return default
    if value < 0:
        report.error(field, invalid(value, "must be greater than or equal to 0"))
    return value


def check_selector(body: Mapping[str, Any], report: Reporter, what: str) -> None:
    spec = mapping(body.get("spec"))
    selector = mapping(spec.get("selector"))
    match_labels = mapping(selector.get("matchLabels"))
    expressions = items(selector.get("matchExpressions"))
    if not match_labels and not expressions:
        report.error("spec.selector", invalid(selector, f"empty selector is invalid for {what}"))
        return
    requirements = [Requirement(str(k), "In", (str(v),)) for k, v in match_labels.items()]
    for expression in expressions:
        operator, values = expression.get("operator"), tuple(expression.get("values") or ())
        if operator not in _SELECTOR_OPERATORS or (not values) == (operator in ("In", "NotIn")):
            report.error("spec.selector", invalid(selector, "invalid label selector"))
            return
        requirements.append(Requirement(str(expression.get("key") or ""), str(operator), values))
    labels = objects.meta(mapping(spec.get("template")), namespaced=False).labels
    if not all(r.matches(labels) for r in requirements):
        report.error(
            "spec.template.metadata.labels", invalid(labels, "`selector` does not match template `labels`")
        )


class KindReader:
    """A manifest of a kind registered in ``gpufleet.workloads``, as its reader sees it
    (``workloads.kind.ManifestReader``). It keeps the pod templates read (for the checks between
    documents) and which ``spec`` fields were read: any other field given is a warning."""

    def __init__(
        self,
        meta: Meta,
        body: Mapping[str, Any],
        report: Reporter,
        priorities: Priorities,
        order: int,
        annotations: frozenset[str] = frozenset(),
    ):
        self._meta, self._report, self._priorities, self._order = meta, report, priorities, order
        self._keys = pod_annotations.WORKLOAD_KEYS | annotations
        self._spec = mapping(body.get("spec"))
        self._at_spec = report.at("spec")
        self._read: set[str] = set()
        self.templates: list[tuple[str, Pod]] = []  # (path from the document, template)

    @property
    def name(self) -> str:
        return self._meta.name

    @property
    def namespace(self) -> str:
        return self._meta.namespace

    @property
    def annotations(self) -> Mapping[str, str]:
        return self._meta.annotations

    def metadata_error(self, path: str, message: str) -> None:
        self._report.error(f"metadata.{path}", message)

    @property
    def labels(self) -> Mapping[str, str]:
        return self._meta.labels

    def unmodelled_label(self, key: str, note: str = "") -> None:
        self._report.at("metadata").not_modelled(f"labels.{key}", note=note)

    def annotation(self, key: str) -> object:
        text = self._meta.annotations.get(key)
        return None if text is None or key not in self._keys else pod_annotations.parsed(key, text)

    def value(self, path: str) -> object:
        self._read.add(_top(path))
        head, _, field = path.rpartition(".")
        return _item(_at(self._spec, head) if head else self._spec, field)

    def template(
        self,
        path: str,
        restart_policies: tuple[str, ...],
        defaults: Mapping[str, object] | None = None,
        restart_policy: str | None = None,
    ) -> tuple[Pod, Created]:
        if not isinstance(self.value(path), dict):
            self._at_spec.error(path, required("a pod template is required"))
        spec, at_spec, where = self._spec, self._at_spec, path
        if defaults:  # fields the controller sets on the pods where the template leaves them
            head, _, where = path.rpartition(".")
            template = dict(_at(spec, path))
            template["spec"] = {**defaults, **{k: v for k, v in mapping(template.get("spec")).items() if v}}
            spec, at_spec = {where: template}, at_spec.at(head) if head else at_spec
        pod, created = pod_template(
            self._meta,
            spec,
            where,
            self._report,
            at_spec,
            self._priorities,
            self._order,
            restart_policies,
            self._keys,
            restart_policy,
        )
        self.templates.append((f"spec.{path}", pod))
        return pod, created

    def count(self, path: str, default: int) -> int:
        value = self.value(path)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool):
            self._at_spec.error(path, invalid(value, "must be an integer"))
            return default
        if value < 0:
            self._at_spec.error(path, invalid(value, "must be greater than or equal to 0"))
        return value

    def pod_failure_policy(self, path: str, restart_policy: str | None = None) -> PodFailurePolicy | None:
        spec = _at(self._spec, path)
        self._read.add(_top(path))
        template = mapping(spec.get("template"))
        pod_spec = mapping(template.get("spec"))
        if restart_policy is not None and not pod_spec.get("restartPolicy"):
            pod_spec = {**pod_spec, "restartPolicy": restart_policy}
            spec = {**spec, "template": {**template, "spec": pod_spec}}
        return pod_failure_policy(spec, self._at_spec.at(path))

    def per_index(self, path: str, indexed: bool, completions: int | None) -> tuple[int | None, int | None]:
        self._read.add(_top(path))
        return _per_index(_at(self._spec, path), self._at_spec.at(path), indexed, completions)

    def pod_replacement_policy(self, path: str, failure_policy: PodFailurePolicy | None) -> str | None:
        self._read.add(_top(path))
        return pod_replacement_policy(_at(self._spec, path), self._at_spec.at(path), failure_policy)

    def unmodelled(self, fields: Sequence[str], note: str = "") -> None:
        self._read.update(_top(f) for f in fields)
        for field in fields:  # a dotted field (``runPolicy.ttlSecondsAfterFinished``) is looked up below spec
            head, _, last = field.rpartition(".")
            self._at_spec.unmodelled_fields(
                _at(self._spec, head) if head else self._spec, (last,), head, note=note
            )

    def error(self, path: str, message: str) -> None:
        self._at_spec.error(path, message)

    def warn(self, path: str, message: str) -> None:
        self._at_spec.warn(path, message)

    def selector(self, what: str) -> None:
        self._read.add("selector")
        check_selector({"spec": self._spec}, self._report, what)

    def unread(self) -> None:
        """The ``spec`` fields its reader did not look at: not modelled, a warning each."""
        self._at_spec.unmodelled_fields(self._spec, sorted(set(self._spec) - self._read))


def registered_kind(
    read: Reader,
    meta: Meta,
    body: Mapping[str, Any],
    report: Reporter,
    priorities: Priorities,
    order: int,
    annotations: frozenset[str] = frozenset(),
) -> tuple[Workload, list[tuple[str, Pod]]]:
    """A manifest of a registered kind read by its own reader; with the templates it read."""
    reader = KindReader(meta, body, report, priorities, order, annotations)
    workload = read(reader)
    reader.unread()
    return workload, reader.templates
