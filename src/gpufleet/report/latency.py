"""Pending-to-working latency figures of a summary: percentiles overall, per stage and per workload.

`latency_figures` computes the summary's optional ``latency`` field from its ``pods``, so
the simulator can embed it and the report can recompute it when it is absent. It is a pure
function of the pod records; from gpufleet it imports only the percentile definition.

Percentiles use the nearest-rank method (``model.percentiles.nearest_rank``, re-exported
here): of ``n`` values sorted ascending, the p-th percentile is ``x[ceil(p * n / 100)]``,
always one of the values, so a p99 over 10 pods is the slowest pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpufleet.model.percentiles import nearest_rank as nearest_rank

STAGE_ORDER = (
    "before_snapshot",
    "queueing",
    "scheduling_gated",
    "scheduling",
    "node_provisioning",
    "gang_wait",
    "image_pull",
    "model_load",
    "warmup",
    "other",
)
"""The stage names of ``pods[].stages``, in the order a pod goes through them (``sim.records.STAGE_OF``;
``other`` last): ``before_snapshot`` first, a dump's pod's time from its ``creationTimestamp`` to the run's
start; ``queueing`` (held by Kueue) and ``scheduling_gated`` (its scheduling gates) before ``scheduling``."""

PERCENTILES = (50, 95, 99)
"""The percentiles reported, as integers; a figure's key is ``f"p{p}"``."""

DIGITS = 6
"""Pending-to-working times are rounded to this many decimals (float noise of the subtraction)."""


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """``{"p50", "p95", "p99"}`` of ``values`` by nearest rank; each None when there are none."""
    return {f"p{p}": (nearest_rank(values, p) if values else None) for p in PERCENTILES}


def pending_to_working(pod: Mapping[str, Any]) -> float | None:
    """``working_s - created_s`` of a pod record, rounded (a dump's pod created before the run: from its
    ``creationTimestamp``, the wait before the run included); None unless both are set, and for a dump's pod
    already running when the run began (``running_at_start``: it began working before, when is not known)."""
    created, working = pod.get("created_s"), pod.get("working_s")
    if created is None or working is None or pod.get("running_at_start"):
        return None
    return round(float(working) - float(created), DIGITS)


def working_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pods that began computing (``working_s`` and ``created_s`` set, not ``running_at_start``), in
    their given order."""
    return [pod for pod in pods if pending_to_working(pod) is not None]


def stage_names(pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every stage name some pod has: the contract's names in `STAGE_ORDER`, then others by name."""
    seen: set[str] = set()
    for pod in pods:
        seen.update(pod.get("stages") or {})
    return [name for name in STAGE_ORDER if name in seen] + sorted(seen.difference(STAGE_ORDER))


def latency_figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The ``latency`` field of ``summary``, computed from ``summary["pods"]``.

    Only pods with ``working_s`` (and ``created_s``) set count. Returns::

        {"pending_to_working_s": {"p50", "p95", "p99", "count"},
         "stages": {stage: {"p50", "p95", "p99"}},
         "by_workload": [...]}  # see `workload_figures`

    ``pending_to_working_s`` is ``working_s - created_s`` over those pods (``count`` of them;
    the percentiles are None when ``count`` is 0). ``stages`` has one entry per stage name that
    at least one of those pods has, in `stage_names` order; a pod without that stage counts
    as 0 for it. Percentiles are nearest-rank (see `nearest_rank`), so a stage's p95 and the
    overall p95 may come from different pods and stage percentiles need not add up.
    """
    pods = working_pods(summary.get("pods") or [])
    overall: dict[str, float | int | None] = {**percentiles(_totals(pods)), "count": len(pods)}
    return {"pending_to_working_s": overall, "stages": _stages(pods), "by_workload": workload_figures(pods)}


def _totals(pods: Sequence[Mapping[str, Any]]) -> list[float]:
    return [value for value in (pending_to_working(pod) for pod in pods) if value is not None]


def _stages(pods: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    return {
        name: percentiles([float((pod.get("stages") or {}).get(name, 0.0)) for pod in pods])
        for name in stage_names(pods)
    }


def workload_of(pod: Mapping[str, Any]) -> str:
    """The pod's owning workload, ``Kind/namespace/name`` (``Pod/namespace/name`` for a pod of its own
    or a record without ``workload``)."""
    return str(pod.get("workload") or f"Pod/{pod['name']}")


def workload_figures(pods: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Pending to working per owning workload (``latency.by_workload``), by workload name: ``workload``,
    ``namespace``, ``count`` (its pods that began computing), ``p50``/``p95``/``p99`` and per stage
    ``p50``/``p95``, so a DaemonSet's pods do not set the percentiles of a Deployment's. Pods whose
    record does not name its workload (a measured start-up's) are left out: their owner is unknown."""
    members: dict[str, list[Mapping[str, Any]]] = {}
    for pod in working_pods(pods):
        if pod.get("workload"):
            members.setdefault(workload_of(pod), []).append(pod)
    figures = []
    for workload, group in sorted(members.items()):
        stages = {name: {k: v[k] for k in ("p50", "p95")} for name, v in _stages(group).items()}
        figures.append(
            {
                "workload": workload,
                "namespace": workload.split("/")[1],
                "count": len(group),
                **percentiles(_totals(group)),
                "stages": stages,
            }
        )
    return figures
