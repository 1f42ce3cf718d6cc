"""A snapshot with changes applied: the documents ``gpufleet whatif`` simulates on its changed side.

The change files' ordinary documents come first, in order: each replaces the snapshot's object of
the same API group, kind, namespace and name (as ``kubectl apply`` replaces what it names), or is
added. A ``KubeSchedulerConfiguration`` has no name: it replaces every configuration of the
snapshot that defines one of its profiles' ``schedulerName`` (the same scheduler process,
reconfigured); a ``Simulation`` replaces the snapshot's. Then each ``Change``
(``gpufleet.kube.change_kind``), in order:

- ``delete``: the objects named go; deleting a Node deletes the pods bound to it, as the pod garbage
  collector does (``pkg/controller/podgc``, ``gcOrphaned``).
- ``addNodes``: a ``NodePool`` named ``<node>-whatif`` whose template is the node's labels (without
  ``kubernetes.io/hostname``), its taints (without the ``node.kubernetes.io/`` taints the node
  lifecycle controller and ``kubectl cordon`` put there), capacity, allocatable and images, with
  ``replicas: count``, so the nodes are ``<node>-whatif-<n>``, Ready at time 0, billed at
  ``pricePerHour``.
- ``pods``: the chosen Pods (``selector.owner``: those its controller made,
  ``gpufleet.experiments.whatif_owners``) get ``priorityClassName`` (their ``priority`` and
  ``preemptionPolicy`` are dropped, so they are resolved from the class, as the Priority admission
  plugin does) and/or ``schedulerName``; ``annotations`` go to the chosen Pods and to the pod templates
  of the controllers that would make such pods (``whatif_owners``), so later pods carry them too.
- ``gangs``: each chosen Job (a Job object, or a Job that owns pods of the snapshot) gets a
  scheduler-plugins ``PodGroup`` of its name with ``minMember`` its ``parallelism`` (without the Job
  object, the number of its unfinished pods); its pods and its template are labelled
  ``scheduling.x-k8s.io/pod-group``; the scheduler serving them runs Coscheduling as
  scheduler-plugins' README configures it (``multiPoint`` and ``queueSort``): added to that
  scheduler's ``KubeSchedulerConfiguration``, or, for ``default-scheduler`` without one, a
  configuration whose ``default-scheduler`` profile has it (the cluster's kube-scheduler replaced by
  scheduler-plugins' build). A Job whose pods are already in a pod group is left as it is.
- ``set``: field overrides (``gpufleet.experiments.overrides``).

Whatever a change names that the snapshot lacks is an error of the change's document, one line each.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from gpufleet.autoscaling.scale_down import TO_BE_DELETED
from gpufleet.autoscaling.soft_taints import DELETION_CANDIDATE_TAINT_KEY
from gpufleet.experiments.overrides import OverrideError
from gpufleet.experiments.overrides import apply as apply_overrides
from gpufleet.experiments.whatif_owners import controllers, owned_by, templates
from gpufleet.kube.change_kind import AddNodes, ChangeSpec, Delete, PodEdit, Selector, is_change, read_change
from gpufleet.kube.documents import Document
from gpufleet.kube.objects import controller_of, items, mapping
from gpufleet.kube.pod_affinity import label_selector
from gpufleet.kube.problems import Location, Problems, Reporter, ScenarioError, duplicate, invalid
from gpufleet.model.pod import POD_GROUP_LABEL
from gpufleet.model.pod_affinity import selects

DEFAULT_SCHEDULER = "default-scheduler"
SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"
_HOSTNAME_LABEL = "kubernetes.io/hostname"
_LIFECYCLE_TAINTS = "node.kubernetes.io/"
#: cluster-autoscaler's taints on a node it deletes or may delete (``SanitizeTaints`` drops them)
_AUTOSCALER_TAINTS = (TO_BE_DELETED.key, DELETION_CANDIDATE_TAINT_KEY)
_FINISHED = ("Succeeded", "Failed")
_COSCHEDULING = "Coscheduling"
POOL_SUFFIX = "-whatif"


def _kind(body: dict[str, Any]) -> tuple[str, str]:
    """(API group, kind)."""
    return str(body.get("apiVersion") or "").rpartition("/")[0], str(body.get("kind") or "")


def _meta(body: dict[str, Any]) -> dict[str, Any]:
    return mapping(body.get("metadata"))


def _namespace(body: dict[str, Any]) -> str:
    return str(_meta(body).get("namespace") or "default")


def _name(body: dict[str, Any]) -> str:
    return str(_meta(body).get("name") or "")


def identity(body: dict[str, Any]) -> tuple[str, str, str, str]:
    """What names an object: API group, kind, namespace (``default`` when absent) and name."""
    return (*_kind(body), _namespace(body), _name(body))


def scheduler_names(body: dict[str, Any]) -> set[str]:
    """The profiles' ``schedulerName`` of a KubeSchedulerConfiguration (none: ``default-scheduler``)."""
    profiles = items(body.get("profiles"))
    return {str(p.get("schedulerName") or DEFAULT_SCHEDULER) for p in profiles} or {DEFAULT_SCHEDULER}


