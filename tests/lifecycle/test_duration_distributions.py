"""Duration specs: fixed, lognormal ``{median, p95}`` and uniform ``{min, max}`` (DESIGN.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.lifecycle.distributions import (
    Z_95,
    DurationSpec,
    Fixed,
    LogNormal,
    Uniform,
    parse_duration_spec,
)

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
SECONDS = st.floats(min_value=0.001, max_value=10_000, allow_nan=False, allow_infinity=False)


@st.composite
def lognormals(draw: st.DrawFn) -> LogNormal:
    median = draw(SECONDS)
    return LogNormal(median, median * draw(st.floats(min_value=1.05, max_value=20.0)))


@st.composite
def specs(draw: st.DrawFn) -> DurationSpec:
    low, high = sorted((draw(SECONDS), draw(SECONDS)))
    shapes: list[DurationSpec] = [Fixed(low), Uniform(low, high), LogNormal(low, high)]
    return draw(st.sampled_from(shapes))


def test_go_durations_and_numbers_of_seconds_are_fixed_durations() -> None:
    assert parse_duration_spec("90s") == Fixed(90.0)
    assert parse_duration_spec("1h30m") == Fixed(5400.0)
    assert parse_duration_spec(45) == Fixed(45.0)
    assert parse_duration_spec(2.5) == Fixed(2.5)


def test_median_and_p95_make_a_lognormal_with_the_documented_parameters() -> None:
    spec = parse_duration_spec({"median": "2m", "p95": "5m"})
    assert spec == LogNormal(120.0, 300.0)
    assert isinstance(spec, LogNormal)
    assert spec.mu == math.log(120.0)
    assert spec.sigma == pytest.approx((math.log(300.0) - math.log(120.0)) / 1.6448536269514722)


def test_min_and_max_make_a_uniform() -> None:
    assert parse_duration_spec({"min": "1m", "max": 180}) == Uniform(60.0, 180.0)


def test_a_distribution_with_one_possible_value_is_a_fixed_duration() -> None:
    assert parse_duration_spec({"min": "30s", "max": 30}) == Fixed(30.0)
    assert parse_duration_spec({"median": "1m", "p95": "60s"}) == Fixed(60.0)
    assert parse_duration_spec({"median": 0, "p95": 0}) == Fixed(0.0)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"median": "5m", "p95": "2m"}, r"p95 \(120s\) must not be less than median \(300s\)"),
        ({"min": "3m", "max": "1m"}, r"min \(180s\) must not be greater than max \(60s\)"),
        (-5, "must not be negative"),
        ({"min": -1, "max": 5}, "min: durations must not be negative"),
        ({"median": "fast", "p95": "5m"}, "median: invalid duration 'fast'"),
        ("-5s", "invalid duration '-5s'"),
        ("soon", r"invalid duration 'soon'.*expected a duration \('90s' or seconds\)"),
        (True, "not True"),
        ({"median": "1m", "p90": "2m"}, r"unknown field\(s\) p90"),
        ({"median": "1m"}, r"got fields \{median\}; expected"),
        ({"min": 1, "max": 2, "median": 1}, r"got fields \{max, median, min\}"),
        ({"median": 0, "p95": "1m"}, "median must be greater than 0 for a lognormal"),
        (float("inf"), "durations are at most 2562047h47m16s"),
    ],
)
def test_bad_values_say_what_is_wrong(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration_spec(value)


def test_a_fixed_duration_draws_nothing_and_the_others_draw_one_value() -> None:
    fixed_rng, reference = np.random.default_rng(3), np.random.default_rng(3)
    assert Fixed(7.0).sample(fixed_rng) == 7.0
    assert fixed_rng.standard_normal() == reference.standard_normal()

    rng, reference = np.random.default_rng(3), np.random.default_rng(3)
    LogNormal(10.0, 20.0).sample(rng)
    Uniform(1.0, 2.0).sample(rng)
    reference.standard_normal()
    reference.uniform()
    assert rng.random() == reference.random()


def test_uniform_samples_stay_within_bounds_and_average_the_midpoint() -> None:
    spec = Uniform(60.0, 180.0)
    rng = np.random.default_rng(0)
    samples = np.array([spec.sample(rng) for _ in range(20_000)])
    assert samples.min() >= 60.0
    assert samples.max() <= 180.0
    assert samples.mean() == pytest.approx(spec.mean(), rel=0.01)


def test_lognormal_mean_matches_many_samples() -> None:
    spec = LogNormal(120.0, 300.0)
    rng = np.random.default_rng(1)
    samples = np.array([spec.sample(rng) for _ in range(50_000)])
    assert samples.mean() == pytest.approx(spec.mean(), rel=0.02)
    assert spec.mean() == pytest.approx(120.0 * math.exp(spec.sigma**2 / 2))


@settings(max_examples=50, deadline=None)
@given(spec=specs(), seed=SEEDS)
def test_the_same_seed_gives_the_same_samples(spec: DurationSpec, seed: int) -> None:
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    assert [spec.sample(rng_a) for _ in range(20)] == [spec.sample(rng_b) for _ in range(20)]


@settings(max_examples=30, deadline=None)
@given(spec=lognormals(), seed=SEEDS)
def test_lognormal_sample_median_and_p95_approach_the_spec(spec: LogNormal, seed: int) -> None:
    n = 20_001
    rng = np.random.default_rng(seed)
    samples = np.array([spec.sample(rng) for _ in range(n)])
    # The sample median of a normal in log space has standard error ~ 1.2533 sigma / sqrt(n);
    # allow six of them. The share at or below p95 has standard error sqrt(0.95 * 0.05 / n) ~ 0.0015.
    assert abs(math.log(float(np.median(samples))) - spec.mu) <= 6 * 1.2533 * spec.sigma / math.sqrt(n)
    assert np.mean(samples <= spec.p95_s) == pytest.approx(0.95, abs=0.01)


def test_a_lognormal_without_spread_always_gives_its_median() -> None:
    rng = np.random.default_rng(5)
    assert {LogNormal(90.0, 90.0).sample(rng) for _ in range(10)} == {90.0}


def test_z_95_is_the_normal_quantile() -> None:
    assert 0.5 * math.erfc(-Z_95 / math.sqrt(2)) == pytest.approx(0.95, abs=1e-12)
