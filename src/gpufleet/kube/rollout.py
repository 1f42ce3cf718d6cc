"""The ``Rollout`` kind (``gpufleet.io/v1alpha1``): at ``spec.at`` the pod template of the Deployment
``spec.deployment`` (in the Rollout's namespace) changes, as ``kubectl apply``, ``kubectl set image`` or
``kubectl rollout restart`` changes it.

``spec.template`` is a partial pod template merged into the Deployment's as a strategic merge patch merges
it (``kubectl patch``): maps key by key, ``containers``, ``initContainers`` and a container's ``env`` and
``ports`` by ``name`` (a container the Deployment does not have is an error; a new ``env`` entry is added),
any other list replaced. ``spec.restart: true`` sets the template's ``kubectl.kubernetes.io/restartedAt``
annotation to the time of the change (RFC 3339, from the Simulation's ``startTime``), as ``kubectl rollout
restart`` does. Several Rollouts of one Deployment apply in time order, each over the template the one
before left.

The new ReplicaSet's ``pod-template-hash`` is upstream's encoding (``ComputeHash``: an FNV-1a 32-bit hash,
its decimal digits through ``rand.SafeEncodeString``) of the template's canonical JSON (upstream hashes the
Go object's ``spew`` dump, which gpufleet does not reproduce: the hash differs from a cluster's)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from copy import deepcopy
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gpufleet.kube.gpufleet_kinds import NonNegativeDuration
from gpufleet.kube.objects import Meta, items, mapping
from gpufleet.kube.priorities import Priorities
from gpufleet.kube.problems import Reporter, invalid, required
from gpufleet.kube.spec_model import SpecModel, validate
from gpufleet.kube.workloads import check_selector, pod_template
from gpufleet.model.generated_names import ALPHANUMS
from gpufleet.model.pod import Pod
from gpufleet.model.workloads import TemplateChange
from gpufleet.workloads.kind import CONTROLLER_RESTART_POLICIES

#: the annotation ``kubectl rollout restart`` sets on the template
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
#: lists merged by their items' ``name`` (the ``patchMergeKey`` of ``PodSpec`` and ``Container``)
_BY_NAME = ("containers", "initContainers", "env", "ports")
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193


class RolloutSpec(SpecModel):
    at: NonNegativeDuration
    deployment: str
    template: dict[str, Any] | None = None
    restart: bool = False


@dataclass(frozen=True)
class RolloutRequest:
    """A Rollout as read, resolved against its Deployment once every document is read."""

    name: str
    namespace: str
    at_s: float
    deployment: str
    template: Mapping[str, Any]
    restart: bool
    report: Reporter


def rollout(meta: Meta, body: Mapping[str, Any], report: Reporter) -> RolloutRequest | None:
    if body.get("spec") is None:
        report.error("spec", required())
        return None
    spec = validate(RolloutSpec, body["spec"], report, "spec")
    if spec is None:
        return None
    if spec.template is None and not spec.restart:
        report.error(
            "spec.template", required("a Rollout changes the template, or restarts it (restart: true)")
        )
        return None
    return RolloutRequest(
        meta.name, meta.namespace, spec.at, spec.deployment, spec.template or {}, spec.restart, report
    )


def _merge_named(base: list[Any], patch: list[Any], path: str, report: Reporter, known: bool) -> list[Any]:
    """``patch``'s items merged into ``base``'s by ``name``; a name ``base`` lacks is added, or, where
    ``known`` (containers), an error."""
    out = deepcopy(base)
    index = {mapping(item).get("name"): i for i, item in enumerate(out)}
    for i, item in enumerate(patch):
        name = mapping(item).get("name")
        if name is None:
            report.error(f"{path}[{i}].name", required())
        elif name in index:
            out[index[name]] = merge(mapping(out[index[name]]), mapping(item), f"{path}[{i}]", report)
        elif known:
            names = ", ".join(str(n) for n in index)
            report.error(
                f"{path}[{i}].name",
                invalid(name, f"the Deployment's template has no such container ({names})"),
            )
        else:
            out.append(deepcopy(item))
    return out


def merge(base: Mapping[str, Any], patch: Mapping[str, Any], path: str, report: Reporter) -> dict[str, Any]:
    """``patch`` merged into ``base`` (neither changed), as a strategic merge patch merges a pod template;
    problems at ``path`` (``spec.template``)."""
    out = deepcopy(dict(base))
    for key, value in patch.items():
        here = f"{path}.{key}"
        if key in _BY_NAME and isinstance(value, list):
            known = key in ("containers", "initContainers")
            out[key] = _merge_named(items(out.get(key)), value, here, report, known)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value, here, report)
        else:
            out[key] = deepcopy(value)
    return out


def restarted(template: Mapping[str, Any], at_unix: float) -> dict[str, Any]:
    """The template with ``kubectl.kubernetes.io/restartedAt`` set to ``at_unix`` (RFC 3339)."""
    out = deepcopy(dict(template))
    metadata = out.setdefault("metadata", {})
    stamp = datetime.fromtimestamp(at_unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    metadata["annotations"] = {**mapping(metadata.get("annotations")), RESTARTED_AT: stamp}
    return out


def template_hash(template: Mapping[str, Any]) -> str:
    """``ComputeHash``'s shape: FNV-1a 32 of the template (here its canonical JSON), its decimal digits
    each mapped by its code point through ``rand.SafeEncodeString``'s alphabet."""
    value = _FNV_OFFSET
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return "".join(ALPHANUMS[ord(digit) % len(ALPHANUMS)] for digit in str(value))


