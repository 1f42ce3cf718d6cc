"""Node affinity terms, validated as ``pkg/apis/core/validation`` does.

``validateNodeSelectorRequirement``: ``In``/``NotIn`` need values, ``Exists``/``DoesNotExist``
take none, ``Gt``/``Lt`` take one. ``validateNodeFieldSelectorRequirement``: the only field
is ``metadata.name``, with ``In``/``NotIn`` and exactly one value. Required affinity needs at
least one term; a preferred term's weight is 1-100.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, forbidden, invalid, required
from gpufleet.model.pod import PreferredTerm, Requirement, SelectorTerm

NODE_FIELD_NAME = "metadata.name"


def _label_requirement(item: Mapping[str, Any], report: Reporter, path: str) -> Requirement | None:
    key, operator, values = item.get("key") or "", item.get("operator") or "", tuple(item.get("values") or ())
    if operator in ("In", "NotIn"):
        if not values:
            report.error(f"{path}.values", required("must be specified when `operator` is 'In' or 'NotIn'"))
            return None
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            report.error(
                f"{path}.values",
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
            return None
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            report.error(
                f"{path}.values", required("must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
            return None
    else:
        report.error(f"{path}.operator", invalid(operator, "not a valid selector operator"))
        return None
    return Requirement(key, operator, values)


def _field_requirement(item: Mapping[str, Any], report: Reporter, path: str) -> Requirement | None:
    key, operator, values = item.get("key") or "", item.get("operator") or "", tuple(item.get("values") or ())
    ok = True
    if key != NODE_FIELD_NAME:
        report.error(f"{path}.key", invalid(key, "not a valid field selector key"))
        ok = False
    if operator not in ("In", "NotIn"):
        report.error(f"{path}.operator", invalid(operator, "not a valid selector operator"))
        ok = False
    elif len(values) != 1:
        detail = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
        report.error(f"{path}.values", required(detail))
        ok = False
    return Requirement(key, operator, values) if ok else None


def selector_term(raw: Mapping[str, Any], report: Reporter, path: str) -> SelectorTerm | None:
    expressions = [
        _label_requirement(item, report, f"{path}.matchExpressions[{i}]")
        for i, item in enumerate(items(raw.get("matchExpressions")))
    ]
    fields = [
        _field_requirement(item, report, f"{path}.matchFields[{i}]")
        for i, item in enumerate(items(raw.get("matchFields")))
    ]
    if None in expressions or None in fields:
        return None
    return SelectorTerm(tuple(r for r in expressions if r), tuple(r for r in fields if r))


def required_terms(raw: object, report: Reporter, path: str) -> tuple[SelectorTerm, ...] | None:
    """``requiredDuringSchedulingIgnoredDuringExecution``; None when absent (anything matches)."""
    if raw is None:
        return None
    raw_terms = items(mapping(raw).get("nodeSelectorTerms"))
    if not raw_terms:
        report.error(f"{path}.nodeSelectorTerms", required("must have at least one node selector term"))
    terms = [selector_term(t, report, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(raw_terms)]
    return tuple(t for t in terms if t is not None)


def preferred_terms(raw: object, report: Reporter, path: str) -> tuple[PreferredTerm, ...]:
    """``preferredDuringSchedulingIgnoredDuringExecution``."""
    out: list[PreferredTerm] = []
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        weight = item.get("weight")
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            report.error(f"{where}.weight", invalid(weight, "must be in the range 1-100"))
            continue
        term = selector_term(mapping(item.get("preference")), report, f"{where}.preference")
        if term is not None:
            out.append(PreferredTerm(weight, term))
    return tuple(out)
