"""Pods and pod templates: the scheduling-relevant spec plus simulated behaviour.

Node affinity mirrors ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``:
required terms are ORed, the expressions of one term are ANDed, operators ``In``,
``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``; ``matchFields`` supports
``metadata.name`` (how DaemonSet pods are pinned). ``spec.nodeSelector`` must match as well. A term
the selector parser refuses (an invalid label value, a non-integer ``Gt``) matches no node.
Inter-pod (anti-)affinity terms and topology spread constraints are ``model.pod_affinity``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from gpufleet.model.gpu_share import GpuShare
from gpufleet.model.label_syntax import go_strings, parse_int64, requirement_problems, unsupported
from gpufleet.model.node import Node, Toleration
from gpufleet.model.replacer import replacer
from gpufleet.model.resources import GPU, Resources

if TYPE_CHECKING:
    from gpufleet.model.dra import PodResourceClaim
    from gpufleet.model.host_ports import HostPort
    from gpufleet.model.pod_affinity import PodAffinity, TopologySpreadConstraint
    from gpufleet.model.probes import LivenessProbe

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: how a pod joins a Volcano PodGroup (``KubeGroupNameAnnotationKey``, read by Volcano's scheduler)
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
#: ``nodeaffinity.validFieldSelectorOperators``
FIELD_OPERATORS = ("In", "NotIn")
DEFAULT_SCHEDULER = "default-scheduler"
#: in ``Behavior.ungate_at``: every scheduling gate (``gpufleet.io/ungate-at`` written as one duration)
ALL_GATES = "*"


@dataclass(frozen=True)
class Requirement:
    """One label selector requirement (``key``, ``operator``, ``values``), of a node selector term or a
    pod label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        op = self.operator
        if op == "In":
            return present and value in self.values
        if op == "NotIn":
            return not present or value not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt") and value is not None and len(self.values) == 1:
            have, want = parse_int64(value), parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == "Gt" else have < want
        return False


@dataclass(frozen=True)
class SelectorTerm:
    """One ``nodeSelectorTerms`` entry; an empty term matches nothing, as upstream, and so does a term
    that ``nodeaffinity.newNodeSelectorTerm`` cannot parse (``parse_errors``)."""

    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()

    @cached_property
    def parse_errors(self) -> tuple[str, ...]:
        """``labels.NewRequirement``'s complaints about the expressions, and the field selector's
        (``In``/``NotIn`` with one value) about the fields, as ``matchExpressions[i].…`` paths."""
        errs = [
            f"matchExpressions[{i}].{e}"
            for i, r in enumerate(self.expressions)
            for e in requirement_problems(r.key, r.operator, r.values)
        ]
        errs.extend(
            f"matchFields[{i}].values: Invalid value: {go_strings(r.values)}: must have one element"
            if r.operator in FIELD_OPERATORS
            else f"matchFields[{i}].operator: {unsupported(r.operator, FIELD_OPERATORS)}"
            for i, r in enumerate(self.fields)
            if r.operator not in FIELD_OPERATORS or len(r.values) != 1
        )
        return tuple(errs)

    def matches(self, node: Node) -> bool:
        if (not self.expressions and not self.fields) or self.parse_errors:
            return False
        return all(r.matches(node.labels) for r in self.expressions) and all(
            r.matches({"metadata.name": node.name}) for r in self.fields
        )


@dataclass(frozen=True)
class PreferredTerm:
    """A preferred node affinity term with its weight
    (``preferredDuringSchedulingIgnoredDuringExecution``)."""

    weight: int
    term: SelectorTerm


@dataclass(frozen=True)
class Behavior:
    """What the simulator does with a pod once it runs (``gpufleet.io/*`` annotations).

    ``warmup`` keeps the raw duration spec (a duration, ``{median, p95}`` or ``{min, max}``),
    parsed by ``gpufleet.lifecycle.distributions``.
    """

    submit_at_s: float = 0.0
    duration_s: float | None = None
    checkpoint_interval_s: float | None = None
    checkpoint_save_s: float = 0.0  # the time one checkpoint takes to write, computing paused
    image: str = ""  # the first container's image: what the node caches
    #: the first container's ``imagePullPolicy`` as given (empty: defaulted, ``kubelet_events.pull_policy``)
    image_pull_policy: str = ""
    image_size_bytes: float | None = None
    model_size_bytes: float | None = None
    warmup: object = None
    gpu_memory_bytes: float | None = None
    checkpoint_on_sigterm: bool = False
    requeue_on_sigterm: bool = False
    time_limit_s: float | None = None
    consumes: str | None = None  # gpufleet.io/consumes: the work-item list it pops from
    delete_at_s: float | None = (
        None  # gpufleet.io/delete-at: deleted then, wherever it is (a trace's deletion)
    )
    #: gpufleet.io/ungate-at: when each scheduling gate goes, as (gate or ALL_GATES, seconds from the start)
    ungate_at: tuple[tuple[str, float], ...] = ()
    #: (``namespace/name``, size): the ranks of a distributed job its process waits for before it
    #: computes (torchrun's rendezvous, MPI's world), set by the job's controller; not a scheduling gang
    rendezvous: tuple[str, int] | None = None
    #: gpufleet.io/cpu-usage, gpufleet.io/memory-usage: its constant usage while it runs (cores, bytes),
    #: what the metrics server reports (it wins over its Traffic's)
    cpu_usage: float | None = None
    memory_usage_bytes: float | None = None
    #: the first container's name: the ``container`` label of its cAdvisor usage series
    container: str = ""
    #: gpufleet.io/exit-code: the exit code of its first container once its work is done (None: 0); a
    #: non-zero one fails the pod under ``restartPolicy: Never``, restarts the container otherwise
    exit_code: int | None = None


