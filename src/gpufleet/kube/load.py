"""Loading a scenario: manifests in, a ``Scenario`` out, or every problem at once.

Each document is classified by ``apiVersion``/``kind`` (``kinds``), checked against its
schema (``schema_check`` for standard kinds; for the others, ObjectMeta's schema plus a
strict model of their spec), then converted. PriorityClasses are converted first, since a
pod may name a class defined in a later file, as the API server resolves classes when the
pod is admitted. An object with ``metadata.generateName`` and no name is named as the API server
names it, deterministically (``model.generated_names``). An object defined twice (same kind,
namespace and name) is an error on the second definition, as the API server answers
``AlreadyExists``. A Pod's ``metadata.creationTimestamp`` is kept (``BarePod.created_unix``), and a workload's
and a PodGroup's (``Scenario.creation_timestamps``); one that is no RFC 3339 time is an error, as a Node's
times are. Nothing stops at the first problem: ``ScenarioError`` lists them all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from gpufleet.collector import collector_paused
from gpufleet.kube import (
    adoption,
    disruption_budgets,
    dra,
    dra_versions,
    fault_model,
    gpufleet_kinds,
    hpa,
    hpa_v1,
    kai,
    keda,
    kinds,
    kueue,
    kueue_config,
    kueue_workloads,
    nodes,
    objects,
    pod_affinity,
    pod_deletion,
    pod_groups,
    pod_times,
    pods,
    priorities,
    provisioning_requests,
    rollout,
    scale_budget,
    scheduler_records,
    schema_check,
    training_runtimes,
    volcano,
    workloads,
)
from gpufleet.kube.documents import Document, read_documents
from gpufleet.kube.kinds import Handling, Kind
from gpufleet.kube.objects import Meta, mapping
from gpufleet.kube.pod_annotations import CONSUMES, DURATION, PREFIX
from gpufleet.kube.priority_expander import is_priority_config, parse_priorities
from gpufleet.kube.problems import (
    Location,
    Problems,
    Reporter,
    ScenarioError,
    duplicate,
    invalid,
    join,
    required,
    unsupported,
)
from gpufleet.kube.scheduler_config import scheduler_config
from gpufleet.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from gpufleet.model.generated_names import unique_name
from gpufleet.model.keda import ResourceScaler
from gpufleet.model.kueue import QUEUE_NAME_LABEL
from gpufleet.model.load import QueueFeed
from gpufleet.model.owned import FINISHED_PHASES
from gpufleet.model.pod import POD_GROUP_LABEL, VOLCANO_GROUP_ANNOTATION, Pod
from gpufleet.model.resources import Resources
from gpufleet.model.scenario import BarePod, Scenario, stamp_key
from gpufleet.model.workloads import Created, Job, PodGroup, Workload
from gpufleet.scheduling.plugins.volcano import DEFAULT_QUEUE, VOLCANO_SCHEDULER, volcano_scheduler
from gpufleet.workloads import controller_for, manifest_readers, workload_annotations
from gpufleet.workloads.jobset import JobSet
from gpufleet.workloads.kind import Reader, Scalable
from gpufleet.workloads.mpijob import MPIJob
from gpufleet.workloads.pytorchjob import PyTorchJob
from gpufleet.workloads.rayjob import RayJob
from gpufleet.workloads.replicaset import API as REPLICA_SET
from gpufleet.workloads.statefulset import API as STATEFUL_SET
from gpufleet.workloads.trainjob import TrainJob
from gpufleet.workloads.volcano_job import API as VOLCANO_JOB
from gpufleet.workloads.volcano_job import VolcanoJob

POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
#: Top-level fields of kinds outside the Kubernetes schemas.
_ENVELOPE = ("apiVersion", "kind", "metadata", "spec")
_EXTRA_TOP_LEVEL = {
    kinds.POD_GROUP: ("status",),
    kinds.SCALED_OBJECT: ("status",),
    kinds.SCALED_JOB: ("status",),
    **{gvk: ("status",) for gvk in kinds.KUEUE if gvk[2] != "WorkloadPriorityClass"},
    **{gvk: ("value", "description") for gvk in kinds.KUEUE if gvk[2] == "WorkloadPriorityClass"},
    kinds.KAI_QUEUE: ("status",),
    kinds.VOLCANO_POD_GROUP: ("status",),
    kinds.VOLCANO_QUEUE: ("status",),
}
#: The kinds whose documents adoption reads (pods and the controllers that own them: ``adoption``).
_ADOPTION = frozenset({kinds.POD, kinds.JOB, kinds.DEPLOYMENT, kinds.DAEMONSET, REPLICA_SET, STATEFUL_SET})
#: The API groups of Volcano's objects: any of them installs Volcano (``_install_volcano``).
VOLCANO_GROUPS = frozenset({kinds.VOLCANO_QUEUE[0], VOLCANO_JOB[0]})
#: Kinds whose ``metadata.name`` may be left out.
_UNNAMED = frozenset({kinds.SCHEDULER_CONFIG, kinds.SIMULATION, *kinds.KUEUE_CONFIG})
#: Configuration files, decoded whole by their own strict model (no envelope, no metadata).
_CONFIGURATIONS = frozenset({kinds.SCHEDULER_CONFIG, *kinds.KUEUE_CONFIG})
#: Kinds of which a scenario gives at most one.
_SINGLE = {kinds.SIMULATION: "Simulation", **{gvk: "Kueue Configuration" for gvk in kinds.KUEUE_CONFIG}}


def load_scenario(
    paths: Sequence[str | Path], edit: Callable[[list[Document]], None] | None = None
) -> Scenario:
    """Read ``paths`` (files and directories) into a ``Scenario``.

    Raises ``ScenarioError`` listing every problem, one line each:
    ``FILE: document N (Kind/name): field.path: what is wrong``. ``document N`` counts from 1
    over the documents of one file in the order they appear, after ``kind: List`` items are
    flattened into it. What is read but not modelled becomes ``Scenario.warnings``, in the
    same format. ``edit`` may change the parsed documents in place before they are checked
    (a sweep's parameter overrides), so problems it brings are reported like any other.
    """
    problems = Problems()
    with collector_paused():  # (the documents, and what they become, live as long as the scenario)
        documents, sources = read_documents(paths, problems)
        return scenario_from_documents(documents, sources, problems, edit)


def scenario_from_documents(
    documents: list[Document],
    sources: list[str],
    problems: Problems,
    edit: Callable[[list[Document]], None] | None = None,
) -> Scenario:
    """``load_scenario`` on documents already read (standard input is read once: a command that looks
    at the documents first builds its scenario from the same ones); ``problems`` holds the reading's."""
    if edit is not None:
        edit(documents)
    loader = _Loader(problems)
    with collector_paused():  # (what the documents become lives as long as the scenario)
        loader.load(documents)
    if problems.errors:
        raise ScenarioError(Problems.lines(problems.errors))
    loader.scenario.sources = sources
    loader.scenario.warnings = Problems.summarised(problems.warnings)
    return loader.scenario


#: The registered kinds whose pods run to completion whatever their restartPolicy.
BATCH_KINDS = (PyTorchJob, MPIJob, JobSet, TrainJob, VolcanoJob)


@contextlib.contextmanager
def _too_deep(report: Reporter) -> Iterator[None]:
    """A document nested deeper than Python recurses (JSON allows it) is an error, not a crash."""
    try:
        yield
    except RecursionError:
        report.error("", "nested too deeply to read")


@dataclass
class _Entry:
    """A document of a modelled kind."""

    document: Document
    kind: Kind
    meta: Meta
    report: Reporter
    malformed: bool  # its schema check failed: conversion only looks for more problems
    generate_name: str = ""  # metadata.generateName, when the name is left to the API server

    @property
    def body(self) -> dict[str, Any]:
        return self.document.body


@dataclass(frozen=True)
class _Taken:
    """The names of one kind in one namespace that are defined so far."""

    defined: dict[tuple[str, str, str, str], Location]
    scope: tuple[str, str, str]  # group, kind, namespace

    def __contains__(self, name: object) -> bool:
        return (*self.scope, name) in self.defined


@dataclass(frozen=True)
class _Target:
    """A reference to a Deployment or ReplicaSet: a scaler's ``scaleTargetRef`` or a Traffic's ``target``."""

    report: Reporter
    path: str
    namespace: str
    name: str
    kind: str = "Deployment"
    api_version: str = "apps/v1"
    required: bool = False  # an error, not a warning, when it names no such object
    #: (field path, resource) of each Resource metric of an HPA (``spec.metrics[i]``, an ``autoscaling/v1``
    #: HPA's ``spec.targetCPUUtilizationPercentage``) and each cpu/memory trigger of a ScaledObject, checked
    #: for a usage of its pods (``_warn_without_usage``)
    resources: tuple[tuple[str, str], ...] = ()


@dataclass
class _Loader:
    """Builds the scenario document by document.

    Objects are stored even when their document has errors: the scenario is then discarded,
    and the checks between documents still see every definition.
    """

    problems: Problems
    scenario: Scenario = field(default_factory=Scenario)
    _defined: dict[tuple[str, str, str, str], Location] = field(default_factory=dict)
    _single: dict[str, Location] = field(default_factory=dict)  # the first of each kind in _SINGLE
    # For the checks between documents, from well-formed documents only:
    _pods: list[tuple[Reporter, str, Pod]] = field(default_factory=list)  # pods and templates, by path
    _node_reports: dict[str, Reporter] = field(default_factory=dict)
    _targets: list[_Target] = field(default_factory=list)  # Deployments that objects scale or load
    _kueue_reports: dict[str, Reporter] = field(default_factory=dict)  # Kueue's queues, flavors, cohorts
    _priority_labels: list[tuple[Reporter, str]] = field(
        default_factory=list
    )  # kueue.x-k8s.io/priority-class
    #: the workloads Kueue admits (labelled with a LocalQueue), by ``<kind>/<ns>/<name>``, and a dump's
    #: Workload objects, matched to them once all are read
    _queued: dict[str, kueue_workloads.Queued] = field(default_factory=dict)
    _kueue_workloads: list[kueue_workloads.ReadWorkload] = field(default_factory=list)
    _kai_reports: dict[str, Reporter] = field(default_factory=dict)  # KAI Queues
    _dra_claims: list[tuple[Reporter, ResourceClaim | ResourceClaimTemplate]] = field(default_factory=list)
    #: Kubeflow Trainer's runtimes by ``kind/namespace/name``, and the TrainJobs that name them
    _runtimes: dict[str, training_runtimes.TrainingRuntime] = field(default_factory=dict)
    _train_jobs: list[tuple[_Entry, priorities.Priorities]] = field(default_factory=list)
    _volcano_queues: dict[str, Resources | None] = field(default_factory=dict)  # capability by Queue
    #: what the objects ask for (nodes, pods, samples), within the simulator's limits
    _scale: scale_budget.ScaleBudget = field(default_factory=scale_budget.ScaleBudget)
    _workload_reports: dict[tuple[type, str], Reporter] = field(default_factory=dict)
    _feed_reports: list[tuple[Reporter, QueueFeed]] = field(default_factory=list)
    _deletions: list[pod_deletion.Deletion] = field(default_factory=list)  # pods being deleted
    #: PodTemplates by (namespace, name), and the ProvisioningRequests that name them
    _pod_templates: dict[tuple[str, str], Pod] = field(default_factory=dict)
    _provisioning_requests: list[tuple[Reporter, provisioning_requests.RequestSpec]] = field(
        default_factory=list
    )
    #: the Deployments (their documents and places in ``scenario.deployments``) and the Rollouts of them
    _deployment_entries: dict[tuple[str, str], tuple[_Entry, int]] = field(default_factory=dict)
    _rollouts: list[tuple[rollout.RolloutRequest, int]] = field(default_factory=list)

    def load(self, documents: list[Document]) -> None:
        entries = [entry for entry in map(self._prepare, documents) if entry is not None]
        self._generate_names(entries)
        for entry in entries:
            if entry.kind.gvk == kinds.PRIORITY_CLASS:
                self._convert(entry, self._priority_class)
        resolver = priorities.Priorities(self.scenario.priority_classes)
        converters: dict[tuple[str, str, str], Callable[[_Entry], None]] = {
            kinds.POD: lambda e: self._pod(e, resolver),
            kinds.JOB: lambda e: self._job(e, resolver),
            kinds.DEPLOYMENT: lambda e: self._deployment(e, resolver),
            kinds.DAEMONSET: lambda e: self._workload(
                e, resolver, workloads.daemonset, self.scenario.daemonsets
            ),
            kinds.NODE: self._node,
            kinds.NAMESPACE: self._namespace,
            kinds.POD_GROUP: self._pod_group,
            kinds.SCHEDULER_CONFIG: self._scheduler_config,
            kinds.SIMULATION: self._simulation_settings,
            **{gvk: self._kueue_config for gvk in kinds.KUEUE_CONFIG},
            kinds.NODE_POOL: self._node_pool,
            kinds.HPA: self._hpa,
            kinds.HPA_V1: self._hpa,
            kinds.POD_DISRUPTION_BUDGET: self._budget,
            kinds.SCALED_OBJECT: self._scaled_object,
            kinds.SCALED_JOB: lambda e: self._scaled_job(e, resolver),
            kinds.QUEUE_FEED: self._queue_feed,
            kinds.TRAFFIC: self._traffic,
            kinds.FAULT_MODEL: self._fault_model,
            kinds.ROLLOUT: self._rollout,
            **{gvk: self._event for gvk in kinds.EVENTS},
            **{gvk: self._dra for gvk in (*kinds.DRA, *kinds.DRA_BETA)},
            **{gvk: self._kueue for gvk in kinds.KUEUE},
            kinds.CLUSTER_TRAINING_RUNTIME: lambda e: self._training_runtime(e, resolver),
            kinds.TRAINING_RUNTIME: lambda e: self._training_runtime(e, resolver),
            kinds.VOLCANO_POD_GROUP: self._volcano_pod_group,
            kinds.VOLCANO_QUEUE: self._volcano_queue,
            kinds.KAI_QUEUE: self._kai_queue,
            kinds.POD_TEMPLATE: lambda e: self._pod_template(e, resolver),
            kinds.PROVISIONING_REQUEST: self._provisioning_request,
        }
        for gvk, read in manifest_readers().items():  # workload kinds that bring their own reader
            converters.setdefault(gvk, partial(self._registered_kind, read=read, resolver=resolver))
        for entry in entries:
            convert = converters.get(entry.kind.gvk)
            if convert is not None:
                self._convert(entry, convert)
        self._resolve_train_jobs()
        self._resolve_rollouts(resolver)
        self._resolve_provisioning_requests()
        self._match_kueue_workloads()
        for workload in self.scenario.workloads():  # charged once complete (a TrainJob: its runtime's)
            report = self._workload_reports.get((type(workload), workload.key))
            if report is not None:
                self._scale.workload(report, workload)
        for report, feed in self._feed_reports:  # over the run's length, known once the Simulation is read
            self._scale.feed(report, feed, self.scenario.simulation)
        for found in self._deletions:  # what remains of their grace periods, from the Simulation's startTime
            bare = self.scenario.pods[found.index]
            self.scenario.pods[found.index] = pod_deletion.terminating(bare, found, self.scenario.simulation)
        if not self.problems.errors:  # controllers adopt their pods of a snapshot
            adopting = [e for e in entries if e.kind.gvk in _ADOPTION]
            refs = [(e.kind.kind, e.meta.namespace, e.meta.name) for e in adopting]
            adoption.claim(self.scenario, list(zip(refs, (e.body for e in adopting), strict=True)))
        self._check_references()
        self._check_namespace_selectors()
        for report, claim in self._dra_claims:  # once every Namespace is read
            dra.check_admin_namespace(claim, self.scenario.namespace_labels, report)
        self._install_volcano(entries)

    @staticmethod
    def _convert(entry: _Entry, convert: Callable[[_Entry], None]) -> None:
        """Run ``convert``; on a malformed document, as far as its shape allows.

        The schema errors already explain why a malformed document cannot be read; the
        conversion of the rest may find more problems, and is cut short where a field has
        the wrong type.
        """
        with _too_deep(entry.report):
            if not entry.malformed:
                convert(entry)
                return
            with contextlib.suppress(TypeError, ValueError, AttributeError, KeyError, IndexError):
                convert(entry)

    # -- classification and structure ------------------------------------------------------

    def _prepare(self, document: Document) -> _Entry | None:
        report = Reporter(self.problems, document.location)
        with _too_deep(report):
            return self._classify_and_check(document, report)
        return None

    def _classify_and_check(self, document: Document, report: Reporter) -> _Entry | None:
        body = document.body
        api_version, kind_name = body.get("apiVersion"), body.get("kind")
        for key, value in (("apiVersion", api_version), ("kind", kind_name)):
            if value is None or value == "":
                report.error(key, required())
            elif not isinstance(value, str):
                report.error(key, invalid(value, "must be a string"))
        if not isinstance(api_version, str) or not isinstance(kind_name, str) or report.error_count:
            return None
        kind = kinds.classify(api_version, kind_name)
        namespaced = kinds.namespaced(kind.gvk) if kind.handling is Handling.MODEL else None
        # A KubeSchedulerConfiguration has no metadata: its scheduler is named FILE#N.
        report.label = (
            kind_name if kind.gvk == kinds.SCHEDULER_CONFIG else objects.label(kind_name, body, namespaced)
        )
        if kind.handling is Handling.REJECT:
            report.error(kind.path, kind.message)
            return None
        if is_priority_config(api_version, kind_name, body):
            self.scenario.expander_priorities = parse_priorities(body, report)
            return None
        if kind.handling is Handling.IGNORE:
            report.warn("", kind.message)
            return None
        definition = schema_check.standard_kinds().get(kind.gvk)
        if definition is not None:
            schema_check.check(body, definition, report)
        elif kind.gvk not in _CONFIGURATIONS:  # decoded whole by its own model
            self._check_envelope(body, kind, report)
        meta = objects.meta(body, bool(namespaced))
        generate = mapping(body.get("metadata")).get("generateName")
        if not isinstance(generate, str) or meta.name or kind.gvk in _UNNAMED:
            generate = ""
        if not meta.name and not generate and kind.gvk not in _UNNAMED:
            report.error("metadata.name", required("name or generateName is required"))
        malformed = report.error_count > 0
        if not generate:
            self._check_unique(kind, meta, report)
        return _Entry(document, kind, meta, report, malformed, generate)

    def _generate_names(self, entries: list[_Entry]) -> None:
        """Name the objects that give ``metadata.generateName`` instead of a name, in document order, as
        the API server does (``generated_names``): the key is the Simulation's ``spec.seed`` and the
        object's place among those of its kind and namespace with the same prefix, so that adding other
        documents changes no name; a name that is taken is drawn again."""
        simulations = (e for e in entries if e.kind.gvk == kinds.SIMULATION)
        seed = next((mapping(e.body.get("spec")).get("seed") for e in simulations), 0)
        seen: dict[tuple[str, str, str, str], int] = {}
        for entry in (e for e in entries if e.generate_name):
            scope = (entry.kind.group, entry.kind.kind, entry.meta.namespace)
            place = seen[(*scope, entry.generate_name)] = seen.get((*scope, entry.generate_name), -1) + 1
            key = f"{seed}/{'/'.join(scope)}/{entry.generate_name}/{place}"
            name = unique_name(entry.generate_name, key, _Taken(self._defined, scope))
            metadata = {**mapping(entry.body.get("metadata")), "name": name}
            entry.document = replace(entry.document, body={**entry.body, "metadata": metadata})
            entry.meta = replace(entry.meta, name=name)
            entry.report.label = objects.label(entry.kind.kind, entry.body, kinds.namespaced(entry.kind.gvk))
            self._check_unique(entry.kind, entry.meta, entry.report)

    @staticmethod
    def _check_envelope(body: dict[str, Any], kind: Kind, report: Reporter) -> None:
        allowed = (*_ENVELOPE, *_EXTRA_TOP_LEVEL.get(kind.gvk, ()))
        for key in body:
            if key not in allowed:
                report.error(key, f"Additional properties are not allowed ({key!r} was unexpected)")
        if "metadata" in body:
            schema_check.check(body["metadata"], schema_check.OBJECT_META, report.at("metadata"))

    def _check_unique(self, kind: Kind, meta: Meta, report: Reporter) -> None:
        if kind.gvk == kinds.SCHEDULER_CONFIG:
            return
        if kind.gvk in _SINGLE:
            what = _SINGLE[kind.gvk]
            first = self._single.setdefault(what, report.location)
            if first != report.location:
                report.error("", f"at most one {what} may be given; the first is {first.describe(None)}")
            return
        if not meta.name:
            return
        key = (kind.group, kind.kind, meta.namespace, meta.name)
        first = self._defined.setdefault(key, report.location)
        if first != report.location:
            shown = f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
            detail = f"{kind.kind} {shown} is already defined in {first.describe(None)}"
            report.error("metadata.name", duplicate(meta.name, detail))

    # -- conversion ---------------------------------------------------------------------------

    def _priority_class(self, entry: _Entry) -> None:
        cls = priorities.priority_class(entry.meta.name, entry.body, entry.report)
        default = next((c for c in self.scenario.priority_classes.values() if c.global_default), None)
        if cls.global_default and default is not None:
            detail = f"PriorityClass {default.name} is already marked as default. Only one default can exist"
            entry.report.error("globalDefault", invalid(True, detail))
        self.scenario.priority_classes[cls.name] = cls

    def _namespace(self, entry: _Entry) -> None:
        """A ``v1`` Namespace: its labels, which InterPodAffinity's ``namespaceSelector`` reads."""
        self.scenario.namespace_labels[entry.meta.name] = dict(entry.meta.labels)

    def _check_namespace_selectors(self) -> None:
        """Without any Namespace document, a ``namespaceSelector`` on a label other than the namespace's
        name cannot be judged (a cluster dump lists no Namespaces): said so, on the pod too."""
        if self.scenario.namespace_labels:
            return
        for report, prefix, pod in self._pods:
            for path in pod_affinity.selectors_on_namespace_labels(pod.pod_affinity):
                report.at(prefix).not_modelled(
                    f"spec.{path}", note="no v1 Namespace document gives the namespaces' labels"
                )
                pod.not_modelled = (*pod.not_modelled, f"spec.{path}")

    def _pod(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        spec, status = mapping(entry.body.get("spec")), mapping(entry.body.get("status"))
        owner = objects.controller_of(entry.body)
        pod = pods.pod(entry.meta, spec, entry.report, resolver, owner)
        phase = status.get("phase") or POD_PHASES[0]
        if phase not in POD_PHASES:
            entry.report.error("status.phase", unsupported(phase, POD_PHASES))
        elif phase == "Unknown":
            entry.report.not_modelled("status.phase", "Unknown", note="the pod is treated as Running")
            phase = "Running"
        if phase == "Running" and pod.node_name is None:
            entry.report.error("spec.nodeName", required("a Running pod is bound to a node"))
        created = Created(pod.behavior.submit_at_s, entry.document.order)
        if not entry.malformed:
            self._pods.append((entry.report, "", pod))
            if owner is None and phase in ("Pending", "Running"):  # a controller's pods: its warning
                _warn_if_endless(entry, [("", pod)])
        priority_class = kueue.priority_class_label(entry.meta)
        if priority_class is not None and kueue.queue_name(entry.meta) is not None:
            self._priority_labels.append((entry.report, priority_class))
        metadata = mapping(entry.body.get("metadata"))
        uid = str(metadata.get("uid") or "")
        scheduled = scheduler_records.pod_scheduled(status, entry.report)
        found = pod_deletion.deletion(len(self.scenario.pods), entry.body, phase, entry.report)
        if found is not None:
            self._deletions.append(found)
        created_unix = _creation_timestamp(entry)
        finished_unix = None
        if phase in FINISHED_PHASES:  # when it finished: a Job's pod failure backoff (adoption), its record's
            adoption.check_finish_times(entry.body, entry.report)
            finished_unix = adoption.finished_time(entry.body)
        bound_unix = None if pod.node_name is None else pod_times.bound_time(status, entry.report)
        self.scenario.pods.append(
            BarePod(
                pod,
                created,
                bound_node=pod.node_name,
                phase=phase,
                uid=uid,
                scheduled=scheduled,
                nominated_node=str(status.get("nominatedNodeName") or "") or None,
                created_unix=created_unix,
                bound_unix=bound_unix,
                finished_unix=finished_unix,
            )
        )
        self._scale.pod(entry.report)

    def _event(self, entry: _Entry) -> None:
        event = scheduler_records.pod_event(entry.meta, entry.body, entry.report, entry.document.order)
        if event is not None:
            self.scenario.events.append(event)

    def _workload(
        self,
        entry: _Entry,
        resolver: priorities.Priorities,
        convert: Callable[[Meta, dict[str, Any], Reporter, priorities.Priorities, int], Any],
        into: list[Any],
    ) -> None:
        workload = convert(entry.meta, entry.body, entry.report, resolver, entry.document.order)
        if not entry.malformed:
            self._pods.append((entry.report, "spec.template", workload.template))
            if not _suspended_for_good(workload, entry.meta):
                _warn_if_endless(entry, [("spec.template", workload.template)])
        into.append(workload)
        self._stamp(entry, workload)
        self._workload_reports[type(workload), workload.key] = entry.report

    def _deployment(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        self._workload(entry, resolver, workloads.deployment, self.scenario.deployments)
        if not entry.malformed:
            self._deployment_entries[entry.meta.namespace, entry.meta.name] = (
                entry,
                len(self.scenario.deployments) - 1,
            )

    def _rollout(self, entry: _Entry) -> None:
        request = rollout.rollout(entry.meta, entry.body, entry.report)
        if request is not None and not entry.malformed:
            self._rollouts.append((request, entry.document.order))

    def _resolve_rollouts(self, resolver: priorities.Priorities) -> None:
        """Each Rollout resolved against its Deployment (``kube.rollout.resolve``); the Deployment then
        carries its template's changes."""
        targets = {
            key: rollout.Target(entry.meta, mapping(entry.body.get("spec")), index)
            for key, (entry, index) in self._deployment_entries.items()
        }
        start = self.scenario.simulation.start_time_s
        changed, templates = rollout.resolve(self._rollouts, targets, start, resolver)
        self._pods.extend(templates)
        for index, (first, made) in changed.items():
            deployment = self.scenario.deployments[index]
            self.scenario.deployments[index] = replace(deployment, template_hash=first, rollouts=made)

    def _registered_kind(self, entry: _Entry, read: Reader, resolver: priorities.Priorities) -> None:
        workload, templates = workloads.registered_kind(
            read,
            entry.meta,
            entry.body,
            entry.report,
            resolver,
            entry.document.order,
            workload_annotations(entry.kind.gvk),
        )
        if not entry.malformed:
            self._pods.extend((entry.report, path, template) for path, template in templates)
            if isinstance(workload, RayJob):  # its run: the submitter's, from its metadata or template
                _warn_if_endless(entry, [("", workload.submitter)], batch=True)
            else:
                _warn_if_endless(entry, templates, batch=isinstance(workload, BATCH_KINDS))
        self.scenario.other_workloads.append(workload)
        self._stamp(entry, workload)
        self._workload_reports[type(workload), workload.key] = entry.report
        if isinstance(workload, TrainJob):  # its JobSet comes from the runtime it names
            self._train_jobs.append((entry, resolver))
        self._queue(entry, templates[0][1] if templates else None)

    def _training_runtime(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        kind = entry.kind.kind
        runtime = training_runtimes.training_runtime(
            kind, entry.meta, entry.body, entry.report, resolver, entry.document.order
        )
        if not entry.malformed and not entry.report.error_count:
            self._runtimes[f"{kind}/{entry.meta.namespace}/{entry.meta.name}"] = runtime

    def _resolve_train_jobs(self) -> None:
        """Each TrainJob gets the JobSet its runtime gives it; a runtime that is not there is an error,
        as the trainer's webhook refuses the TrainJob (``ValidateObjects``)."""
        held = self.scenario.other_workloads
        for entry, resolver in self._train_jobs:
            key = f"{entry.meta.namespace}/{entry.meta.name}"
            job = next(w for w in held if isinstance(w, TrainJob) and w.key == key)
            if not job.runtime_name:  # an error already
                continue
            namespace = job.namespace if job.runtime_kind == "TrainingRuntime" else ""
            runtime = self._runtimes.get(f"{job.runtime_kind}/{namespace}/{job.runtime_name}")
            if runtime is None:
                where = f"in namespace {namespace}" if namespace else "in the scenario"
                detail = f"no {job.runtime_kind} of that name {where}"
                entry.report.error("spec.runtimeRef.name", invalid(job.runtime_name, detail))
                continue
            held[held.index(job)] = training_runtimes.resolve(
                job, runtime, entry.meta, entry.body, entry.report, resolver, entry.document.order
            )

    def _job(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        self._workload(entry, resolver, workloads.job, self.scenario.jobs)
        job = self.scenario.jobs[-1]
        self._queue(entry, job.template, job.suspend)

    def _queue(self, entry: _Entry, template: Pod | None, suspended: bool | None = None) -> None:
        """Kueue's integrations: a workload labelled with a LocalQueue is admitted through it whole (its
        priority derived from ``template``, its first pod set's; ``suspended``: a Job's ``spec.suspend``)."""
        queue = kueue.queue_name(entry.meta)
        key = f"{entry.kind.kind}/{entry.meta.namespace}/{entry.meta.name}"
        if queue is not None:
            self.scenario.kueue.workload_queues[key] = queue
            self._queued[key] = kueue_workloads.Queued(queue, suspended, template)
        priority_class = kueue.priority_class_label(entry.meta)
        if priority_class is not None and queue is not None:
            self.scenario.kueue.workload_priorities[key] = priority_class
            self._priority_labels.append((entry.report, priority_class))

    def _match_kueue_workloads(self) -> None:
        """A dump's Workloads, each to the workload it belongs to (``kueue_workloads.match``)."""
        if self._kueue_workloads:
            pods = [bare.pod for bare in self.scenario.pods]
            kueue_workloads.match(self._kueue_workloads, self._queued, pods, self.scenario.kueue)

    def _kai_queue(self, entry: _Entry) -> None:
        queue = kai.queue(entry.meta, entry.body, entry.report)
        self.scenario.kai_queues[queue.name] = queue
        self._kai_reports[queue.name] = entry.report

    def _kueue(self, entry: _Entry) -> None:
        objects = self.scenario.kueue
        kind = entry.kind.kind
        if kind == kueue.RESOURCE_FLAVOR:
            objects.flavors[entry.meta.name] = kueue.resource_flavor(entry.meta, entry.body, entry.report)
            self._kueue_reports[f"{kind}/{entry.meta.name}"] = entry.report
        elif kind == kueue.COHORT:
            objects.cohorts[entry.meta.name] = kueue.cohort(entry.meta, entry.body, entry.report)
            self._kueue_reports[f"{kind}/{entry.meta.name}"] = entry.report
        elif kind == kueue.WORKLOAD_PRIORITY_CLASS:
            wpc = kueue.workload_priority_class(entry.meta, entry.body, entry.report)
            objects.priority_classes[wpc.name] = wpc
        elif kind == kueue.TOPOLOGY:
            found = kueue.topology(entry.meta, entry.body, entry.report)
            if found is not None:
                objects.topologies[found.name] = found
        elif kind == kueue.ADMISSION_CHECK:
            check = kueue.admission_check(entry.meta, entry.body, entry.report)
            if check is not None:
                objects.admission_checks[check.name] = check
        elif kind == kueue.PROVISIONING_CONFIG:
            config = kueue.provisioning_request_config(entry.meta, entry.body, entry.report)
            if config is not None:
                objects.provisioning_configs[config.name] = config
        elif kind == kueue_workloads.WORKLOAD:
            self._kueue_workloads.append(kueue_workloads.read(entry.meta, entry.body, entry.report))
        elif kind == kueue.CLUSTER_QUEUE:
            cq = kueue.cluster_queue(entry.meta, entry.body, entry.kind.version, entry.report)
            objects.cluster_queues[cq.name] = cq
            self._kueue_reports[f"{kind}/{cq.name}"] = entry.report
        else:
            lq = kueue.local_queue(entry.meta, entry.body, entry.report)
            if lq is not None:
                objects.local_queues[lq.key] = lq
                self._kueue_reports[f"{kind}/{lq.key}"] = entry.report

    def _node(self, entry: _Entry) -> None:
        node = nodes.node(entry.meta, entry.body, entry.report, readiness=True)
        if not entry.malformed:
            self._node_reports[node.name] = entry.report
        self.scenario.nodes.append(node)
        self._scale.node(entry.report)

    def _pod_group(self, entry: _Entry) -> None:
        group = pod_groups.pod_group(entry.meta, entry.body, entry.report, entry.document.order)
        self.scenario.pod_groups[group.key] = group
        self._stamp(entry, group)

    def _stamp(self, entry: _Entry, obj: Workload | PodGroup) -> None:
        """Keep the workload's or PodGroup's ``metadata.creationTimestamp``, where it has one: what Kueue's
        queue order (its Workload's), Coscheduling's, Volcano's and KAI's (its PodGroup's) count from."""
        at = _creation_timestamp(entry)
        if at is not None:
            self.scenario.creation_timestamps[stamp_key(obj)] = at

    def _volcano_pod_group(self, entry: _Entry) -> None:
        group = volcano.pod_group(entry.meta, entry.body, entry.report, entry.document.order)
        if group.key in self.scenario.pod_groups:
            detail = (
                "a scheduler-plugins PodGroup has this namespace and name: gpufleet keeps one gang per name"
            )
            entry.report.error("metadata.name", duplicate(group.name, detail))
        self.scenario.pod_groups[group.key] = group
        self._stamp(entry, group)

    def _volcano_queue(self, entry: _Entry) -> None:
        self._volcano_queues[entry.meta.name] = volcano.queue(entry.body, entry.report)

    def _install_volcano(self, entries: list[_Entry]) -> None:
        """Any Volcano object installs Volcano: its scheduler runs (unless a KubeSchedulerConfiguration
        profile is already named ``volcano``), and a Volcano Job must name a Queue that exists
        (``validateJobCreate``: ``unable to find job queue``)."""
        installed = [e for e in entries if e.kind.group in VOLCANO_GROUPS]
        if not installed:
            return
        queues = {DEFAULT_QUEUE: None, **self._volcano_queues}
        jobs = {(w.namespace, w.name): w for w in self.scenario.other_workloads if isinstance(w, VolcanoJob)}
        for entry in installed:
            job = jobs.get((entry.meta.namespace, entry.meta.name)) if entry.kind.gvk == VOLCANO_JOB else None
            if job is not None and job.queue not in queues:
                detail = f'unable to find job queue: queue.scheduling.volcano.sh "{job.queue}" not found'
                entry.report.error("spec.queue", invalid(job.queue, detail))
        if all(p.scheduler_name != VOLCANO_SCHEDULER for s in self.scenario.schedulers for p in s.profiles):
            self.scenario.schedulers.append(volcano_scheduler(queues))

    def _scheduler_config(self, entry: _Entry) -> None:
        location = entry.document.location
        config = scheduler_config(f"{location.source}#{location.number}", entry.body, entry.report)
        if config is None:
            return
        defined = {p.scheduler_name: s.name for s in self.scenario.schedulers for p in s.profiles}
        for i, profile in enumerate(config.profiles):
            if profile.scheduler_name in defined:
                detail = f"a profile of {defined[profile.scheduler_name]} already has this name"
                entry.report.error(f"profiles[{i}].schedulerName", duplicate(profile.scheduler_name, detail))
        self.scenario.schedulers.append(config)

    def _kueue_config(self, entry: _Entry) -> None:
        kueue = self.scenario.kueue
        kueue.fair_sharing, kueue.wait_for_pods_ready = kueue_config.manager_configuration(
            entry.body, entry.kind.version, entry.report
        )

    def _simulation_settings(self, entry: _Entry) -> None:
        self.scenario.simulation = gpufleet_kinds.simulation(entry.body, entry.report)
        self._scale.samples(entry.report, self.scenario.simulation)

    def _node_pool(self, entry: _Entry) -> None:
        pool = gpufleet_kinds.node_pool(entry.meta, entry.body, entry.report)
        if pool is not None:
            self._scale.node_pool(entry.report, pool)
            self.scenario.node_pools.append(pool)

    def _hpa(self, entry: _Entry) -> None:
        body = hpa_v1.to_v2(entry.body, entry.report) if entry.kind.gvk == kinds.HPA_V1 else entry.body
        spec = hpa.hpa(body, entry.report)
        if spec is None:
            return
        if not entry.malformed:
            ref = spec.scale_target_ref
            target = _Target(
                entry.report,
                "spec.scaleTargetRef",
                entry.meta.namespace,
                ref.name,
                ref.kind,
                ref.api_version,
                resources=_hpa_resources(entry.body, v1=entry.kind.gvk == kinds.HPA_V1),
            )
            self._targets.append(target)
        self._scale.replicas(entry.report, "spec.maxReplicas", spec.max_replicas)
        self.scenario.hpas.append((f"{entry.meta.namespace}/{entry.meta.name}", spec))

    def _pod_template(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        """A ``v1`` PodTemplate: its ``template``, for the ProvisioningRequests that name it."""
        pod, _ = workloads.pod_template(
            entry.meta, entry.body, "template", entry.report, entry.report, resolver, entry.document.order,
            pods.RESTART_POLICIES,
        )  # fmt: skip
        self._pod_templates[(entry.meta.namespace, entry.meta.name)] = pod.renamed(entry.meta.name)

    def _provisioning_request(self, entry: _Entry) -> None:
        spec = provisioning_requests.request(entry.meta, entry.body, entry.report)
        if spec is not None:
            self._provisioning_requests.append((entry.report, spec))

    def _resolve_provisioning_requests(self) -> None:
        """Each ProvisioningRequest's pod sets, once every PodTemplate is read."""
        for report, spec in self._provisioning_requests:
            request = provisioning_requests.resolve(spec, self._pod_templates, report)
            if request is None:
                continue
            self.scenario.provisioning_requests.append(request)

    def _budget(self, entry: _Entry) -> None:
        budget = disruption_budgets.budget(entry.meta, entry.body, entry.report)
        if budget is not None:
            self.scenario.budgets.append(budget)

    def _scaled_object(self, entry: _Entry) -> None:
        errors = entry.report.error_count
        spec = keda.scaled_object(entry.meta, entry.body, entry.report)
        if spec is None:
            return
        if entry.report.error_count == errors and not entry.malformed:
            ref = spec.scale_target_ref
            resources = tuple(
                (f"spec.triggers[{i}]", t.scaler.resource)
                for i, t in enumerate(spec.triggers)
                if isinstance(t.scaler, ResourceScaler) and t.scaler.container_name is None
            )
            target = _Target(
                entry.report,
                "spec.scaleTargetRef",
                spec.namespace,
                ref.name,
                ref.kind,
                ref.api_version,
                resources=resources,
            )
            self._targets.append(target)
        self._scale.replicas(entry.report, "spec.maxReplicaCount", spec.max_replica_count)
        self.scenario.scaled_objects.append(spec)

    def _scaled_job(self, entry: _Entry, resolver: priorities.Priorities) -> None:
        errors = entry.report.error_count
        spec, job = keda.scaled_job(entry.meta, entry.body, entry.report, resolver, entry.document.order)
        if job is not None and entry.report.error_count == errors and not entry.malformed:
            self._pods.append((entry.report, "spec.jobTargetRef.template", job.template))
            _warn_if_endless(entry, [("spec.jobTargetRef.template", job.template)])
        if spec is not None and job is not None:
            self._scale.replicas(entry.report, "spec.maxReplicaCount", spec.max_replica_count)
            self._scale.workload(entry.report, job)
            self.scenario.scaled_jobs.append((spec, job))

    def _queue_feed(self, entry: _Entry) -> None:
        feed = gpufleet_kinds.queue_feed(entry.meta, entry.body, entry.report)
        if feed is not None:
            self.scenario.queue_feeds.append(feed)
            self._feed_reports.append((entry.report, feed))

    def _fault_model(self, entry: _Entry) -> None:
        model = fault_model.fault_model(entry.meta, entry.body, entry.report)
        if model is not None and self.scenario.fault_model is not None:
            entry.report.error(
                "", f"at most one FaultModel may be given; the first is {self.scenario.fault_model.name}"
            )
        elif model is not None:
            self.scenario.fault_model = model

    def _dra(self, entry: _Entry) -> None:
        obj = dra.dra_object(dra_versions.to_v1(entry.body), entry.report)
        objects = self.scenario.dra
        if isinstance(obj, DeviceClass):
            objects.classes[obj.name] = obj
        elif isinstance(obj, ResourceSlice):
            objects.slices.append(obj)
        elif isinstance(obj, ResourceClaim):
            objects.claims[obj.key] = obj
        elif isinstance(obj, ResourceClaimTemplate):
            objects.templates[f"{obj.namespace}/{obj.name}"] = obj
        if isinstance(obj, ResourceClaim | ResourceClaimTemplate):
            self._dra_claims.append((entry.report, obj))

    def _traffic(self, entry: _Entry) -> None:
        errors = entry.report.error_count
        traffic = gpufleet_kinds.traffic(entry.meta, entry.body, entry.report)
        if traffic is None:
            return
        if entry.report.error_count == errors and not entry.malformed:
            target = _Target(
                entry.report,
                "spec.target",
                traffic.namespace,
                traffic.target,
                traffic.target_kind,
                api_version="",
                required=True,
            )
            self._targets.append(target)
        self.scenario.traffic.append(traffic)

    # -- references between documents -------------------------------------------------------

    def _check_targets(self) -> None:
        """Scalers and Traffic aimed at what has a scale subresource gpufleet runs, an ``apps/v1``
        Deployment or ReplicaSet or another ``Scalable`` kind (a StatefulSet, a LeaderWorkerSet) of the
        scenario, or nothing runs."""
        scalable = {("Deployment", d.namespace, d.name): "apps/v1" for d in self.scenario.deployments}
        for w in self.scenario.other_workloads:
            controller = controller_for(w)
            if controller.kind == "ReplicaSet":
                scalable[(controller.kind, w.namespace, w.name)] = "apps/v1"
            elif isinstance(controller, Scalable):  # a StatefulSet, a LeaderWorkerSet
                scalable[(controller.kind, w.namespace, w.name)] = controller.api_version
        scalers: dict[tuple[str, str, str], list[_Target]] = {}
        for target in self._targets:
            ref = (target.kind, target.namespace, target.name)
            if ref in scalable and target.api_version in (scalable[ref], ""):
                if not target.required:  # an HPA or ScaledObject, not a Traffic
                    scalers.setdefault(ref, []).append(target)
                    self._warn_without_usage(target)
                continue
            if target.required:
                detail = f"no {target.kind} in namespace {target.namespace}"
                target.report.error(target.path, invalid(target.name, detail))
                continue
            written = f"{target.api_version}/{target.kind}" if target.api_version else target.kind
            shown = f"{written} {target.namespace}/{target.name}"
            target.report.warn(
                target.path,
                f"{shown} is not a Deployment or ReplicaSet of the scenario: it scales nothing gpufleet runs",
            )
        for (kind, namespace, name), aimed in scalers.items():
            if len(aimed) < 2:
                continue
            for target in aimed:  # horizontal.go validateAndParseSelector
                others = ", ".join(str(t.report.label) for t in aimed if t is not target)
                target.report.warn(
                    target.path,
                    f"{kind} {namespace}/{name} is also scaled by {others}: its pods are controlled by "
                    "multiple HPAs, so the HPA controller computes no metrics for any of them "
                    "(AmbiguousSelector)",
                )

    def _warn_without_usage(self, target: _Target) -> None:
        """A Resource metric whose target's pods have no usage of that resource (no Traffic aimed at the
        target models it, its pod template has no ``gpufleet.io/<resource>-usage``): it reads no value and
        the HPA holds on it."""
        if not target.resources:
            return
        ref = (target.kind, target.namespace, target.name)
        usage = [t.usage for t in self.scenario.traffic if (t.target_kind, t.namespace, t.target) == ref]
        template = self._template_of(ref)
        for path, resource in target.resources:
            if resource not in ("cpu", "memory"):
                target.report.warn(
                    path,
                    f"gpufleet models no {resource} usage (only cpu and memory): the Resource metric reads "
                    "no value and the HPA holds on it",
                )
                continue
            if any(u.models(resource) for u in usage):
                continue
            if template is not None and _annotated_usage(template, resource) is not None:
                continue
            target.report.warn(
                path,
                f"the pods of {target.kind} {target.namespace}/{target.name} have no {resource} usage "
                f"(no Traffic aimed at it models it, no {PREFIX}{resource}-usage annotation): the Resource "
                "metric reads no value and the HPA holds on it",
            )

    def _template_of(self, ref: tuple[str, str, str]) -> Pod | None:
        """The pod template of the Deployment or ReplicaSet ``ref`` (kind, namespace, name)."""
        kind, namespace, name = ref
        if kind == "Deployment":
            return next(
                (d.template for d in self.scenario.deployments if (d.namespace, d.name) == (namespace, name)),
                None,
            )
        for w in self.scenario.other_workloads:
            template = getattr(w, "template", None)
            if (w.namespace, w.name) == (namespace, name) and isinstance(template, Pod):
                return template if controller_for(w).kind == kind else None
        return None

    def _check_references(self) -> None:
        """Node names that a pool would stamp; pods naming missing PodGroups or nodes; scale targets."""
        self._check_targets()
        kueue.check_references(self.scenario.kueue, self._kueue_reports)
        kueue.check_priority_classes(self.scenario.kueue, self._priority_labels)
        kai.check_references(self.scenario.kai_queues, self._kai_reports)
        pools = {p.name for p in self.scenario.node_pools}
        for name, report in self._node_reports.items():
            pool, _, index = name.rpartition("-")
            if pool in pools and index.isdigit():
                report.error("metadata.name", duplicate(name, f"NodePool {pool} names its nodes {pool}-<n>"))
        replicas = {p.name: p.replicas for p in self.scenario.node_pools}

        def exists(node: str) -> bool:  # a Node, or one a pool stamps at the start (never listed)
            pool, _, index = node.rpartition("-")
            stamped = index.isdigit() and str(int(index)) == index and int(index) < replicas.get(pool, 0)
            return node in self._node_reports or stamped

        for report, prefix, pod in self._pods:
            kai.check_pod(pod, report, prefix)
            group = pod.labels.get(POD_GROUP_LABEL)
            if group is not None and f"{pod.namespace}/{group}" not in self.scenario.pod_groups:
                where = "labels" if POD_GROUP_LABEL in pod.labels else "annotations"
                key = POD_GROUP_LABEL if where == "labels" else VOLCANO_GROUP_ANNOTATION
                path = join(prefix, f"metadata.{where}.{key}")
                report.warn(path, f'no PodGroup "{group}" in namespace {pod.namespace}')
            if pod.node_name is not None and not exists(pod.node_name):
                report.warn(join(prefix, "spec.nodeName"), f'no Node "{pod.node_name}" in the scenario')


def _hpa_resources(body: Mapping[str, Any], v1: bool) -> tuple[tuple[str, str], ...]:
    """(field path, resource) of each ``Resource`` metric the HPA ``body`` reads: an ``autoscaling/v1``
    HPA's ``targetCPUUtilizationPercentage`` (cpu, also where it is left to its default), a v2 HPA's
    ``spec.metrics[i]`` of type ``Resource``, or ``spec.metrics`` where it is empty (defaulted to cpu,
    ``SetDefaults_HorizontalPodAutoscaler``)."""
    spec = mapping(body.get("spec"))
    if v1:
        return (("spec.targetCPUUtilizationPercentage", "cpu"),)
    raw = spec.get("metrics")
    if not raw:
        return (("spec.metrics", "cpu"),)
    metrics = raw if isinstance(raw, list) else []
    return tuple(
        (f"spec.metrics[{i}]", str(mapping(m.get("resource")).get("name") or ""))
        for i, m in enumerate(metrics)
        if isinstance(m, Mapping) and m.get("type") == "Resource"
    )


def _annotated_usage(template: Pod, resource: str) -> float | None:
    """The template's ``gpufleet.io/cpu-usage`` or ``memory-usage``, if any."""
    behavior = template.behavior
    return behavior.cpu_usage if resource == "cpu" else behavior.memory_usage_bytes


def _creation_timestamp(entry: _Entry) -> float | None:
    """The object's ``metadata.creationTimestamp`` as Unix seconds; one that is no RFC 3339 time is an error,
    as a Node's times are (``nodes.unix_time``)."""
    metadata = mapping(entry.body.get("metadata"))
    return nodes.unix_time(metadata.get("creationTimestamp"), entry.report, "metadata.creationTimestamp")


def _suspended_for_good(workload: object, meta: Meta) -> bool:
    """A Job with ``spec.suspend: true`` and no Kueue queue label: ``manageJob`` never creates its pods, so
    none of them computes until the run ends (it is reported ``Suspended``, not endless)."""
    return isinstance(workload, Job) and workload.suspend and QUEUE_NAME_LABEL not in meta.labels


def _warn_if_endless(entry: _Entry, templates: Sequence[tuple[str, Pod]], batch: bool = False) -> None:
    """One warning for a workload whose pods run to completion (a ``batch`` kind's: a training job's;
    or ``restartPolicy`` Never or OnFailure: a Job's, a bare pod's) when none of them has a
    ``gpufleet.io/duration``: they would compute until the run ends, never completing. Pods that pop
    work items (``consumes``) or are deleted at a time (``delete-at``) end anyway."""
    runs = [(path, pod) for path, pod in templates if batch or pod.restart_policy != "Always"]
    behaviors = [pod.behavior for _, pod in runs]
    if not runs or any(b.duration_s or b.consumes or b.delete_at_s is not None for b in behaviors):
        return
    entry.report.warn(
        join(runs[0][0], "metadata.annotations"),
        f"no {DURATION}: its pods run to completion but would compute until the simulation ends and "
        f"never complete; annotate the pod template with {DURATION} (how long it computes) or "
        f"{CONSUMES} (a work list)",
    )
