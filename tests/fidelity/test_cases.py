"""Fidelity cases before they meet the control plane: how a scenario is flattened into what both
sides are given, which cases the upstream binaries cannot decide, and the generated cases."""

from __future__ import annotations

import pytest
from e2e.fidelity.case import Case, flatten
from e2e.fidelity.generate import case as generated
from e2e.fidelity.sources import example_cases, generated_cases, seed_004_cases


def by_name(cases: list[Case]) -> dict[str, Case]:
    return {c.name: c for c in cases}


def test_seed_004_pods_are_created_in_the_simulators_order_and_names_without_timing() -> None:
    flat = flatten(by_name(seed_004_cases())["examples/seed-004/default-scheduler.yaml"])
    assert [p["metadata"]["name"] for p in flat.pods] == ["s4a-0", "s4b-0", "t16-0", "t16-1", "t8-0"]
    assert flat.later == [False, True, True, False, True]  # submit-at 0, 10, 20 (both ranks), 30 s
    for p in flat.pods:
        assert not any(k.startswith("gpufleet.io/") for k in p["metadata"].get("annotations", {}))
        assert p["spec"]["terminationGracePeriodSeconds"] == 0
    assert [n["metadata"]["name"] for n in flat.nodes] == ["node-a", "node-b", "node-c"]
    assert flat.nodes[0]["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert flat.scheduler_config is None and flat.profiles == {"default-scheduler"}
    assert not flat.excluded and not flat.not_modelled


def test_a_profile_with_plugins_outside_kube_scheduler_is_excluded_with_the_reason() -> None:
    flat = flatten(by_name(example_cases())["examples/seed-004/coscheduling.yaml"])
    assert flat.excluded == "profile gang-scheduler uses plugins kube-scheduler does not have: Coscheduling"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("examples/gpu-sharing/fractions.yaml", "fractional GPUs (KAI or HAMi annotations)"),
        ("examples/kueue/cohort-reclaim.yaml", "Kueue admission"),
        ("examples/seed-001/scaled-job.yaml", "no pod at the start: KEDA makes its pods"),
        ("examples/scheduling/gates-ports-images.yaml", "scheduling gates removed at a scenario time"),
    ],
)
def test_what_the_upstream_binaries_cannot_decide_says_why(name: str, reason: str) -> None:
    assert flatten(by_name(example_cases())[name]).excluded.startswith(reason)


def test_a_scheduler_configuration_gets_the_clusters_default_profile_and_full_scoring() -> None:
    flat = flatten(by_name(seed_004_cases())["examples/seed-004/most-allocated.yaml"])
    assert flat.scheduler_config is not None
    assert flat.scheduler_config["percentageOfNodesToScore"] == 100
    assert flat.profiles == {"binpack-scheduler", "default-scheduler"}
    assert [p["schedulerName"] for p in flat.scheduler_config["profiles"]][-1] == "default-scheduler"


def test_generated_cases_are_seeded_and_valid_scenarios() -> None:
    assert generated(7) == generated(7)
    assert generated(7) != generated(8)
    for case in generated_cases(40):
        flat = flatten(case)
        assert not flat.excluded, case.name
        assert 3 <= len(flat.pods) <= 9 and 2 <= len(flat.nodes) <= 6


def test_generated_pod_affinity_and_spread_cases_are_compared_as_modelled() -> None:
    """InterPodAffinity and PodTopologySpread are modelled: their cases carry no warning about them."""
    flats = [flatten(c) for c in generated_cases(60)]
    inter_pod = [
        f
        for f in flats
        if any(
            "topologySpreadConstraints" in p["spec"]
            or {"podAffinity", "podAntiAffinity"} & set(p["spec"].get("affinity", {}))
            for p in f.pods
        )
    ]
    assert inter_pod
    warned = [w for f in inter_pod for w in f.not_modelled]
    assert not [w for w in warned if "Affinity" in w or "topologySpread" in w]
