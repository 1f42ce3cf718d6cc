"""``spec.affinity.podAffinity`` / ``podAntiAffinity`` and ``spec.topologySpreadConstraints``, validated
as the API server does (``pkg/apis/core/validation``: ``validatePodAffinityTerm``,
``validateWeightedPodAffinityTerms``, ``validateTopologySpreadConstraints``).

Label selectors (``metav1validation.ValidateLabelSelector``) take ``In``/``NotIn`` with values and
``Exists``/``DoesNotExist`` without. A ``namespaceSelector`` is judged on the labels of the ``v1``
Namespace documents given (and the API server's ``kubernetes.io/metadata.name``); without any, one
that names another label cannot be judged (``selectors_on_namespace_labels``; ``kube.load`` says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.node_affinity import preference_weight, selector_term
from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, duplicate, invalid, required, unsupported
from gpufleet.model.pod import Requirement
from gpufleet.model.pod_affinity import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    NAMESPACE_NAME_LABEL,
    SCHEDULE_ANYWAY,
    PodAffinity,
    PodAffinityTerm,
    Selector,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector(raw: object, report: Reporter, path: str) -> Selector:
    """A ``metav1.LabelSelector``; None when absent (it selects nothing)."""
    if raw is None:
        return None
    body = mapping(raw)
    labels = tuple((str(k), str(v)) for k, v in mapping(body.get("matchLabels")).items())
    expressions = items(body.get("matchExpressions"))
    for i, item in enumerate(expressions):
        operator = item.get("operator")
        if operator not in _LABEL_OPERATORS:
            report.error(f"{path}.matchExpressions[{i}].operator", unsupported(operator, _LABEL_OPERATORS))
            return ()
    term = selector_term({"matchExpressions": expressions}, report, path)
    return (*(Requirement(k, "In", (v,)) for k, v in labels), *(term.expressions if term else ()))


def _strings(raw: object, report: Reporter, path: str) -> tuple[str, ...]:
    """A list of strings (label keys, namespace names)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(k, str) for k in raw):
        report.error(path, invalid(raw, "must be a list of strings"))
        return ()
    return tuple(raw)


def _term(raw: Mapping[str, Any], report: Reporter, path: str) -> PodAffinityTerm | None:
    topology_key = raw.get("topologyKey") or ""
    if not topology_key:
        report.error(f"{path}.topologyKey", required("can not be empty"))
        return None
    selector = label_selector(raw.get("labelSelector"), report, f"{path}.labelSelector")
    namespace_selector = label_selector(raw.get("namespaceSelector"), report, f"{path}.namespaceSelector")
    match_keys = _strings(raw.get("matchLabelKeys"), report, f"{path}.matchLabelKeys")
    mismatch_keys = _strings(raw.get("mismatchLabelKeys"), report, f"{path}.mismatchLabelKeys")
    if (match_keys or mismatch_keys) and selector is None:
        which = "matchLabelKeys" if match_keys else "mismatchLabelKeys"
        report.error(
            f"{path}.{which}",
            invalid(list(match_keys or mismatch_keys), "must not be specified when labelSelector is not set"),
        )
        return None
    for key in set(match_keys) & set(mismatch_keys):
        report.error(
            f"{path}.matchLabelKeys", invalid(key, "exists in both matchLabelKeys and mismatchLabelKeys")
        )
        return None
    return PodAffinityTerm(
        selector,
        str(topology_key),
        frozenset(_strings(raw.get("namespaces"), report, f"{path}.namespaces")),
        namespace_selector,
        match_keys,
        mismatch_keys,
    )


def _terms(raw: object, report: Reporter, path: str) -> tuple[PodAffinityTerm, ...]:
    terms = [_term(t, report, f"{path}[{i}]") for i, t in enumerate(items(raw))]
    return tuple(t for t in terms if t is not None)


def _weighted(raw: object, report: Reporter, path: str) -> tuple[WeightedPodAffinityTerm, ...]:
    out: list[WeightedPodAffinityTerm] = []
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        weight = preference_weight(item, report, where)
        if weight is None:
            continue
        term = _term(mapping(item.get("podAffinityTerm")), report, f"{where}.podAffinityTerm")
        if term is not None:
            out.append(WeightedPodAffinityTerm(weight, term))
    return tuple(out)


