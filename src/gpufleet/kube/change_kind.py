"""gpufleet's ``Change`` kind (``gpufleet.io/v1alpha1``): edits of a snapshot that no object expresses.

``gpufleet whatif SNAPSHOT CHANGE.yaml`` adds every ordinary document of a change file to the
snapshot (replacing the object of the same group, kind, namespace and name); a ``Change`` says what
else to do, in this order: ``delete`` objects (``{kind, name, namespace, apiVersion}``), ``addNodes``
(``count`` more nodes ``like`` a Node of the snapshot, or like the first Node, by name, that
``likeSelector`` selects, with the pool fields ``pricePerHour``, ``min``, ``max``, ``warm`` and
``provisioning``), ``pods`` (``selector`` of ``namespace``, ``names``, ``labelSelector`` and ``owner``, the
pods' controller ``{kind, name}``, and the fields to ``set``: ``priorityClassName``, ``schedulerName``
and ``annotations``, the start-up ones only: ``gpufleet.io/warmup``, ``image-size`` and ``model-size``,
read by ``kube.pod_annotations`` as on a pod), ``gangs`` (Jobs chosen by ``namespace``,
``names`` and ``labelSelector``, each made a Coscheduling gang), then ``set`` (field overrides written as
``compare --grid`` parameters: ``Simulation.spec.autoscaler.expander: priority``). The spec is read
strictly, as the API server decodes a custom resource (an unknown field is an error); what the edits
name is looked up in the snapshot by ``gpufleet.experiments.whatif_changes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from gpufleet.kube import pod_annotations, schema_check
from gpufleet.kube.kinds import CHANGE
from gpufleet.kube.problems import Reporter, forbidden, required, unsupported
from gpufleet.kube.spec_model import NonNegativeInt, SpecModel, validate

_TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec")
#: The pod annotations a Change may set: what a measured start chain gives a pod.
START_UP_ANNOTATIONS = (pod_annotations.WARMUP, pod_annotations.IMAGE_SIZE, pod_annotations.MODEL_SIZE)


class Selector(SpecModel):
    """Objects chosen by namespace, names and labels (ANDed; an empty selector chooses every one)."""

    namespace: str | None = None
    names: list[str] | None = None
    label_selector: dict[str, Any] | None = None  # a metav1.LabelSelector


class AddNodes(SpecModel):
    like: str | None = None
    like_selector: dict[str, Any] | None = None  # a metav1.LabelSelector over the snapshot's Nodes
    count: Annotated[int, Field(ge=1)]
    price_per_hour: Annotated[float, Field(ge=0)] | None = None
    min: NonNegativeInt | None = None
    max: NonNegativeInt | None = None
    warm: NonNegativeInt | None = None
    provisioning: dict[str, Any] | None = None


class Owner(SpecModel):
    """A controller, as a pod's controlling ``ownerReference`` names it."""

    kind: str
    name: str


class PodSelector(Selector):
    owner: Owner | None = None


class PodFields(SpecModel):
    priority_class_name: str | None = None
    scheduler_name: str | None = None
    annotations: dict[str, str] | None = None


class PodEdit(SpecModel):
    selector: PodSelector
    set: PodFields


class Delete(SpecModel):
    api_version: str | None = None
    kind: str
    name: str
    namespace: str | None = None


class ChangeSpec(SpecModel):
    delete: list[Delete] = Field(default_factory=list)
    add_nodes: list[AddNodes] = Field(default_factory=list)
    pods: list[PodEdit] = Field(default_factory=list)
    gangs: list[Selector] = Field(default_factory=list)
    overrides: dict[str, Any] = Field(default_factory=dict, alias="set")


def is_change(body: Mapping[str, Any]) -> bool:
    api_version = body.get("apiVersion")
    return isinstance(api_version, str) and (*api_version.rpartition("/")[::2], body.get("kind")) == CHANGE


def read_change(body: Mapping[str, Any], report: Reporter) -> ChangeSpec | None:
    """The Change's spec, or None after reporting why it cannot be read."""
    for key in body:
        if key not in _TOP_LEVEL:
            report.error(key, f"Additional properties are not allowed ({key!r} was unexpected)")
    if "metadata" in body:
        schema_check.check(body["metadata"], schema_check.OBJECT_META, report.at("metadata"))
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    errors = report.error_count
    spec = validate(ChangeSpec, body["spec"], report, "spec")
    if spec is None or report.error_count > errors:  # a field pruned as wrong would be reported again
        return None
    for i, add in enumerate(spec.add_nodes):
        if (add.like is None) == (add.like_selector is None):
            report.error(f"spec.addNodes[{i}]", forbidden("give exactly one of like and likeSelector"))
    for i, edit in enumerate(spec.pods):
        if not edit.set.given():
            report.error(f"spec.pods[{i}].set", required("priorityClassName, schedulerName or annotations"))
        _check_annotations(edit.set.annotations or {}, report.at(f"spec.pods[{i}].set"))
    return spec if report.error_count == errors else None


def _check_annotations(annotations: Mapping[str, str], report: Reporter) -> None:
    """Only the start-up annotations, each a value a pod could carry."""
    for key in annotations:
        if key not in START_UP_ANNOTATIONS:
            report.error(f"annotations.{key}", unsupported(key, START_UP_ANNOTATIONS))
    pod_annotations.read({k: v for k, v in annotations.items() if k in START_UP_ANNOTATIONS}, report)
