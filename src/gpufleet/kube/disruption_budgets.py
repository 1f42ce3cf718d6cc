"""``policy/v1`` PodDisruptionBudget -> ``gpufleet.model.disruption_budget.DisruptionBudget``.

The document has passed the Kubernetes 1.34 schema; this adds ``ValidatePodDisruptionBudgetSpec``
(``pkg/apis/policy/validation``): ``minAvailable`` and ``maxUnavailable`` are not both set,
each is a non-negative integer or a percent string (``"50%"``) of at most 100 %. The selector
is read as its ``matchLabels`` (``matchExpressions`` are a warning, not modelled); a budget
without a selector selects no pods in ``policy/v1`` and is left out, with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import Meta, mapping
from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.disruption_budget import DisruptionBudget

_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MESSAGE = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def budget(meta: Meta, body: Mapping[str, Any], report: Reporter) -> DisruptionBudget | None:
    spec = mapping(body.get("spec"))
    at_spec = report.at("spec")
    min_available = _int_or_percent(spec, "minAvailable", at_spec)
    max_unavailable = _int_or_percent(spec, "maxUnavailable", at_spec)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        at_spec.error("", invalid(spec, "minAvailable and maxUnavailable cannot be both set"))
    report.unmodelled_fields(spec, ("unhealthyPodEvictionPolicy",), "spec")
    selector = spec.get("selector")
    if selector is None:
        report.warn("spec.selector", "not set: the budget selects no pods; ignored")
        return None
    selector = mapping(selector)
    if selector.get("matchExpressions"):
        report.not_modelled("spec.selector.matchExpressions", note="the budget selects by matchLabels only")
    labels = mapping(selector.get("matchLabels"))
    return DisruptionBudget(
        namespace=meta.namespace,
        name=meta.name,
        selector=tuple(sorted((str(k), str(v)) for k, v in labels.items())),
        min_available=min_available,
        max_unavailable=max_unavailable,
    )


def _int_or_percent(spec: Mapping[str, Any], key: str, at_spec: Reporter) -> int | str | None:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    value = spec.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        if not _PERCENT.match(value):
            at_spec.error(key, invalid(value, _PERCENT_MESSAGE))
            return None
        if int(value[:-1]) > 100:
            at_spec.error(key, invalid(value, "must not be greater than 100%"))
            return None
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            at_spec.error(key, invalid(value, "must be greater than or equal to 0"))
            return None
        return value
    return None  # the schema check reported it
