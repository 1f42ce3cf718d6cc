"""Wait per job size class, computed from a summary's pod records."""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.report.job_waits import job_wait_figures, size_class


def pod(
    name: str,
    gpus: float,
    created: float,
    bound: float | None,
    group: str | None = None,
    deleted: float | None = None,
) -> dict[str, Any]:
    return {
        "name": f"default/{name}",
        "gpus": gpus,
        "created_s": created,
        "bound_s": bound,
        "deleted_s": deleted,
        "pod_group": group,
    }


def summary(*pods: dict[str, Any], end: float = 1000.0) -> dict[str, Any]:
    totals = {"gpu_hours_provisioned": 10.0, "gpu_hours_allocated": 4.0}
    return {"end_time_s": end, "totals": totals, "pods": list(pods)}


@pytest.mark.parametrize(
    ("gpus", "label"),
    [(0.5, "<1"), (1, "1"), (2, "2-4"), (4, "2-4"), (5, "5-8"), (8, "5-8"), (16, "9-16"), (17, ">16")],
)
def test_size_classes(gpus: float, label: str) -> None:
    assert size_class(gpus) == label


def test_a_gang_is_one_job_waiting_until_its_last_pod_is_bound() -> None:
    figures = job_wait_figures(
        summary(pod("t16-0", 8, 100.0, 400.0, "default/t16"), pod("t16-1", 8, 110.0, 700.0, "default/t16"))
    )
    assert figures["by_gpus"] == [
        {
            "gpus": "9-16",
            "count": 1,
            "waiting": 0,
            "mean_wait_s": 600.0,
            "p50_wait_s": 600.0,
            "p95_wait_s": 600.0,
            "max_wait_s": 600.0,
        }
    ]


def test_a_job_still_waiting_counts_its_wait_so_far_and_unbound_deleted_pods_are_no_jobs() -> None:
    figures = job_wait_figures(
        summary(
            pod("a", 1, 0.0, 10.0),
            pod("b", 1, 0.0, 30.0),
            pod("c", 1, 900.0, None),  # still pending at 1000: waited 100 so far
            pod("gone", 1, 0.0, None, deleted=50.0),
            pod("cpu-only", 0, 0.0, 500.0),
        )
    )
    (ones,) = figures["by_gpus"]
    assert (ones["gpus"], ones["count"], ones["waiting"]) == ("1", 3, 1)
    assert (ones["mean_wait_s"], ones["p50_wait_s"], ones["p95_wait_s"], ones["max_wait_s"]) == (
        pytest.approx(140 / 3),
        30.0,
        100.0,
        100.0,
    )


def test_no_pods_means_no_size_class() -> None:
    empty = {"end_time_s": 0.0, "totals": {}, "pods": []}
    assert job_wait_figures(empty) == {"by_gpus": []}
