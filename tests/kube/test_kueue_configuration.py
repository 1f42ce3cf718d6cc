"""Kueue's manager ``Configuration`` (``config.kueue.x-k8s.io``) and the ``fairSharing.weight`` of its
ClusterQueues and Cohorts, read from a scenario (``gpufleet.kube.kueue_config``, ``gpufleet.kube.kueue``).

Rules from ``kubernetes-sigs/kueue``: ``apis/config/v1beta{1,2}/configuration_types.go`` (the fields;
v1beta1's ``fairSharing.enable``), ``apis/config/v1beta1/configuration_conversion.go`` and
``defaults.go`` (v1beta1: off unless enabled, strategies defaulted; ``waitForPodsReady``'s defaults in each
version), ``pkg/config/config.go`` (strict
decoding), ``pkg/config/validation.go`` (``validateFairSharing``: the strategy lists accepted) and
``pkg/webhooks/common.go`` (``validateFairSharing``: a weight is not negative and, when not 0, > 1n).
"""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from conftest import cluster_queue, gpu_resource_groups, resource_flavor
from gpufleet.model.kueue import (
    CREATION_TIMESTAMP,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    FairSharing,
    WaitForPodsReady,
)

DEFAULT = FairSharing((LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE))
NO_EFFECT = (
    "spec.fairSharing.weight: has no effect: fair sharing is off (no Kueue Configuration with fairSharing)"
)


def configuration(version: str, body: str) -> str:
    return f"apiVersion: config.kueue.x-k8s.io/{version}\nkind: Configuration\n{body}"


def fair(tmp_path: Path, version: str, body: str) -> FairSharing | None:
    return load(tmp_path, configuration(version, body)).kueue.fair_sharing


def test_v1beta2_fair_sharing_is_on_with_its_strategies(tmp_path: Path) -> None:
    body = "fairSharing:\n  preemptionStrategies: [LessThanInitialShare]\n"
    assert fair(tmp_path, "v1beta2", body) == FairSharing((LESS_THAN_INITIAL_SHARE,))


def test_v1beta1_fair_sharing_needs_enable_and_defaults_its_strategies(tmp_path: Path) -> None:
    assert fair(tmp_path, "v1beta1", "fairSharing: {enable: true}\n") == DEFAULT
    assert (
        fair(tmp_path, "v1beta1", "fairSharing: {enable: false, preemptionStrategies: [Nonsense]}\n") is None
    )
    assert fair(tmp_path, "v1beta2", "manageJobsWithoutQueueName: false\n") is None


def test_strategies_are_required_in_v1beta2_and_only_kueues_lists_are_accepted(tmp_path: Path) -> None:
    where = "scenario.yaml: document 1 (Configuration): fairSharing.preemptionStrategies"
    assert problems(tmp_path, configuration("v1beta2", "fairSharing: {}\n")) == [
        f"{where}: Required value: must be specified"
    ]
    given = "fairSharing:\n  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n"
    assert problems(tmp_path, configuration("v1beta2", given)) == [
        f'{where}: Unsupported value: ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]: '
        'supported values: "LessThanOrEqualToFinalShare", "LessThanInitialShare", '
        '"LessThanOrEqualToFinalShare,LessThanInitialShare"'
    ]


def test_other_fields_are_warnings_a_misspelt_one_an_error_and_one_configuration_at_most(
    tmp_path: Path,
) -> None:
    body = "waitForPodsReady: {enable: true}\nintegrations: {frameworks: [batch/job]}\n"
    body += "fairSharing: {enable: true}\n"
    assert warnings(tmp_path, configuration("v1beta1", body)) == [
        "scenario.yaml: document 1 (Configuration): integrations is not modelled; ignored",
    ]
    assert problems(tmp_path, configuration("v1beta2", "fairSharings: {}\n")) == [
        "scenario.yaml: document 1 (Configuration): fairSharings: "
        "Additional properties are not allowed ('fairSharings' was unexpected)"
    ]
    twice = configuration("v1beta2", "") + "---\n" + configuration("v1beta1", "")
    assert problems(tmp_path, twice) == [
        "scenario.yaml: document 2 (Configuration): at most one Kueue Configuration may be given; "
        "the first is scenario.yaml: document 1"
    ]


def test_a_kind_kueues_config_group_does_not_have_is_an_error(tmp_path: Path) -> None:
    text = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configration\n"
    assert problems(tmp_path, text) == [
        "scenario.yaml: document 1 (Configration): kind: "
        'unknown kind "Configration" in config.kueue.x-k8s.io/v1beta2'
    ]


