"""What a ``Change``'s pod edit reaches through controllers (``gpufleet.experiments.whatif_changes``).

``selector.owner: {kind, name}`` chooses the pods whose controlling ``ownerReference``
(``metav1.GetControllerOf``) names that controller, in the pod's namespace. A Deployment's pods are
those of its ReplicaSets: a ReplicaSet of the snapshot whose own controller is the Deployment
(``getReplicaSetsForDeployment``), or, without the ReplicaSet in the snapshot, the one named
``<deployment>-<pod-template-hash>`` after the pod's ``pod-template-hash`` label (the name the
Deployment controller gives its ReplicaSets, as ``kube.adoption`` reads it).

The start-up annotations of a pod edit also go to the pod templates (``spec.template``) of the
snapshot's Jobs, Deployments, ReplicaSets, DaemonSets and StatefulSets that would make a pod the selector
chooses:
in its ``namespace``, with template labels its ``labelSelector`` selects, the controller its ``owner``
names; none when it names pods by ``names`` (a pod made later has another name). A Deployment and its
ReplicaSets are edited together, so that its current ReplicaSet's template stays equal to the
Deployment's (``EqualIgnoreHash``, deployment/util) and the edit starts no rollout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gpufleet.kube.adoption import deployment_by_hash
from gpufleet.kube.change_kind import Owner, PodSelector
from gpufleet.kube.objects import controller_of, mapping

#: (API group, kind) of the controllers whose ``spec.template`` makes their pods.
CONTROLLERS = frozenset(
    {
        ("batch", "Job"),
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "DaemonSet"),
        ("apps", "StatefulSet"),
    }
)

#: kind, namespace, name
Ref = tuple[str, str, str]


def _ref(body: Mapping[str, Any]) -> Ref:
    metadata = mapping(body.get("metadata"))
    namespace = str(metadata.get("namespace") or "default")
    return str(body.get("kind") or ""), namespace, str(metadata.get("name") or "")


def controllers(bodies: Iterable[dict[str, Any]]) -> dict[Ref, dict[str, Any]]:
    """The snapshot's controllers that have a pod template, by kind, namespace and name."""
    return {
        _ref(body): body
        for body in bodies
        if (str(body.get("apiVersion") or "").rpartition("/")[0], body.get("kind")) in CONTROLLERS
    }


def owned_by(pod: Mapping[str, Any], owner: Owner, found: Mapping[Ref, Mapping[str, Any]]) -> bool:
    """Whether ``owner`` controls ``pod``, directly or (a Deployment) through its ReplicaSet."""
    ref = controller_of(pod)
    if ref is None:
        return False
    if (ref.kind, ref.name) == (owner.kind, owner.name):
        return True
    if (owner.kind, ref.kind) != ("Deployment", "ReplicaSet"):
        return False
    replica_set = found.get(("ReplicaSet", _ref(pod)[1], ref.name))
    if replica_set is not None:
        above = controller_of(replica_set)
        return above is not None and (above.kind, above.name) == ("Deployment", owner.name)
    labels = mapping(mapping(pod.get("metadata")).get("labels"))
    return deployment_by_hash(ref.name, {str(k): str(v) for k, v in labels.items()}) == owner.name


def templates(
    selector: PodSelector, selects: Callable[[dict[str, str]], bool], found: Mapping[Ref, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The pod templates (``spec.template``, edited in place) of the controllers ``selector`` reaches;
    ``selects`` says whether its label selector (if any) selects a template's labels."""
    if selector.names is not None:
        return []

    def family(ref: Ref) -> Ref:
        """A ReplicaSet of a Deployment of the snapshot is that Deployment's."""
        above = controller_of(found[ref])
        if ref[0] == "ReplicaSet" and above is not None and above.kind == "Deployment":
            deployment = ("Deployment", ref[1], above.name)
            return deployment if deployment in found else ref
        return ref

    def template(body: Mapping[str, Any]) -> dict[str, Any]:
        return mapping(mapping(body.get("spec")).get("template"))

    def labels(body: Mapping[str, Any]) -> dict[str, str]:
        metadata = mapping(template(body).get("metadata"))
        return {str(k): str(v) for k, v in mapping(metadata.get("labels")).items()}

    chosen = {
        family(ref)
        for ref, body in found.items()
        if (selector.namespace is None or ref[1] == selector.namespace)
        and (selector.owner is None or (ref[0], ref[2]) == (selector.owner.kind, selector.owner.name))
        and (selector.label_selector is None or selects(labels(body)))
    }
    return [template(body) for ref, body in found.items() if family(ref) in chosen and template(body)]