def set_duration(documents: list[Document], duration: object, where: Location) -> None:
    """The Simulation's ``spec.duration`` set to ``duration``; a Simulation is added if there is none."""
    simulation = next((d for d in documents if _kind(d.body) == ("gpufleet.io", "Simulation")), None)
    if simulation is None:
        body = {"apiVersion": "gpufleet.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "whatif"}}
        simulation = Document(where, len(documents), body)
        documents.append(simulation)
    spec = simulation.body.get("spec")
    simulation.body["spec"] = {**(spec if isinstance(spec, dict) else {}), "duration": duration}


def json_copy(value: Any) -> Any:
    """A document's own copy, to change without touching the snapshot's: its dicts and lists made anew,
    its strings, numbers, bools and None shared (a YAML alias becomes a copy of its own, as Kubernetes
    reads it). ``copy.deepcopy`` did the same at twice the cost, keeping a memo of every object."""
    if isinstance(value, dict):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_copy(item) for item in value]
    return value


def apply_changes(
    documents: list[Document], from_change: Callable[[Document], bool], duration: object, where: Location
) -> None:
    """``kube.load_scenario``'s ``edit``: the snapshot's documents with the changes' applied, in place;
    ``ScenarioError`` for what a Change names that is not there."""
    snapshot = [replace(d, body=json_copy(d.body)) for d in documents if not from_change(d)]
    edit = _Edit(snapshot, Problems())
    changes = []
    for document in (d for d in documents if from_change(d)):
        if is_change(document.body):
            changes.append(document)
        else:
            edit.put(document)
    set_duration(edit.documents, duration, where)
    for document in changes:
        report = Reporter(edit.problems, document.location)
        name = _name(document.body)
        report.label = f"Change/{name}" if name else "Change"
        spec = read_change(document.body, report)
        if spec is not None:
            edit.change(spec, report)
    if edit.problems.errors:
        raise ScenarioError(Problems.lines(edit.problems.errors))
    set_duration(edit.documents, duration, where)
    documents[:] = [replace(d, order=i) for i, d in enumerate(edit.documents)]