def pod_affinity(affinity: Mapping[str, Any], report: Reporter, path: str) -> PodAffinity | None:
    """``podAffinity`` and ``podAntiAffinity`` of ``spec.affinity``; None when neither is given."""
    if affinity.get("podAffinity") is None and affinity.get("podAntiAffinity") is None:
        return None
    pro = mapping(affinity.get("podAffinity"))
    anti = mapping(affinity.get("podAntiAffinity"))
    return PodAffinity(
        _terms(pro.get(_REQUIRED), report, f"{path}.podAffinity.{_REQUIRED}"),
        _weighted(pro.get(_PREFERRED), report, f"{path}.podAffinity.{_PREFERRED}"),
        _terms(anti.get(_REQUIRED), report, f"{path}.podAntiAffinity.{_REQUIRED}"),
        _weighted(anti.get(_PREFERRED), report, f"{path}.podAntiAffinity.{_PREFERRED}"),
    )


def spread_constraints(raw: object, report: Reporter, path: str) -> tuple[TopologySpreadConstraint, ...]:
    """``spec.topologySpreadConstraints``."""
    out: list[TopologySpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        errors = report.error_count
        raw_skew = item.get("maxSkew")
        max_skew = raw_skew if isinstance(raw_skew, int) and not isinstance(raw_skew, bool) else 0
        if max_skew <= 0:
            report.error(f"{where}.maxSkew", invalid(raw_skew, "must be greater than zero"))
        topology_key = str(item.get("topologyKey") or "")
        if not topology_key:
            report.error(f"{where}.topologyKey", required("can not be empty"))
        action = str(item.get("whenUnsatisfiable") or "")
        if action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            report.error(
                f"{where}.whenUnsatisfiable", unsupported(action, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))
            )
        if (topology_key, action) in seen:
            report.error(where, duplicate(f"{{{topology_key}, {action}}}"))
        seen.add((topology_key, action))
        min_domains = item.get("minDomains")
        if min_domains is not None:
            if isinstance(min_domains, bool) or not isinstance(min_domains, int) or min_domains <= 0:
                report.error(f"{where}.minDomains", invalid(min_domains, "must be greater than 0"))
            elif action != DO_NOT_SCHEDULE:
                report.error(
                    f"{where}.minDomains",
                    invalid(
                        min_domains,
                        f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, not {action}",
                    ),
                )
        policies = []
        for field_name, default in (("nodeAffinityPolicy", HONOR), ("nodeTaintsPolicy", IGNORE)):
            value = item.get(field_name)
            if value is not None and value not in (HONOR, IGNORE):
                report.error(f"{where}.{field_name}", unsupported(value, (HONOR, IGNORE)))
            policies.append(str(value) if value is not None else default)
        selector = label_selector(item.get("labelSelector"), report, f"{where}.labelSelector")
        match_keys = _strings(item.get("matchLabelKeys"), report, f"{where}.matchLabelKeys")
        if match_keys and selector is None:
            report.error(
                f"{where}.matchLabelKeys",
                invalid(list(match_keys), "must not be specified when labelSelector is not set"),
            )
        if report.error_count > errors:
            continue
        out.append(
            TopologySpreadConstraint(
                max_skew,
                topology_key,
                action,
                selector,
                int(min_domains) if min_domains is not None else 1,
                policies[0],
                policies[1],
                match_keys,
            )
        )
    return tuple(out)


def _names_other_labels(selector: Selector) -> bool:
    return any(r.key != NAMESPACE_NAME_LABEL for r in selector or ())


def selectors_on_namespace_labels(affinity: PodAffinity | None) -> list[str]:
    """The paths (below ``spec``) of the ``namespaceSelector``s that name a label other than the
    namespace's name."""
    if affinity is None:
        return []
    out: list[str] = []
    for side, hard, soft in (
        ("podAffinity", affinity.required, affinity.preferred),
        ("podAntiAffinity", affinity.anti_required, affinity.anti_preferred),
    ):
        out += [
            f"affinity.{side}.{_REQUIRED}[{i}].namespaceSelector"
            for i, t in enumerate(hard)
            if _names_other_labels(t.namespace_selector)
        ]
        out += [
            f"affinity.{side}.{_PREFERRED}[{i}].podAffinityTerm.namespaceSelector"
            for i, w in enumerate(soft)
            if _names_other_labels(w.term.namespace_selector)
        ]
    return out
