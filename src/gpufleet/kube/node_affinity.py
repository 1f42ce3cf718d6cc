"""Node affinity terms, validated as ``pkg/apis/core/validation`` does.

``validateNodeSelectorRequirement``: ``In``/``NotIn`` need values, ``Exists``/``DoesNotExist``
take none, ``Gt``/``Lt`` take one; the key is a label name (``ValidateLabelName``) and, in a
required term, each value a label value (``IsValidLabelValue``). A preferred term may hold an
invalid value (the API server allows it), but kube-scheduler cannot parse such a term
(``NewPreferredSchedulingTerms``): its PreScore fails the pod's scheduling attempt whenever more
than one node fits, which gpufleet does not model, so that is a warning.
``validateNodeFieldSelectorRequirement``: the only field is ``metadata.name``, with
``In``/``NotIn`` and exactly one value. Required affinity needs at least one term; a preferred
term's weight is 1-100.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import items, mapping
from gpufleet.kube.problems import Reporter, forbidden, invalid, required
from gpufleet.model.label_syntax import label_value_problems, qualified_name_problems
from gpufleet.model.node_selector import node_selector_term
from gpufleet.model.pod import PreferredTerm, SelectorTerm

NODE_FIELD_NAME = "metadata.name"


_UNPARSABLE_PREFERRED = (
    "kube-scheduler cannot parse this preferred term: its PreScore fails the pod's scheduling attempt "
    "whenever more than one node fits; not modelled, gpufleet scores the node without the term"
)


def _label_requirement_ok(item: Mapping[str, Any], report: Reporter, path: str, required_term: bool) -> bool:
    """Reports what the API server refuses in one ``matchExpressions`` entry; True when it has nothing."""
    key, operator, values = item.get("key") or "", item.get("operator") or "", tuple(item.get("values") or ())
    key_problems = qualified_name_problems(key)
    for message in key_problems:
        report.error(f"{path}.key", invalid(key, message))
    for i, value in enumerate(values):
        for message in label_value_problems(str(value)):
            if required_term:
                report.error(f"{path}.values[{i}]", invalid(value, message))
            else:
                report.warn(f"{path}.values[{i}]", f"{invalid(value, message)}: {_UNPARSABLE_PREFERRED}")
    if key_problems or (required_term and any(label_value_problems(str(v)) for v in values)):
        return False
    if operator in ("In", "NotIn"):
        if not values:
            report.error(f"{path}.values", required("must be specified when `operator` is 'In' or 'NotIn'"))
            return False
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            report.error(
                f"{path}.values",
                forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
            )
            return False
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            report.error(
                f"{path}.values", required("must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
            return False
    else:
        report.error(f"{path}.operator", invalid(operator, "not a valid selector operator"))
        return False
    return True


def _field_requirement_ok(item: Mapping[str, Any], report: Reporter, path: str) -> bool:
    """Reports what the API server refuses in one ``matchFields`` entry; True when it has nothing."""
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
    return ok


def selector_term(
    raw: Mapping[str, Any], report: Reporter, path: str, required_term: bool = True
) -> SelectorTerm | None:
    expressions = [
        _label_requirement_ok(item, report, f"{path}.matchExpressions[{i}]", required_term)
        for i, item in enumerate(items(raw.get("matchExpressions")))
    ]
    fields = [
        _field_requirement_ok(item, report, f"{path}.matchFields[{i}]")
        for i, item in enumerate(items(raw.get("matchFields")))
    ]
    return node_selector_term(raw) if all(expressions) and all(fields) else None


def required_terms(raw: object, report: Reporter, path: str) -> tuple[SelectorTerm, ...] | None:
    """``requiredDuringSchedulingIgnoredDuringExecution``; None when absent (anything matches)."""
    if raw is None:
        return None
    raw_terms = items(mapping(raw).get("nodeSelectorTerms"))
    if not raw_terms:
        report.error(f"{path}.nodeSelectorTerms", required("must have at least one node selector term"))
    terms = [selector_term(t, report, f"{path}.nodeSelectorTerms[{i}]") for i, t in enumerate(raw_terms)]
    return tuple(t for t in terms if t is not None)


def preference_weight(item: Mapping[str, Any], report: Reporter, where: str) -> int | None:
    """A preferred (node or pod) affinity term's ``weight``: an integer from 1 to 100, as the API
    server validates it; None (and the error reported) otherwise."""
    weight = item.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
        report.error(f"{where}.weight", invalid(weight, "must be in the range 1-100"))
        return None
    return weight


def preferred_terms(raw: object, report: Reporter, path: str) -> tuple[PreferredTerm, ...]:
    """``preferredDuringSchedulingIgnoredDuringExecution``."""
    out: list[PreferredTerm] = []
    for i, item in enumerate(items(raw)):
        where = f"{path}[{i}]"
        weight = preference_weight(item, report, where)
        if weight is None:
            continue
        preference = mapping(item.get("preference"))
        term = selector_term(preference, report, f"{where}.preference", required_term=False)
        if term is not None:
            out.append(PreferredTerm(weight, term))
    return tuple(out)