@dataclass(frozen=True)
class Target:
    """A Deployment a Rollout may name: its metadata and ``spec`` as written, and its place among the
    scenario's Deployments."""

    meta: Meta
    spec: Mapping[str, Any]
    index: int


def _warn_unmodelled(request: RolloutRequest, target: Target) -> None:
    """What of the Deployment a rollout does not model: ``progressDeadlineSeconds`` (its Progressing
    condition) and ``revisionHistoryLimit`` (old ReplicaSets are kept)."""
    for name, note in (
        (
            "progressDeadlineSeconds",
            "no ProgressDeadlineExceeded condition; the rollout goes on, as upstream's",
        ),
        ("revisionHistoryLimit", "old ReplicaSets are kept"),
    ):
        if target.spec.get(name) is not None:
            request.report.warn("spec.deployment", f"the Deployment's spec.{name} is not modelled ({note})")


def resolve(
    requests: list[tuple[RolloutRequest, int]],
    targets: Mapping[tuple[str, str], Target],
    start_time_s: float,
    priorities: Priorities,
) -> tuple[dict[int, tuple[str, tuple[TemplateChange, ...]]], list[tuple[Reporter, str, Pod]]]:
    """Each Rollout (with its document order), in time order, merged into its Deployment's template as the one
    before left it and read as a Deployment's template is read (restart policy, selector). Returns, by the
    Deployment's place, its first template's hash and its changes; and each new template with its reporter,
    for the checks between documents. A paused Deployment is not rolled out (``syncDeployment`` only scales
    it) and a Rollout that changes nothing makes no change: warnings."""
    changes: dict[int, list[TemplateChange]] = {}
    templates: dict[int, dict[str, Any]] = {}
    read: list[tuple[Reporter, str, Pod]] = []
    for request, order in sorted(requests, key=lambda r: (r[0].at_s, r[1])):
        report = request.report
        target = targets.get((request.namespace, request.deployment))
        if target is None:
            detail = f"no Deployment in namespace {request.namespace}"
            report.error("spec.deployment", invalid(request.deployment, detail))
            continue
        if target.spec.get("paused") is True:
            report.warn(
                "spec.deployment",
                f"Deployment {request.namespace}/{request.deployment} is paused: a paused Deployment is "
                "scaled but not rolled out (syncDeployment), so this Rollout changes nothing",
            )
            continue
        current = templates.get(target.index, mapping(target.spec.get("template")))
        errors = report.error_count
        merged = merge(current, request.template, "spec.template", report)
        if request.restart:
            merged = restarted(merged, start_time_s + request.at_s)
        if report.error_count != errors:
            continue
        if merged == current:
            report.warn("spec.template", "the Deployment's template already is this one: no rollout")
            continue
        _warn_unmodelled(request, target)
        spec = {"selector": target.spec.get("selector"), "template": merged}
        pod, _ = pod_template(
            target.meta,
            spec,
            "template",
            report,
            report.at("spec"),
            priorities,
            order,
            CONTROLLER_RESTART_POLICIES,
        )
        check_selector({"spec": spec}, report, "deployment")
        read.append((report, "spec.template", pod))
        templates[target.index] = merged
        changes.setdefault(target.index, []).append(
            TemplateChange(request.at_s, pod, template_hash(merged), request.name)
        )
    first = {t.index: template_hash(mapping(t.spec.get("template"))) for t in targets.values()}
    return {index: (first[index], tuple(made)) for index, made in changes.items()}, read
