"""One order of a pod's start-up stages for every part of the report: the order a pod goes through them
(``sim.records.STAGE_OF``): held by Kueue (``queueing``) and by its scheduling gates
(``scheduling_gated``) before kube-scheduler tries it (``scheduling``)."""

from __future__ import annotations

from gpufleet.report.latency import stage_names
from gpufleet.report.pod_table import stage_lines

STAGES = {"other": 1.0, "scheduling": 2.0, "scheduling_gated": 3.0, "queueing": 4.0, "before_snapshot": 5.0}


def test_the_latency_table_lists_queueing_and_gated_time_before_scheduling() -> None:
    assert stage_names([{"stages": STAGES}]) == [
        "before_snapshot",
        "queueing",
        "scheduling_gated",
        "scheduling",
        "other",
    ]


def test_the_pod_table_lists_queueing_and_gated_time_before_scheduling() -> None:
    assert stage_lines(STAGES) == [
        "before_snapshot 5 s",
        "queueing 4 s",
        "scheduling_gated 3 s",
        "scheduling 2 s",
        "other 1 s",
    ]
