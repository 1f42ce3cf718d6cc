"""The PodDisruptionBudget's expected count, as the disruption controller's ``getExpectedPodCount``
(``pkg/controller/disruption/disruption.go``) takes it: the controllers' scale for ``maxUnavailable`` and
percentages, the covered pods for an integer ``minAvailable``."""

from __future__ import annotations

from gpufleet.model.disruption_budget import DisruptionBudget, expected_pod_count
from gpufleet.model.pod import OwnerRef, Pod

SELECTOR = (("app", "serve"),)


def pods(owner: OwnerRef | None, count: int) -> list[Pod]:
    return [Pod(f"p{i}", labels={"app": "serve"}, owner=owner) for i in range(count)]


def test_max_unavailable_expects_the_deployments_replicas_not_the_pods_left() -> None:
    """4 replicas, one failed and not yet made again: 3 pods, expected 4, so with the 3 healthy no
    eviction is allowed (upstream: desiredHealthy = 4 - 1)."""
    budget = DisruptionBudget("default", "serve", SELECTOR, max_unavailable=1)
    left = pods(OwnerRef("Deployment", "serve"), 3)
    expected = expected_pod_count(budget, left, lambda pod: 4)
    assert expected == 4
    assert budget.allowed(healthy=3, expected=expected) == 0


def test_a_percentage_min_available_scales_with_the_controllers_replicas() -> None:
    budget = DisruptionBudget("default", "serve", SELECTOR, min_available="50%")
    assert expected_pod_count(budget, pods(OwnerRef("Deployment", "serve"), 2), lambda pod: 6) == 6


def test_each_controller_counts_once_and_pods_without_one_are_left_out() -> None:
    """``getExpectedScale`` sums each controller's scale once; unmanaged pods add nothing."""
    budget = DisruptionBudget("default", "serve", SELECTOR, max_unavailable="25%")
    covered = [*pods(OwnerRef("Deployment", "a"), 3), *pods(OwnerRef("Deployment", "b"), 1), *pods(None, 2)]
    scales = {"a": 3, "b": 5}
    assert expected_pod_count(budget, covered, lambda pod: scales[pod.owner.name if pod.owner else ""]) == 8


def test_a_controller_without_a_scale_allows_no_disruption() -> None:
    """A Job has no scale subresource: "found no controllers for pod", and ``failSafe`` allows none."""
    budget = DisruptionBudget("default", "serve", SELECTOR, max_unavailable=1)
    assert expected_pod_count(budget, pods(OwnerRef("Job", "train"), 2), lambda pod: None) is None


def test_an_integer_min_available_counts_the_covered_pods() -> None:
    budget = DisruptionBudget("default", "serve", SELECTOR, min_available=2)
    assert expected_pod_count(budget, pods(OwnerRef("Job", "train"), 3), lambda pod: None) == 3
