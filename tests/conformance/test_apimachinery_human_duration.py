"""k8s.io/apimachinery v0.34.10 ``pkg/util/duration/duration_test.go``: ``TestHumanDuration`` and
``TestHumanDurationBoundaries``, against ``report._format.kubectl_age`` (``duration.HumanDuration``, which
kubectl's describe writes ages and lengths with: an Event's Age and ``(xN over ...)``, a pod's Age, a Job's
Duration). A Go ``time.Duration`` in nanoseconds is given here in seconds."""

from __future__ import annotations

import pytest

from gpufleet.report._format import kubectl_age

S, M, H, D = 1.0, 60.0, 3600.0, 86400.0
MS = 1e-3
NS = 1e-9

HUMAN_DURATION = [
    ("1s", S, "1s"),
    ("1m10s", 70 * S, "70s"),
    ("3m10s", 190 * S, "3m10s"),
    ("1h10m0s", 70 * M, "70m"),
    ("47h0m0s", 47 * H, "47h"),
    ("49h0m0s", 49 * H, "2d1h"),
    ("194h0m0s", (8 * 24 + 2) * H, "8d"),
    ("8808h0m0s", 367 * 24 * H, "367d"),
    ("17545h0m0s", (365 * 2 * 24 + 25) * H, "2y1d"),
    ("70082h0m0s", (365 * 8 * 24 + 2) * H, "8y"),
]

BOUNDARIES = [
    (-2 * S, "<invalid>"),
    (-2 * S + NS, "0s"),
    (0.0, "0s"),
    (S - MS, "0s"),
    (2 * M - MS, "119s"),
    (2 * M, "2m"),
    (2 * M + S, "2m1s"),
    (10 * M - MS, "9m59s"),
    (10 * M, "10m"),
    (10 * M + S, "10m"),
    (3 * H - MS, "179m"),
    (3 * H, "3h"),
    (3 * H + M, "3h1m"),
    (8 * H - MS, "7h59m"),
    (8 * H, "8h"),
    (8 * H + 59 * M, "8h"),
    (2 * D - MS, "47h"),
    (2 * D, "2d"),
    (2 * D + H, "2d1h"),
    (8 * D - MS, "7d23h"),
    (8 * D, "8d"),
    (8 * D + 23 * H, "8d"),
    (2 * 365 * D - MS, "729d"),
    (2 * 365 * D, "2y"),
    (2 * 365 * D + 23 * H, "2y"),
    (2 * 365 * D + 23 * H + 59 * M, "2y"),
    (2 * 365 * D + D - MS, "2y"),
    (2 * 365 * D + D, "2y1d"),
    (3 * 365 * D, "3y"),
    (4 * 365 * D, "4y"),
    (5 * 365 * D, "5y"),
    (6 * 365 * D, "6y"),
    (7 * 365 * D, "7y"),
    (8 * 365 * D - MS, "7y364d"),
    (8 * 365 * D, "8y"),
    (8 * 365 * D + 364 * D, "8y"),
    (9 * 365 * D, "9y"),
]


@pytest.mark.parametrize(
    ("seconds", "want"), [pytest.param(s, w, id=f"TestHumanDuration/{name}") for name, s, w in HUMAN_DURATION]
)
def test_human_duration(seconds: float, want: str) -> None:
    assert kubectl_age(seconds) == want


@pytest.mark.parametrize(
    ("seconds", "want"),
    [pytest.param(s, w, id=f"TestHumanDurationBoundaries/{w}@{s}") for s, w in BOUNDARIES],
)
def test_human_duration_boundaries(seconds: float, want: str) -> None:
    assert kubectl_age(seconds) == want
