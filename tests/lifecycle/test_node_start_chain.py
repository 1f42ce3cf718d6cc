"""The GPU node start chain (seed 000): stages in order, Ready after join, GPUs after devicePlugin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufleet.lifecycle.distributions import Fixed, LogNormal, Uniform
from gpufleet.lifecycle.node_start import (
    DEVICE_PLUGIN,
    STAGE_NAMES,
    StageSpan,
    StartStage,
    parse_provisioning,
    plan_node_start,
    validate_stages,
)

RNG = np.random.default_rng(0)


def test_seed_000_order_is_ready_after_join_and_gpu_ready_after_the_device_plugin() -> None:
    stages = parse_provisioning(
        {"capacityWait": "30s", "boot": "90s", "driver": "3m", "join": 20, "devicePlugin": "40s"}
    )
    plan = plan_node_start(stages, RNG)
    assert plan.ends == (
        ("capacityWait", 30.0),
        ("boot", 120.0),
        ("driver", 300.0),
        ("join", 320.0),
        ("devicePlugin", 360.0),
    )
    assert plan.ready_s == 320.0
    assert plan.gpu_ready_s == 360.0


def test_with_the_gpu_operator_the_node_is_ready_before_the_driver_installs() -> None:
    plan = plan_node_start(
        parse_provisioning({"boot": "90s", "join": "20s", "driver": "3m", "devicePlugin": "40s"}), RNG
    )
    assert plan.ready_s == 110.0
    assert plan.gpu_ready_s == 330.0
    assert plan.breakdown() == (
        StageSpan("boot", 0.0, 90.0),
        StageSpan("join", 90.0, 110.0),
        StageSpan("driver", 110.0, 290.0),
        StageSpan("devicePlugin", 290.0, 330.0),
    )


def test_without_a_device_plugin_stage_the_gpus_are_ready_when_the_last_stage_ends() -> None:
    plan = plan_node_start(parse_provisioning({"boot": "1m", "join": "10s", "driver": "2m"}), RNG)
    assert plan.ready_s == 70.0
    assert plan.gpu_ready_s == 190.0


def test_without_a_join_stage_the_node_is_ready_when_the_last_stage_before_the_device_plugin_ends() -> None:
    plan = plan_node_start(parse_provisioning({"boot": "1m", "driver": "2m", "devicePlugin": "30s"}), RNG)
    assert plan.ready_s == 180.0
    assert plan.gpu_ready_s == 210.0
    assert plan_node_start(parse_provisioning({"devicePlugin": "30s"}), RNG).ready_s == 0.0


def test_an_empty_chain_is_ready_at_once() -> None:
    plan = plan_node_start((), RNG)
    assert (plan.ready_s, plan.gpu_ready_s, plan.breakdown()) == (0.0, 0.0, ())


def test_stages_are_drawn_in_the_listed_order_from_the_callers_generator() -> None:
    stages = parse_provisioning(
        {"boot": {"median": "90s", "p95": "3m"}, "join": "10s", "driver": {"min": 60, "max": 120}}
    )
    plan = plan_node_start(stages, np.random.default_rng(42))
    reference = np.random.default_rng(42)
    boot = LogNormal(90.0, 180.0).sample(reference)
    driver = Uniform(60.0, 120.0).sample(reference)
    assert plan.ends == (("boot", boot), ("join", boot + 10.0), ("driver", boot + 10.0 + driver))
    assert plan == plan_node_start(stages, np.random.default_rng(42))


@pytest.mark.parametrize(
    ("stages", "message"),
    [
        (
            [StartStage("boot", Fixed(1.0)), StartStage("warmup", Fixed(1.0))],
            "unknown stage 'warmup'; stages are",
        ),
        ([StartStage("boot", Fixed(1.0)), StartStage("boot", Fixed(2.0))], "stage 'boot' is listed twice"),
        (
            [StartStage("devicePlugin", Fixed(1.0)), StartStage("join", Fixed(1.0))],
            "devicePlugin .* must be the last",
        ),
    ],
)
def test_invalid_chains_are_refused(stages: list[StartStage], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_stages(stages)
    with pytest.raises(ValueError, match=message):
        plan_node_start(stages, RNG)


def test_a_bad_stage_duration_names_the_stage() -> None:
    with pytest.raises(ValueError, match=r"^driver: p95 \(60s\) must not be less than median \(120s\)"):
        parse_provisioning({"boot": "1m", "driver": {"median": "2m", "p95": "1m"}})
    with pytest.raises(ValueError, match=r"devicePlugin .* must be the last stage"):
        parse_provisioning({"devicePlugin": "1m", "join": "1m"})


def test_stages_given_as_pairs_keep_their_order_and_a_stage_written_twice_is_refused() -> None:
    stages = parse_provisioning([("join", "10s"), ("driver", "1m")])
    assert [stage.name for stage in stages] == ["join", "driver"]
    with pytest.raises(ValueError, match="stage 'boot' is listed twice"):
        parse_provisioning([("boot", "1m"), ("boot", "2m")])


@st.composite
def chains(draw: st.DrawFn) -> list[StartStage]:
    names = draw(st.permutations([name for name in STAGE_NAMES if name != DEVICE_PLUGIN]))
    names = names[: draw(st.integers(0, len(names)))]
    if draw(st.booleans()):
        names.append(DEVICE_PLUGIN)
    seconds = st.floats(min_value=0.0, max_value=3600.0, allow_nan=False)
    return [StartStage(name, Uniform(*sorted((draw(seconds), draw(seconds))))) for name in names]


@settings(max_examples=100, deadline=None)
@given(stages=chains(), seed=st.integers(0, 2**32 - 1))
def test_the_breakdown_is_contiguous_from_the_launch_to_gpu_ready(
    stages: list[StartStage], seed: int
) -> None:
    plan = plan_node_start(stages, np.random.default_rng(seed))
    spans = plan.breakdown()
    assert [span.stage for span in spans] == [stage.name for stage in stages]
    assert all(span.start_s <= span.end_s for span in spans)
    assert [span.start_s for span in spans] == [0.0, *(span.end_s for span in spans)][: len(spans)]
    assert 0.0 <= plan.ready_s <= plan.gpu_ready_s == (spans[-1].end_s if spans else 0.0)