@dataclass
class _Edit:
    documents: list[Document]
    problems: Problems
    _pools: set[str] = field(default_factory=set)

    def of_kind(self, group: str, kind: str) -> Iterator[Document]:
        return (d for d in self.documents if _kind(d.body) == (group, kind))

    # -- ordinary documents -----------------------------------------------------------------
    def put(self, document: Document) -> None:
        body = document.body
        if _kind(body)[1] == SCHEDULER_CONFIG_KIND:
            names = scheduler_names(body)
            replaced = [
                i
                for i, d in enumerate(self.documents)
                if _kind(d.body)[1] == SCHEDULER_CONFIG_KIND and scheduler_names(d.body) & names
            ]
        elif _kind(body) == ("gpufleet.io", "Simulation"):
            replaced = [i for i, d in enumerate(self.documents) if _kind(d.body) == _kind(body)]
        else:
            replaced = [i for i, d in enumerate(self.documents) if identity(d.body) == identity(body)]
        if replaced:  # in the place of the first, so a pod keeps its place in the queue
            self.documents[replaced[0]] = document
            self.documents = [d for i, d in enumerate(self.documents) if i not in replaced[1:]]
        else:
            self.documents.append(document)

    # -- a Change ---------------------------------------------------------------------------
    def change(self, spec: ChangeSpec, report: Reporter) -> None:
        for i, gone in enumerate(spec.delete):
            self.delete(gone, report.at(f"spec.delete[{i}]"))
        for i, add in enumerate(spec.add_nodes):
            self.add_nodes(add, report.at(f"spec.addNodes[{i}]"), report.location)
        for i, edit in enumerate(spec.pods):
            self.edit_pods(edit, report.at(f"spec.pods[{i}]"))
        for i, gang in enumerate(spec.gangs):
            self.gangs(gang, report.at(f"spec.gangs[{i}]"), report.location)
        try:
            apply_overrides(list(spec.overrides.items()), self.documents)
        except OverrideError as exc:
            report.error("spec.set", str(exc))

    def delete(self, gone: Delete, report: Reporter) -> None:
        group = None if gone.api_version is None else gone.api_version.rpartition("/")[0]

        def named(body: dict[str, Any]) -> bool:
            return (
                _kind(body)[1] == gone.kind
                and _name(body) == gone.name
                and (group is None or _kind(body)[0] == group)
                and (gone.namespace is None or _namespace(body) == gone.namespace)
            )

        if not any(named(d.body) for d in self.documents):
            shown = "/".join(p for p in (gone.kind, gone.namespace, gone.name) if p)
            report.error("", invalid(shown, "no such object in the snapshot"))
            return
        nodes = {_name(d.body) for d in self.documents if named(d.body) and _kind(d.body) == ("", "Node")}

        def orphaned(body: dict[str, Any]) -> bool:
            return _kind(body) == ("", "Pod") and mapping(body.get("spec")).get("nodeName") in nodes

        self.documents = [d for d in self.documents if not named(d.body) and not orphaned(d.body)]

    def add_nodes(self, add: AddNodes, report: Reporter, where: Location) -> None:
        nodes = sorted(self.of_kind("", "Node"), key=lambda d: _name(d.body))
        if add.like is not None:
            like = next((d for d in nodes if _name(d.body) == add.like), None)
            if like is None:
                report.error("like", invalid(add.like, "no Node of this name in the snapshot"))
                return
        else:
            chosen = label_selector(add.like_selector, report, "likeSelector")
            like = next((d for d in nodes if selects(chosen, _labels(d.body))), None)
            if like is None:
                report.error("likeSelector", invalid(add.like_selector, "selects no Node of the snapshot"))
                return
        pool = _name(like.body) + POOL_SUFFIX
        if pool in self._pools or any(_name(d.body) == pool for d in self.of_kind("gpufleet.io", "NodePool")):
            report.error("", duplicate(pool, "a NodePool of this name is already made or given"))
            return
        self._pools.add(pool)
        spec: dict[str, Any] = {"replicas": add.count, "template": _template(like.body)}
        spec.update({k: v for k, v in add.given().items() if k not in ("like", "likeSelector", "count")})
        body = {
            "apiVersion": "gpufleet.io/v1alpha1",
            "kind": "NodePool",
            "metadata": {"name": pool},
            "spec": spec,
        }
        self.documents.append(Document(where, len(self.documents), body))

    def edit_pods(self, edit: PodEdit, report: Reporter) -> None:
        chosen = self.chosen(self.of_kind("", "Pod"), edit.selector, report.at("selector"))
        if chosen is None:
            return
        found = controllers(d.body for d in self.documents)
        owner = edit.selector.owner
        if owner is not None:
            chosen = [d for d in chosen if owned_by(d.body, owner, found)]
        reached = []
        if edit.set.annotations:
            labels = label_selector(edit.selector.label_selector, report, "selector.labelSelector")
            reached = templates(edit.selector, lambda given: selects(labels, given), found)
        if not chosen and not reached:
            what = "Pod or pod template" if edit.set.annotations else "Pod"
            report.error("selector", invalid(edit.selector.given(), f"selects no {what} of the snapshot"))
            return
        for document in chosen:
            if not isinstance(document.body.get("spec"), dict):
                document.body["spec"] = {}
            spec = document.body["spec"]
            if edit.set.priority_class_name is not None:
                spec["priorityClassName"] = edit.set.priority_class_name
                spec.pop("priority", None)
                spec.pop("preemptionPolicy", None)
            if edit.set.scheduler_name is not None:
                spec["schedulerName"] = edit.set.scheduler_name
        for body in [*(d.body for d in chosen), *reached]:
            _annotate(body, edit.set.annotations or {})

    def chosen(
        self, documents: Iterator[Document], selector: Selector, report: Reporter
    ) -> list[Document] | None:
        """The documents a selector chooses; None after reporting a bad label selector."""
        errors = report.error_count
        labels = label_selector(selector.label_selector, report, "labelSelector")
        if report.error_count > errors:
            return None
        return [
            d
            for d in documents
            if (selector.namespace is None or _namespace(d.body) == selector.namespace)
            and (selector.names is None or _name(d.body) in selector.names)
            and (selector.label_selector is None or selects(labels, _labels(d.body)))
        ]

    def gangs(self, selector: Selector, report: Reporter, where: Location) -> None:
        jobs = {(_namespace(d.body), _name(d.body)): d.body for d in self.of_kind("batch", "Job")}
        members: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod in (d.body for d in self.of_kind("", "Pod")):
            owner = controller_of(pod)
            if owner is not None and owner.kind == "Job":
                members.setdefault((_namespace(pod), owner.name), []).append(pod)
        # A Job known only through its pods is chosen by its pods' labels (its template's).
        known = [
            Document(where, 0, jobs.get(key) or _job_of(key, members[key]))
            for key in sorted({*jobs, *members})
        ]
        chosen = self.chosen(iter(known), selector, report)
        if chosen is None:
            return
        if not chosen:
            report.error("", invalid(selector.given(), "selects no Job of the snapshot"))
            return
        schedulers: set[str] = set()
        for job in (d.body for d in chosen):
            key = (_namespace(job), _name(job))
            pods = [p for p in members.get(key, []) if mapping(p.get("status")).get("phase") not in _FINISHED]
            if any(POD_GROUP_LABEL in _labels(p) for p in pods):
                continue  # already a gang
            for pod in pods:
                _label(pod, key[1])
                schedulers.add(str(mapping(pod.get("spec")).get("schedulerName") or DEFAULT_SCHEDULER))
            template = mapping(mapping(job.get("spec")).get("template"))
            if key in jobs and template:
                _label(template, key[1])
                schedulers.add(str(mapping(template.get("spec")).get("schedulerName") or DEFAULT_SCHEDULER))
            size = mapping(job.get("spec")).get("parallelism", 1) if key in jobs else len(pods)
            group = {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": key[1], "namespace": key[0]},
                "spec": {"minMember": size},
            }
            if not any(identity(d.body) == identity(group) for d in self.documents):
                self.documents.append(Document(where, len(self.documents), group))
        for scheduler in sorted(schedulers):
            self.coscheduling(scheduler, where)

    def coscheduling(self, scheduler: str, where: Location) -> None:
        """The scheduler ``scheduler`` runs Coscheduling (scheduler-plugins' README configuration)."""
        config = next(
            (d for d in self.of_kind(*_SCHEDULER_GVK) if scheduler in scheduler_names(d.body)), None
        )
        if config is None:
            if scheduler != DEFAULT_SCHEDULER:
                return  # no such scheduler: its pods stay Pending, and say so
            body = {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": SCHEDULER_CONFIG_KIND,
                "profiles": [],
            }
            config = Document(where, len(self.documents), body)
            self.documents.append(config)
        profiles = config.body.get("profiles")
        if not isinstance(profiles, list) or not profiles:
            profiles = config.body["profiles"] = [{"schedulerName": DEFAULT_SCHEDULER}]
        for profile in (p for p in profiles if isinstance(p, dict)):
            plugins = profile.setdefault("plugins", {})
            multi = plugins.setdefault("multiPoint", {}).setdefault("enabled", [])
            if not any(mapping(p).get("name") == _COSCHEDULING for p in multi):
                multi.append({"name": _COSCHEDULING})
            # every profile of one scheduler shares its QueueSort plugin
            plugins["queueSort"] = {"enabled": [{"name": _COSCHEDULING}], "disabled": [{"name": "*"}]}