def weighted(weight: str) -> str:
    return cluster_queue(
        "team-a", "h100", 8, spec=f"  cohortName: research\n  fairSharing: {{weight: {weight}}}\n"
    )


def test_weights_are_read_and_validated(tmp_path: Path) -> None:
    on = configuration("v1beta2", "fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare]}\n")
    cohort = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\n"
        'spec:\n  fairSharing: {weight: "0"}\n' + gpu_resource_groups("h100", 0)
    )
    scenario = load(tmp_path, "\n---\n".join([on, resource_flavor("h100"), weighted('"0.5"'), cohort]))
    assert scenario.kueue.cluster_queues["team-a"].fair_weight == 0.5
    assert scenario.kueue.cohorts["research"].fair_weight == 0.0
    assert scenario.warnings == []
    where = "scenario.yaml: document 1 (ClusterQueue/team-a): spec.fairSharing"
    assert problems(tmp_path, weighted('"-1"')) == [
        f'{where}: Invalid value: "-1": must be greater than or equal to 0'
    ]
    assert problems(tmp_path, weighted("1n")) == [
        f'{where}: Invalid value: "1n": When not 0, weight must be > 10e-9'
    ]


def test_a_weight_without_fair_sharing_has_no_effect(tmp_path: Path) -> None:
    assert f"scenario.yaml: document 1 (ClusterQueue/team-a): {NO_EFFECT}" in warnings(
        tmp_path, weighted("2")
    )
    assert not any("fairSharing" in w for w in warnings(tmp_path, weighted("1")))


def pods_ready(tmp_path: Path, version: str, body: str) -> WaitForPodsReady | None:
    return load(tmp_path, configuration(version, body)).kueue.wait_for_pods_ready


def test_v1beta1_wait_for_pods_ready_needs_enable_and_takes_v1beta1_defaults(tmp_path: Path) -> None:
    """v1beta1 ``SetDefaults_Configuration``: timeout 5 min, blockAdmission true (``Enable``), recoveryTimeout
    the timeout, backoff 60 s to 3600 s, timestamp Eviction; off without ``enable: true``."""
    assert pods_ready(tmp_path, "v1beta1", "waitForPodsReady: {enable: true}\n") == WaitForPodsReady(
        300.0, True, 300.0
    )
    assert pods_ready(tmp_path, "v1beta1", "waitForPodsReady: {timeout: 1m}\n") is None
    assert pods_ready(tmp_path, "v1beta1", "manageJobsWithoutQueueName: false\n") is None


def test_v1beta2_wait_for_pods_ready_is_on_with_v1beta2_defaults(tmp_path: Path) -> None:
    """v1beta2 ``SetDefaults_Configuration`` always sets ``waitForPodsReady`` (timeout 30 min, blockAdmission
    false); the fields given override the defaults; ``recoveryTimeout: 0s`` turns recovery checks off."""
    assert pods_ready(tmp_path, "v1beta2", "manageJobsWithoutQueueName: false\n") == WaitForPodsReady(
        1800.0, False, 1800.0
    )
    body = (
        "waitForPodsReady:\n  timeout: 5m\n  blockAdmission: true\n  recoveryTimeout: 0s\n"
        "  requeuingStrategy: {timestamp: Creation, backoffLimitCount: 1, backoffBaseSeconds: 10, "
        "backoffMaxSeconds: 0}\n"
    )
    assert pods_ready(tmp_path, "v1beta2", body) == WaitForPodsReady(
        300.0, True, None, CREATION_TIMESTAMP, 1, 10.0, 0.0
    )


def test_wait_for_pods_ready_is_validated_as_kueue_validates_it(tmp_path: Path) -> None:
    """``validateWaitForPodsReady``: no negative timeout or backoff field; a timestamp of Creation or
    Eviction."""
    where = "scenario.yaml: document 1 (Configuration): waitForPodsReady"
    body = "waitForPodsReady:\n  timeout: -1m\n  requeuingStrategy: {timestamp: Now, backoffLimitCount: -1}\n"
    assert problems(tmp_path, configuration("v1beta2", body)) == [
        f'{where}.timeout: Invalid value: "-1m": must be greater than or equal to 0',
        f'{where}.requeuingStrategy.timestamp: Unsupported value: "Now": supported values: "Creation", '
        '"Eviction"',
        f"{where}.requeuingStrategy.backoffLimitCount: Invalid value: -1: must be greater than or equal to 0",
    ]
