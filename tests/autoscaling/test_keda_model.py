"""ScaledObject / ScaledJob specs and trigger metadata (``gpufleet.model.keda``).

Upstream: ``kedacore/keda: apis/keda/v1alpha1/scaledobject_types.go``, ``scaledjob_types.go``,
``pkg/scalers/redis_scaler.go``, ``pkg/scalers/prometheus_scaler.go``, ``pkg/scalers/scaler.go``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufleet.model.keda import (
    Fallback,
    KedaSpecError,
    PrometheusScaler,
    RedisListScaler,
    ScaledJobSpec,
    ScaledObjectSpec,
    ScaleTargetRef,
    ScaleTrigger,
    ScalingStrategy,
    scaled_job_from_manifest,
    scaled_object_from_manifest,
)


def redis(**metadata: str) -> ScaleTrigger:
    return ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "jobs", **metadata})


def scaled_object(*triggers: ScaleTrigger, **kw: Any) -> ScaledObjectSpec:
    return ScaledObjectSpec(
        "so",
        "default",
        ScaleTargetRef("worker"),
        triggers or (redis(),),
        **kw,
    )


def test_redis_list_length_defaults_to_5_and_activation_to_0() -> None:
    # redis_scaler.go: `keda:"name=listLength, ..., default=5"`, activationListLength optional (0).
    trigger = ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "train:jobs"})
    assert trigger.scaler == RedisListScaler("train:jobs", list_length=5, activation_list_length=0)
    assert trigger.metric_type == "AverageValue"
    assert trigger.target_value == 5.0
    assert trigger.activation_value == 0.0


def test_redis_connection_keys_are_accepted_and_ignored() -> None:
    trigger = redis(
        address="redis.ai-train.svc:6379", host="redis", port="6379", databaseIndex="2", enableTLS="true"
    )
    assert trigger.scaler == RedisListScaler("jobs")


def test_redis_enable_tls_must_parse_as_a_go_boolean() -> None:
    # redisConnectionInfo.SetEnableTLS: strconv.ParseBool of the enableTLS metadata.
    with pytest.raises(
        KedaSpecError,
        match=r'^metadata\.enableTLS: EnableTLS parsing error strconv\.ParseBool: parsing "x": invalid',
    ):
        redis(enableTLS="x")


def test_redis_needs_an_address_or_as_many_hosts_as_ports() -> None:
    # redisMetadata.Validate -> validateRedisAddress: ErrRedisNoAddresses, ErrRedisUnequalHostsAndPorts.
    no_address = r"no addresses or hosts given\. address should be a comma separated list of host:port"
    with pytest.raises(KedaSpecError, match=rf"^metadata\.address: {no_address}"):
        ScaleTrigger.parse("redis", {"listName": "jobs"})
    with pytest.raises(KedaSpecError, match=rf"^metadata\.address: {no_address}"):
        ScaleTrigger.parse("redis", {"listName": "jobs", "host": "redis"})
    with pytest.raises(KedaSpecError, match=r"^metadata\.hosts: not enough hosts or ports given"):
        ScaleTrigger.parse("redis-cluster", {"listName": "jobs", "hosts": "a, b", "ports": "1"})
    cluster = ScaleTrigger.parse("redis-cluster", {"listName": "jobs", "hosts": " a, b ", "ports": "1,2"})
    assert isinstance(cluster.scaler, RedisListScaler)
    assert cluster.scaler.connection.addresses == ("a:1", "b:2")
    # What the container environment or a TriggerAuthentication may hold is not checked.
    assert ScaleTrigger.parse("redis", {"listName": "jobs", "addressFromEnv": "REDIS_ADDRESS"})
    assert ScaleTrigger.parse("redis", {"listName": "jobs"}, authentication_ref=True)


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3", "+5", "05", "5 5"])
def test_redis_list_length_must_be_an_integer_string(value: str) -> None:
    with pytest.raises(KedaSpecError, match=r"^metadata\.listLength: .* is not an integer"):
        redis(listLength=value)


def test_an_empty_metadata_value_counts_as_absent() -> None:
    assert redis(listLength="", activationListLength="").scaler == RedisListScaler("jobs", 5, 0)
    with pytest.raises(KedaSpecError, match=r"^metadata\.threshold: required$"):
        ScaleTrigger.parse("prometheus", {"serverAddress": "s", "query": "queue_length", "threshold": ""})


def test_redis_list_name_is_required() -> None:
    with pytest.raises(KedaSpecError, match=r"^metadata\.listName: required$"):
        ScaleTrigger.parse("redis", {"listLength": "1"})


def test_redis_non_positive_list_length_is_rejected_before_the_hpa_divides_by_it() -> None:
    with pytest.raises(KedaSpecError, match=r"^metadata\.listLength: must be positive"):
        redis(listLength="0")


def test_prometheus_threshold_is_a_decimal_and_activation_defaults_to_0() -> None:
    trigger = ScaleTrigger.parse(
        "prometheus",
        {
            "serverAddress": "http://prom:9090",
            "query": "queue_length",
            "threshold": "100.50",
            "ignoreNullValues": "false",
        },
    )
    assert trigger.scaler == PrometheusScaler("http://prom:9090", "queue_length", 100.5, 0.0, False)
    assert trigger.type == "prometheus"
    assert ScaleTrigger.parse(
        "prometheus",
        {"serverAddress": "s", "query": "queue_length", "threshold": "1e3", "activationThreshold": "5.5"},
    ).activation_value == pytest.approx(5.5)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"serverAddress": "s", "query": "queue_length"}, r"^metadata\.threshold: required$"),
        (
            {"serverAddress": "s", "query": "queue_length", "threshold": "ten"},
            r"^metadata\.threshold: 'ten' is not a finite",
        ),
        (
            {"serverAddress": "s", "query": "queue_length", "threshold": "Inf"},
            r"^metadata\.threshold: 'Inf' is not a finite",
        ),
        (
            {"serverAddress": "s", "query": "queue_length", "threshold": "0.0001"},
            r"^metadata\.threshold: must be at least",
        ),
        ({"query": "queue_length", "threshold": "1"}, r"^metadata\.serverAddress: required$"),
        ({"serverAddress": "s", "threshold": "1"}, r"^metadata\.query: required$"),
        (
            {"serverAddress": "s", "query": "queue_length", "threshold": "1", "activationThreshold": "x"},
            r"^metadata\.activationThreshold: 'x' is not a finite",
        ),
    ],
)
def test_prometheus_metadata_errors_name_the_key(metadata: dict[str, str], message: str) -> None:
    with pytest.raises(KedaSpecError, match=message):
        ScaleTrigger.parse("prometheus", metadata)


def test_utilization_is_refused_for_external_scalers() -> None:
    # scaler.go GetMetricTargetType: ErrScalerUnsupportedUtilizationMetricType.
    with pytest.raises(KedaSpecError, match="'Utilization' metric type is unsupported for external metrics"):
        ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "l"}, metric_type="Utilization")
    with pytest.raises(KedaSpecError, match="metricType: must be one of"):
        ScaleTrigger.parse("redis", {"address": "redis:6379", "listName": "l"}, metric_type="Average")


def test_unmodelled_trigger_types_are_refused() -> None:
    with pytest.raises(KedaSpecError, match="the KEDA scaler 'rabbitmq' is not modelled"):
        ScaleTrigger.parse("rabbitmq", {"queueName": "q"})


def test_scaled_object_defaults_match_keda() -> None:
    spec = scaled_object()
    assert (spec.polling_interval_s, spec.cooldown_period_s, spec.initial_cooldown_period_s) == (30, 300, 0)
    assert (spec.min_replica_count, spec.max_replica_count, spec.idle_replica_count) == (0, 100, None)
    assert spec.hpa_min_replicas == 1  # GetHPAMinReplicas: min if > 0, else 1
    assert spec.resolved_hpa_name == "keda-hpa-so"
    assert scaled_object(hpa_name="custom-hpa").resolved_hpa_name == "custom-hpa"


def test_min_above_max_is_rejected_with_kedas_message() -> None:
    with pytest.raises(KedaSpecError, match="MinReplicaCount=5 must be less than MaxReplicaCount=4"):
        scaled_object(min_replica_count=5, max_replica_count=4)


def test_idle_replica_count_must_be_below_min() -> None:
    # CheckReplicaCountBoundsAreValid compares idle with GetHPAMinReplicas.
    assert scaled_object(min_replica_count=2, idle_replica_count=0).idle_replica_count == 0
    with pytest.raises(KedaSpecError, match="IdleReplicaCount=2 must be less than MinReplicaCount=2"):
        scaled_object(min_replica_count=2, idle_replica_count=2)


def test_fallback_needs_non_negative_numbers_and_accepts_value_triggers() -> None:
    # CheckFallbackValid (KEDA v2.18+): only cpu/memory triggers cannot fall back; Value ones can.
    assert scaled_object(fallback=Fallback(3, 6)).fallback == Fallback(3, 6, "static")
    value_trigger = ScaleTrigger(RedisListScaler("l"), metric_type="Value")
    assert scaled_object(value_trigger, fallback=Fallback(3, 6)).fallback == Fallback(3, 6)
    with pytest.raises(KedaSpecError, match="FailureThreshold=-1 & Replicas=6 must both be greater"):
        scaled_object(fallback=Fallback(-1, 6))


def test_fallback_behavior_scaling_modifiers_needs_a_formula() -> None:
    # verifyScaledObjects (scaledobject_webhook.go): the behavior needs advanced.scalingModifiers.formula.
    with pytest.raises(
        KedaSpecError,
        match=r"^spec\.fallback\.behavior: scalingModifiers fallback behavior requires "
        r"scalingModifiers\.formula to be defined$",
    ):
        scaled_object(fallback=Fallback(3, 6, "scalingModifiers"))


def test_a_scaled_object_needs_a_trigger() -> None:
    with pytest.raises(KedaSpecError, match=r"^spec\.triggers: at least one trigger is required$"):
        ScaledObjectSpec("so", "default", ScaleTargetRef("worker"), ())


def test_scaled_job_max_replica_count_excludes_the_minimum() -> None:
    # scaledjob_types.go MaxReplicaCount(): max - MinReplicaCount(); 100 when unset; max when min > max.
    def job(**kw: Any) -> ScaledJobSpec:
        return ScaledJobSpec("sj", "default", "sj", (redis(),), **kw)

    assert job().effective_max_replica_count == 100
    assert job(min_replica_count=5).effective_max_replica_count == 100
    assert job(min_replica_count=2, max_replica_count=10).effective_max_replica_count == 8
    assert job(min_replica_count=12, max_replica_count=10).effective_max_replica_count == 10
    assert job(min_replica_count=12, max_replica_count=10).effective_min_replica_count == 10
    assert (job().successful_jobs_history_limit, job().failed_jobs_history_limit) == (100, 100)


def test_custom_strategy_defaults_as_keda_v2_20_new_scaling_strategy() -> None:
    # scale_jobs.go NewScalingStrategy / customScalingStrategy (v2.20.2): no deduction deducts 0,
    # a percentage that does not parse selects the default strategy.
    assert ScalingStrategy("custom", custom_scaling_running_job_percentage="0.5").selected == "custom"
    assert ScalingStrategy("custom", 1, "").selected == "default"
    assert ScalingStrategy("custom", 1, "half").selected == "default"
    assert ScalingStrategy("eager").selected == "eager"
    with pytest.raises(KedaSpecError, match="strategy: must be one of"):
        ScalingStrategy("greedy")  # type: ignore[arg-type]


SEED_001_SCALED_OBJECT = {
    "apiVersion": "keda.sh/v1alpha1",
    "kind": "ScaledObject",
    "metadata": {"name": "gpu-train-scaler", "namespace": "ai-train"},
    "spec": {
        "scaleTargetRef": {"name": "train-worker"},
        "minReplicaCount": 0,
        "maxReplicaCount": 4,
        "cooldownPeriod": 300,
        "triggers": [
            {
                "type": "redis",
                "metadata": {
                    "address": "redis.ai-train.svc:6379",
                    "listName": "train:jobs",
                    "listLength": "1",
                },
            }
        ],
    },
}


def test_scaled_object_manifest_parses_with_defaults_filled_in() -> None:
    spec = scaled_object_from_manifest(SEED_001_SCALED_OBJECT)
    assert spec.name == "gpu-train-scaler" and spec.namespace == "ai-train"
    assert spec.scale_target_ref == ScaleTargetRef("train-worker", "Deployment", "apps/v1")
    assert (spec.min_replica_count, spec.max_replica_count, spec.cooldown_period_s) == (0, 4, 300)
    assert spec.polling_interval_s == 30
    assert spec.triggers == (ScaleTrigger(RedisListScaler("train:jobs", list_length=1)),)


def test_manifest_errors_carry_the_field_path() -> None:
    doc: dict[str, Any] = {
        "metadata": {"name": "so"},
        "spec": {
            "scaleTargetRef": {"name": "w"},
            "triggers": [
                {"type": "redis", "metadata": {"address": "r:6379", "listName": "l", "listLength": "lots"}}
            ],
        },
    }
    with pytest.raises(
        KedaSpecError, match=r"^spec\.triggers\[0\]\.metadata\.listLength: 'lots' is not an integer"
    ):
        scaled_object_from_manifest(doc)
    doc["spec"]["triggers"][0]["metadata"] = {"address": "r:6379", "listName": "l", "listLength": 1}
    with pytest.raises(KedaSpecError, match=r"^spec\.triggers\[0\]\.metadata\.listLength: must be a string"):
        scaled_object_from_manifest(doc)
    doc["spec"]["triggers"][0]["metadata"] = {"address": "r:6379", "listName": "l"}
    with pytest.raises(KedaSpecError, match=r"^spec\.cooldownPeriod: must be an integer"):
        scaled_object_from_manifest({**doc, "spec": {**doc["spec"], "cooldownPeriod": "300"}})
    with pytest.raises(KedaSpecError, match=r"^spec\.scaleTargetRef\.name: required"):
        scaled_object_from_manifest({"metadata": {"name": "so"}, "spec": {"triggers": []}})


def test_scaled_object_manifest_keeps_advanced_hpa_config_and_fallback() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 120}}
    doc: dict[str, Any] = {
        "metadata": {"name": "so"},
        "spec": {
            "scaleTargetRef": {"name": "w"},
            "fallback": {"failureThreshold": 3, "replicas": 2, "behavior": "currentReplicasIfHigher"},
            "advanced": {"horizontalPodAutoscalerConfig": {"name": "my-hpa", "behavior": behavior}},
            "triggers": [{"type": "redis", "metadata": {"address": "r:6379", "listName": "l"}}],
        },
    }
    spec = scaled_object_from_manifest(doc)
    assert spec.fallback == Fallback(3, 2, "currentReplicasIfHigher")
    assert spec.hpa_behavior == behavior and spec.resolved_hpa_name == "my-hpa"
    with pytest.raises(KedaSpecError, match=r"^spec\.fallback\.replicas: required"):
        scaled_object_from_manifest({**doc, "spec": {**doc["spec"], "fallback": {"failureThreshold": 3}}})


def test_scaled_job_manifest_parses_the_scaling_strategy() -> None:
    doc: dict[str, Any] = {
        "kind": "ScaledJob",
        "metadata": {"name": "rabbitmq-consumer"},
        "spec": {
            "jobTargetRef": {"template": {}},
            "pollingInterval": 10,
            "maxReplicaCount": 30,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 2,
            "scalingStrategy": {
                "strategy": "custom",
                "customScalingQueueLengthDeduction": 1,
                "customScalingRunningJobPercentage": "0.5",
                "pendingPodConditions": ["Ready", "PodScheduled"],
            },
            "triggers": [
                {"type": "redis", "metadata": {"address": "r:6379", "listName": "hello", "listLength": "5"}}
            ],
        },
    }
    spec = scaled_job_from_manifest(doc)
    assert spec.job_target_ref == "rabbitmq-consumer" and spec.namespace == "default"
    assert (spec.polling_interval_s, spec.max_replica_count) == (10, 30)
    assert (spec.successful_jobs_history_limit, spec.failed_jobs_history_limit) == (3, 2)
    assert spec.scaling_strategy == ScalingStrategy("custom", 1, "0.5", ("Ready", "PodScheduled"), "max")
    with pytest.raises(KedaSpecError, match=r"^spec\.jobTargetRef: required"):
        scaled_job_from_manifest({**doc, "spec": {"triggers": doc["spec"]["triggers"]}})