_SCHEDULER_GVK = ("kubescheduler.config.k8s.io", SCHEDULER_CONFIG_KIND)


def _labels(body: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping(_meta(body).get("labels")).items()}


def _label(body: dict[str, Any], group: str) -> None:
    """``body`` (a pod or a pod template) labelled a member of pod group ``group``."""
    if not isinstance(body.get("metadata"), dict):
        body["metadata"] = {}
    labels = body["metadata"].get("labels")
    body["metadata"]["labels"] = {**(labels if isinstance(labels, dict) else {}), POD_GROUP_LABEL: group}


def _annotate(body: dict[str, Any], annotations: dict[str, str]) -> None:
    """``body`` (a pod or a pod template) given ``annotations``, over those it has."""
    if not annotations:
        return
    if not isinstance(body.get("metadata"), dict):
        body["metadata"] = {}
    given = body["metadata"].get("annotations")
    body["metadata"]["annotations"] = {**(given if isinstance(given, dict) else {}), **annotations}


def _job_of(key: tuple[str, str], pods: list[dict[str, Any]]) -> dict[str, Any]:
    """A Job known only through its pods, as the selector sees it: its first pod's labels."""
    labels = _labels(pods[0]) if pods else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"namespace": key[0], "name": key[1], "labels": labels},
    }


def _template(node: dict[str, Any]) -> dict[str, Any]:
    """A NodePool template like ``node``: what a new node of the same machine type would carry. Its taints
    without those of the node's state: the node lifecycle controller's and ``kubectl cordon``'s, and
    cluster-autoscaler's own (``ToBeDeletedByClusterAutoscaler``, ``DeletionCandidateOfClusterAutoscaler``),
    which it drops too when it makes a template from a node (``taints.SanitizeTaints``)."""
    labels = {k: v for k, v in _labels(node).items() if k != _HOSTNAME_LABEL}
    taints = [
        t
        for t in items(mapping(node.get("spec")).get("taints"))
        if not str(t.get("key", "")).startswith(_LIFECYCLE_TAINTS) and t.get("key") not in _AUTOSCALER_TAINTS
    ]
    status = mapping(node.get("status"))
    template: dict[str, Any] = {"metadata": {"labels": labels}}
    if taints:
        template["spec"] = {"taints": [{k: v for k, v in t.items() if k != "timeAdded"} for t in taints]}
    template["status"] = {
        k: copy.deepcopy(status[k]) for k in ("capacity", "allocatable", "images") if k in status
    }
    return template