#: A pod's behaviour where its annotations say nothing.
DEFAULT_BEHAVIOR = Behavior()


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """The controller that owns a pod (``metadata.ownerReferences`` with ``controller: true``): its kind
    and name."""

    kind: str
    name: str


@dataclass
class Pod:
    """A pod, or a pod template when ``name`` is empty (controllers stamp names on copies)."""

    name: str
    namespace: str = "default"
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    requests: Resources = field(default_factory=dict)
    priority: int = 0
    priority_class_name: str | None = None
    preemption_policy: str = "PreemptLowerPriority"
    scheduler_name: str = DEFAULT_SCHEDULER
    node_name: str | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    required_terms: tuple[SelectorTerm, ...] | None = None
    preferred_terms: tuple[PreferredTerm, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    restart_policy: str = "Always"
    termination_grace_s: float = 30.0
    behavior: Behavior = DEFAULT_BEHAVIOR  # (frozen: one shared default, not one built per pod)
    owner: OwnerRef | None = None
    resource_claims: tuple[PodResourceClaim, ...] = ()  # spec.resourceClaims (DRA)
    gpu_share: GpuShare | None = None  # a fractional GPU request (KAI annotations, HAMi resources)
    #: the requests scoring counts (``NonMissingContainerRequests``): each container's missing cpu and
    #: memory request as 100m and 200Mi, an explicit 0 kept; None: ``requests`` as one container's
    nonzero_requests: Resources | None = None
    #: what the reader warned that this pod (or its template) uses but gpufleet does not model, as
    #: field paths relative to the pod (``spec.volumes[0].persistentVolumeClaim``): ``explain``
    #: cannot judge such a pod's placement
    not_modelled: tuple[str, ...] = ()
    #: ``spec.schedulingGates`` still in place: the SchedulingGates plugin keeps the pod out of the queue
    scheduling_gates: tuple[str, ...] = ()
    #: the host ports its containers (and sidecar init containers) bind (NodePorts)
    host_ports: tuple[HostPort, ...] = ()
    #: every init and app container's image, normalised (ImageLocality)
    images: tuple[str, ...] = ()
    #: ``spec.affinity.podAffinity`` / ``podAntiAffinity`` (``model.pod_affinity``), None without either
    pod_affinity: PodAffinity | None = None
    #: ``spec.topologySpreadConstraints``
    spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    #: the first (computing) container's ``livenessProbe``: the kubelet restarts a hung process
    liveness_probe: LivenessProbe | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def gpus(self) -> int:
        return self.requests.get(GPU, 0)

    @property
    def pod_group(self) -> str | None:
        """The gang it belongs to: the scheduler-plugins label, else Volcano's annotation, or for KAI
        Scheduler's pods the pod grouper's ``pod-group-name`` annotation."""
        label = self.labels.get(POD_GROUP_LABEL) or self.annotations.get(VOLCANO_GROUP_ANNOTATION)
        if not label and self.scheduler_name == "kai-scheduler":
            return self.annotations.get("pod-group-name")
        return label or None

    def shape(self) -> tuple[object, ...]:
        """What the filters and scores depend on: pods of one shape share cached node masks."""
        return (
            tuple(sorted(self.requests.items())),
            tuple(sorted(self.node_selector.items())),
            self.required_terms,
            self.preferred_terms,
            self.tolerations,
            self.node_name,
            self.resource_claims and (self.namespace, self.name),  # DRA pods are evaluated one by one
            self.gpu_share,
            tuple(sorted(self.nonzero_requests.items())) if self.nonzero_requests is not None else None,
            self.host_ports,
            self.images,
        )

    def matches_node_selector(self, node: Node) -> bool:
        """NodeAffinity's filter: ``nodeSelector`` and required affinity both hold."""
        if any(node.labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        if self.required_terms is None:
            return True
        return any(term.matches(node) for term in self.required_terms)

    def renamed(self, name: str) -> Pod:
        """``dataclasses.replace(self, name=name)`` (every other field the same object): the FGD protocol's
        tuned copies of trace pods."""
        return _with(self, name=name)

    def stamped(
        self, name: str, owner: OwnerRef, labels: dict[str, str] | None = None, namespace: str | None = None
    ) -> Pod:
        """A copy of this template with a controller-chosen name (in ``namespace``, if given)."""
        return _with(
            self,
            name=name,
            namespace=self.namespace if namespace is None else namespace,
            owner=owner,
            labels={**self.labels, **(labels or {})},
            annotations=dict(self.annotations),
        )


#: ``dataclasses.replace`` of a pod, at a third of its cost (``Pod.renamed``, ``Pod.stamped``)
_with = replacer(Pod)
