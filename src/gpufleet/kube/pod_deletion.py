"""A snapshot's pod being deleted: a Pending or Running pod with a ``metadata.deletionTimestamp``.

The API server marks a graceful deletion by setting ``deletionTimestamp`` to the deletion's time plus its
grace period (``BeforeDelete``, ``pkg/registry/rest/delete.go``; ``deletionGracePeriodSeconds`` the grace
period) and the kubelet kills the pod's containers once that time has come. A cluster dump taken before then
holds the pod still terminating: in the run it is deleted at its arrival (its owner learns of it as of any
deletion: a Job's ``podReplacementPolicy``, ``controller.IsPodActive``) and ends Failed after what remains of
its grace period, ``deletionTimestamp`` less the run's time 0 (a Simulation's ``spec.startTime``; at once
where that time has passed). Without ``spec.startTime`` what remains is not known: the pod ends at once, and
a warning says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpufleet.kube.nodes import unix_time
from gpufleet.kube.objects import mapping
from gpufleet.kube.problems import Reporter
from gpufleet.model.scenario import BarePod
from gpufleet.model.simulation import SimulationSettings

#: a pod's phases before it ended
NOT_ENDED = ("Pending", "Running")


@dataclass(frozen=True)
class Deletion:
    """A snapshot pod being deleted: its place in ``Scenario.pods``, when its grace period ends (Unix
    seconds) and the report of its document."""

    index: int
    ends_unix: float
    report: Reporter


def deletion(index: int, body: Mapping[str, Any], phase: str, report: Reporter) -> Deletion | None:
    """The deletion of the pod ``body`` (``Scenario.pods[index]``) where it is being deleted and has not
    ended; None otherwise (or where its ``deletionTimestamp`` is not a time: reported)."""
    if phase not in NOT_ENDED:
        return None
    at = unix_time(
        mapping(body.get("metadata")).get("deletionTimestamp"), report, "metadata.deletionTimestamp"
    )
    return None if at is None else Deletion(index, at, report)


def terminating(bare: BarePod, found: Deletion, settings: SimulationSettings) -> BarePod:
    """``bare`` deleted at its arrival, its grace period what remains of it at the run's time 0."""
    if settings.start_time_set:
        remaining = max(found.ends_unix - settings.start_time_s, 0.0)
    else:
        remaining = 0.0
        found.report.warn(
            "metadata.deletionTimestamp",
            "the pod is being deleted; without a Simulation's spec.startTime (when the snapshot was taken) "
            "what remains of its grace period is not known: it ends at the start",
        )
    return replace(bare, pod=replace(bare.pod, termination_grace_s=remaining), deleting=True)
