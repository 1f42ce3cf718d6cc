"""A Deployment's ``spec.strategy`` and ``spec.minReadySeconds``, defaulted as ``apps/v1``
``SetDefaults_Deployment`` defaults them (``RollingUpdate``; ``maxSurge`` and ``maxUnavailable`` 25 % each
where unset) and checked as pkg/apis/apps/validation checks them (``ValidateDeploymentStrategy``,
``ValidateRollingUpdateDeployment``: each an int not negative or a percentage, not both 0, ``maxUnavailable``
at most 100 %; ``Recreate`` without ``rollingUpdate``; ``minReadySeconds`` not negative,
``progressDeadlineSeconds`` above it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Reporter, forbidden, invalid, unsupported
from gpufleet.model.workloads import RECREATE, ROLLING_UPDATE, DeploymentStrategy

_PERCENT = re.compile(r"^[0-9]+%$")
_DEFAULT = DeploymentStrategy()


def _int_or_percent(value: object, path: str, report: Reporter) -> int | str | None:
    """``ValidatePositiveIntOrPercent``: an int not negative, or a percentage string; None (reported) else."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            report.error(path, invalid(value, "must be greater than or equal to 0"))
            return None
        return value
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            detail = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%')"
            report.error(path, invalid(value, detail))
            return None
        return value
    report.error(path, invalid(value, "must be an integer or percentage (e.g '5%')"))
    return None


def _amount(value: int | str) -> int:
    """``getIntOrPercentValue``: the int, or the percentage's number."""
    return value if isinstance(value, int) else int(value[:-1])


def strategy(spec: Mapping[str, Any], at_spec: Reporter) -> DeploymentStrategy:
    """``spec.strategy``, defaulted and checked; problems at ``spec.strategy...`` (``at_spec``)."""
    given = mapping(spec.get("strategy"))
    kind = given.get("type") or ROLLING_UPDATE
    rolling = given.get("rollingUpdate")
    if kind == RECREATE:
        if rolling is not None:
            at_spec.error(
                "strategy.rollingUpdate", forbidden("may not be specified when strategy `type` is 'Recreate'")
            )
        return DeploymentStrategy(RECREATE, 0, 0)
    if kind != ROLLING_UPDATE:
        at_spec.error("strategy.type", unsupported(kind, (RECREATE, ROLLING_UPDATE)))
        return _DEFAULT
    fields = mapping(rolling)
    surge = fields.get("maxSurge", _DEFAULT.max_surge)
    unavailable = fields.get("maxUnavailable", _DEFAULT.max_unavailable)
    surge = _int_or_percent(surge, "strategy.rollingUpdate.maxSurge", at_spec)
    unavailable = _int_or_percent(unavailable, "strategy.rollingUpdate.maxUnavailable", at_spec)
    if surge is None or unavailable is None:
        return _DEFAULT
    path = "strategy.rollingUpdate.maxUnavailable"
    if _amount(surge) == 0 and _amount(unavailable) == 0:
        at_spec.error(path, invalid(unavailable, "may not be 0 when `maxSurge` is 0"))
        return _DEFAULT
    if isinstance(unavailable, str) and _amount(unavailable) > 100:
        at_spec.error(path, invalid(unavailable, "must not be greater than 100%"))
        return _DEFAULT
    return DeploymentStrategy(ROLLING_UPDATE, surge, unavailable)


def min_ready_seconds(spec: Mapping[str, Any], at_spec: Reporter) -> int:
    """``spec.minReadySeconds`` (0 when unset), not negative; ``progressDeadlineSeconds``, where given, not
    negative and above it."""
    value = spec.get("minReadySeconds")
    min_ready = value if isinstance(value, int) and not isinstance(value, bool) else 0
    if min_ready < 0:
        at_spec.error("minReadySeconds", invalid(min_ready, "must be greater than or equal to 0"))
        min_ready = 0
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool):
        if deadline < 0:
            at_spec.error("progressDeadlineSeconds", invalid(deadline, "must be greater than or equal to 0"))
        if deadline <= min_ready:
            at_spec.error(
                "progressDeadlineSeconds", invalid(deadline, "must be greater than minReadySeconds")
            )
    return min_ready
