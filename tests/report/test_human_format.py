"""Durations and sizes in text as people read them; JSON keeps the raw numbers."""

from __future__ import annotations

import pytest

from gpufleet.report._format import human_bytes, human_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (0.354, "0.35 s"),
        (42, "42 s"),
        (60, "1m"),
        (3605, "1h 5s"),
        (5400, "1h 30m"),
        (250_680, "2d 21h 38m"),
        (250_699, "2d 21h 38m"),
        (-90, "-1m 30s"),
        (None, "—"),
    ],
)
def test_a_duration_reads_as_its_three_largest_units(seconds: float | None, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (512, "512"),
        (1536, "1.5Ki"),
        (236 * 1024**3, "236Gi"),
        (15.5 * 1024**3, "15.5Gi"),
        (1.25 * 1024**4, "1.25Ti"),
        (None, "—"),
    ],
)
def test_a_size_reads_with_a_kubernetes_binary_suffix(size: float | None, text: str) -> None:
    assert human_bytes(size) == text
