"""KEDA triggers and ScaledJob strategies as ``gpufleet validate`` reads them (KEDA v2.20.2).

A ``prometheus`` query gpufleet cannot evaluate is an error naming the file, the document, the
field and the query (before: it loaded and the scaler silently never scaled); a trigger type
gpufleet does not model is refused with the reason (``pkg/scaling/scalers_builder.go``); a ScaledJob
strategy is defaulted as ``scale_jobs.go`` ``NewScalingStrategy`` does, with a warning where KEDA
silently runs another one. The upstream manifests in ``shared/upstream-manifests/keda*`` load as a
KEDA user would expect.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_manifests import load, problems, relative, warnings
from typer.testing import CliRunner

from gpufleet.cli import app
from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.model.keda import PrometheusScaler, RedisListScaler, ScalingStrategy
from shared_files import UPSTREAM, needs_upstream

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: serving}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: server, image: server:1, resources: {limits: {nvidia.com/gpu: 1}}}
"""


def scaled_object(trigger: str) -> str:
    return f"""
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: web-scaler, namespace: serving}}
spec:
  scaleTargetRef: {{name: web}}
  triggers:
{trigger}
---
{DEPLOYMENT}
"""


def prometheus(query: str) -> str:
    return scaled_object(
        "  - type: prometheus\n    metadata:\n      serverAddress: http://prometheus:9090\n"
        f"      threshold: '10'\n      query: '{query}'"
    )


def scaled_job(
    strategy: str, trigger_type: str = "redis", metadata: str = "{address: redis:6379, listName: jobs}"
) -> str:
    return f"""
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {{name: worker, namespace: jobs}}
spec:
  jobTargetRef:
    template:
      metadata: {{annotations: {{gpufleet.io/duration: 10m}}}}
      spec:
        restartPolicy: Never
        containers: [{{name: w, image: w:1}}]
  scalingStrategy: {strategy}
  triggers:
  - {{type: {trigger_type}, metadata: {metadata}}}
"""


SO_LABEL = "scenario.yaml: document 1 (ScaledObject/serving/web-scaler)"
SJ_LABEL = "scenario.yaml: document 1 (ScaledJob/jobs/worker)"


def test_a_query_on_a_metric_gpufleet_does_not_simulate_is_an_error_not_a_silent_zero(tmp_path: Path) -> None:
    assert problems(tmp_path, prometheus("sum(http_requests_count)")) == [
        f"{SO_LABEL}: spec.triggers[0].metadata.query: 'sum(http_requests_count)': the metric "
        "'http_requests_count' is not one gpufleet simulates (queue_length, requests_per_second, "
        "DCGM_FI_DEV_GPU_UTIL, http_requests_total, container_cpu_usage_seconds_total, "
        "container_memory_working_set_bytes): the query would return nothing and the scaler "
        "would never scale"
    ]


@pytest.mark.parametrize(
    ("query", "part"),
    [
        ("histogram_quantile(0.95, queue_length)", "the function histogram_quantile() is not supported"),
        ("sum(rate(queue_length[2m]))", "rate() over the gauge 'queue_length' is not supported"),
        ('sum(queue_length{job="api"})', "the label 'job' in queue_length{job=\"api\"} is not supported"),
        ("sum(queue_length) > 3", "the operator '>' is not supported"),
        ("sum(queue_length", "is not valid PromQL"),
    ],
)
def test_unsupported_queries_are_errors_naming_the_part(tmp_path: Path, query: str, part: str) -> None:
    [line] = problems(tmp_path, prometheus(query))
    assert line.startswith(f"{SO_LABEL}: spec.triggers[0].metadata.query: {query!r}: ")
    assert part in line


def test_validate_exits_2_with_one_line_for_an_unsupported_query(tmp_path: Path) -> None:
    path = tmp_path / "so.yaml"
    path.write_text(prometheus("max_over_time(queue_length[5m])"))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "document 1 (ScaledObject/serving/web-scaler): spec.triggers[0].metadata.query: " in result.output
    assert "the function max_over_time() is not supported" in result.output
    assert "Traceback" not in result.output


def test_supported_queries_load(tmp_path: Path) -> None:
    query = 'sum(rate(http_requests_total{deployment="web"}[2m])) / 2'
    scaler = load(tmp_path, prometheus(query)).scaled_objects[0].triggers[0].scaler
    assert isinstance(scaler, PrometheusScaler) and scaler.query == query


def test_a_query_returning_a_series_per_pod_is_a_warning(tmp_path: Path) -> None:
    scenario = load(tmp_path, prometheus('queue_length{deployment="web"}'))
    assert relative(tmp_path, scenario.warnings) == [
        f"{SO_LABEL}: spec.triggers[0].metadata.query: 'queue_length{{deployment=\"web\"}}' can return more "
        "than one series; KEDA's prometheus scaler then fails (query returned multiple elements): "
        "aggregate it, e.g. sum(...)"
    ]


def test_redis_cluster_and_sentinel_are_the_same_list_scaler(tmp_path: Path) -> None:
    # scalers_builder.go: "redis-cluster" and "redis-sentinel" are NewRedisScaler with another client.
    for kind in ("redis-cluster", "redis-sentinel"):
        text = scaled_object(
            f"  - type: {kind}\n    metadata: {{address: redis:6379, listName: jobs, listLength: '3'}}"
        )
        trigger = load(tmp_path, text).scaled_objects[0].triggers[0]
        assert trigger.scaler == RedisListScaler("jobs", 3, 0, kind)  # type: ignore[arg-type]
        assert trigger.type == kind


def test_redis_connection_keys_are_checked_then_warned_as_not_modelled(tmp_path: Path) -> None:
    # redis_scaler.go redisMetadata / redisConnectionInfo: parsed by the typed config, then unused here.
    text = scaled_object(
        "  - type: redis-sentinel\n    metadata: {listName: jobs, hosts: 'a, b', ports: '1, 2', "
        "sentinelMaster: mymaster, passwordFromEnv: REDIS_PASSWORD, enableTLS: 'true', databaseIndex: '2'}"
    )
    note = "gpufleet reads the list from its simulated queue"
    path = f"{SO_LABEL}: spec.triggers[0].metadata"
    assert warnings(tmp_path, text) == [
        f"{path}.databaseIndex is not modelled ({note}); ignored",
        f"{path}.enableTLS is not modelled ({note}); ignored",
        f"{path}.sentinelMaster is not modelled ({note}); ignored",
        f"{path}.passwordFromEnv is not modelled ({note}; the container's environment is not resolved); "
        "ignored",
    ]


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        (
            "{listName: jobs}",
            "address: no addresses or hosts given. address should be a comma separated list",
        ),
        ("{listName: jobs, host: redis}", "address: no addresses or hosts given."),
        ("{listName: jobs, hosts: 'a,b', ports: '1'}", "hosts: not enough hosts or ports given."),
        ("{listName: jobs, address: r, databaseIndex: one}", "databaseIndex: 'one' is not an integer"),
        ("{listName: jobs, address: r, unsafeSsl: maybe}", "unsafeSsl: 'maybe' is not a boolean"),
        (
            "{listName: jobs, address: r, enableTLS: 'yes'}",
            "enableTLS: EnableTLS parsing error strconv.ParseBool",
        ),
    ],
)
def test_redis_connection_is_refused_where_keda_refuses_it(tmp_path: Path, metadata: str, error: str) -> None:
    # redisMetadata.Validate (validateRedisAddress, SetEnableTLS) and the typed config's int/bool parsing.
    [problem] = problems(tmp_path, scaled_object(f"  - type: redis\n    metadata: {metadata}"))
    assert problem.startswith(f"{SO_LABEL}: spec.triggers[0].metadata.{error}"), problem


def test_a_redis_address_a_trigger_authentication_may_hold_is_not_required(tmp_path: Path) -> None:
    text = scaled_object(
        "  - type: redis\n    metadata: {listName: jobs}\n    authenticationRef: {name: redis}"
    )
    assert load(tmp_path, text).scaled_objects[0].triggers[0].scaler == RedisListScaler("jobs")


@pytest.mark.parametrize(
    ("trigger_type", "reason"),
    [
        (
            "rabbitmq",
            "the KEDA scaler 'rabbitmq' is not modelled (gpufleet models redis, redis-cluster, "
            "redis-sentinel, prometheus, cron, cpu, memory): to simulate a queue, use a redis trigger "
            "on a list that a QueueFeed fills",
        ),
        ("example-trigger", "KEDA v2.20.2 has no such scaler (no scaler found for type: example-trigger)"),
    ],
)
def test_other_trigger_types_are_refused_with_the_reason(
    tmp_path: Path, trigger_type: str, reason: str
) -> None:
    assert problems(tmp_path, scaled_job("{}", trigger_type, "{queueName: q}")) == [
        f"{SJ_LABEL}: spec.triggers[0].type: {reason}"
    ]


def test_custom_strategy_without_a_deduction_deducts_nothing(tmp_path: Path) -> None:
    # scale_jobs.go v2.20.2 customScalingStrategy: a nil customScalingQueueLengthDeduction is 0.
    text = scaled_job("{strategy: custom, customScalingRunningJobPercentage: '0.5'}")
    scenario = load(tmp_path, text)
    assert scenario.scaled_jobs[0][0].scaling_strategy == ScalingStrategy("custom", None, "0.5")
    assert scenario.scaled_jobs[0][0].scaling_strategy.selected == "custom"
    assert scenario.warnings == []


def test_custom_strategy_whose_percentage_does_not_parse_runs_default_with_a_warning(tmp_path: Path) -> None:
    text = scaled_job("{strategy: custom, customScalingQueueLengthDeduction: 1}")
    scenario = load(tmp_path, text)
    assert scenario.scaled_jobs[0][0].scaling_strategy.selected == "default"
    assert relative(tmp_path, scenario.warnings) == [
        f"{SJ_LABEL}: spec.scalingStrategy.customScalingRunningJobPercentage: '' is not a number: "
        "KEDA runs the default strategy instead of custom"
    ]


def test_pending_pod_conditions_gpufleet_does_not_model_are_warnings(tmp_path: Path) -> None:
    scenario = load(tmp_path, scaled_job("{pendingPodConditions: [Ready, my-gate]}"))
    assert relative(tmp_path, scenario.warnings) == [
        f"{SJ_LABEL}: spec.scalingStrategy.pendingPodConditions[1]: 'my-gate' is not a pod condition "
        "gpufleet models (PodScheduled, Initialized, ContainersReady, Ready): every Job counts as pending"
    ]


@needs_upstream
def test_keda_docs_prometheus_example_loads() -> None:
    # keda-docs 2.21 scalers/prometheus.md: sum(rate(http_requests_total{deployment="my-deployment"}[2m]))
    scenario = load_scenario([UPSTREAM / "keda-docs/2.21/prometheus-scaledobject.yaml"])
    scaler = scenario.scaled_objects[0].triggers[0].scaler
    assert isinstance(scaler, PrometheusScaler) and scaler.threshold == 100.0


@needs_upstream
def test_keda_docs_rabbitmq_scaled_job_is_refused_for_its_trigger() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario([UPSTREAM / "keda-docs/2.21/scaling-jobs-rabbitmq-scaledjob.yaml"])
    assert any(
        "spec.triggers[0].type: the KEDA scaler 'rabbitmq' is not modelled" in p
        for p in caught.value.problems
    )


def test_keda_pause_annotations_are_warned_as_not_modelled(tmp_path: Path) -> None:
    """``autoscaling.keda.sh/paused-replicas`` and its kin (KEDA v2.20.2) are not modelled: a warning, never
    silently dropped."""
    text = prometheus("sum(rate(http_requests_total[2m]))").replace(
        "metadata: {name: web-scaler, namespace: serving}",
        "metadata: {name: web-scaler, namespace: serving, "
        "annotations: {autoscaling.keda.sh/paused-replicas: '0'}}",
    )
    found = relative(tmp_path, load(tmp_path, text).warnings)
    assert any("annotations.autoscaling.keda.sh/paused-replicas is not modelled" in w for w in found), found


def test_prometheus_connection_keys_are_warned_as_not_modelled(tmp_path: Path) -> None:
    """KEDA v2.20.2 ``prometheusMetadata``: ``unsafeSsl``, ``authModes``, ``customHeaders``, ... shape
    the HTTP request to a real Prometheus; gpufleet checks them and warns, never drops them silently."""
    text = (
        prometheus("sum(queue_length)")
        .replace(
            "      threshold: '10'\n",
            "      threshold: '10'\n      unsafeSsl: 'true'\n      authModes: bearer\n"
            "      customHeaders: X-Scope-OrgID=team\n      timeout: 5s\n      ignoreNullValues: 'false'\n",
        )
        .replace(
            "      query: 'sum(queue_length)'",
            "      query: 'sum(queue_length)'\n    authenticationRef: {name: prometheus-bearer}",
        )
    )
    note = "(gpufleet evaluates the query over its simulated series); ignored"
    assert relative(tmp_path, load(tmp_path, text).warnings) == [
        f"{SO_LABEL}: spec.triggers[0].metadata.{key} is not modelled {note}"
        for key in ("customHeaders", "unsafeSsl", "timeout", "authModes")
    ]


def test_a_cpu_trigger_in_a_scaled_job_is_refused(tmp_path: Path) -> None:
    # scale_handler.go: a ScaledJob's metrics loop skips a scaler with no External metric.
    text = scaled_job("{}", "cpu", "{value: '50'}").replace(
        "- {type: cpu,", "- {type: cpu, metricType: Utilization,"
    )
    assert problems(tmp_path, text) == [
        f"{SJ_LABEL}: spec.triggers[0].type: KEDA ignores a cpu trigger in a ScaledJob (it has no External "
        "metric): it would never scale the Jobs"
    ]


def test_a_cpu_trigger_without_metric_type_is_refused(tmp_path: Path) -> None:
    # cpu_memory_scaler.go parseResourceMetadata: an unset metricType is an unknown metric type.
    text = scaled_object("  - {type: cpu, metadata: {value: '60'}}").replace(
        "  scaleTargetRef: {name: web}", "  scaleTargetRef: {name: web}\n  minReplicaCount: 1"
    )
    assert problems(tmp_path, text) == [
        f"{SO_LABEL}: spec.triggers[0].metricType: unknown metric type: , allowed values are "
        "'Utilization' or 'AverageValue'"
    ]


def test_cpu_and_memory_triggers_become_resource_metrics_with_a_warning(tmp_path: Path) -> None:
    triggers = (
        "  - {type: cpu, metricType: Utilization, metadata: {value: '60'}}\n"
        "  - {type: memory, metricType: AverageValue, metadata: {value: 8Gi, containerName: server}}\n"
        "  - {type: redis, metadata: {address: redis:6379, listName: jobs}}"
    )
    scenario = load(tmp_path, scaled_object(triggers))
    [so] = scenario.scaled_objects
    assert [t.type for t in so.triggers] == ["cpu", "memory", "redis"]
    assert relative(tmp_path, scenario.warnings) == [
        f"{SO_LABEL}: spec.triggers[1].metadata.containerName is not modelled (a ContainerResource metric; "
        "the HPA KEDA writes is left without it); ignored",
        f"{SO_LABEL}: spec.triggers[0]: the pods of Deployment serving/web have no cpu usage (no Traffic "
        "aimed at it models it, no gpufleet.io/cpu-usage annotation): the Resource metric reads no value "
        "and the HPA holds on it",
    ]


def test_a_cpu_trigger_is_not_warned_about_where_the_pods_have_a_cpu_usage(tmp_path: Path) -> None:
    """The target's pod template carries ``gpufleet.io/cpu-usage``, or a Traffic aimed at it models cpu
    (``idleCpu``/``cpuPerRequest``): the Resource metric reads a value, nothing to warn about. A memory
    trigger beside it is still warned about: nothing models memory."""
    triggers = (
        "  - {type: cpu, metricType: Utilization, metadata: {value: '60'}}\n"
        "  - {type: memory, metricType: Utilization, metadata: {value: '60'}}"
    )
    so = scaled_object(triggers).replace(
        "  scaleTargetRef: {name: web}", "  minReplicaCount: 1\n  scaleTargetRef: {name: web}"
    )
    annotated = so.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web}, annotations: {gpufleet.io/cpu-usage: 300m}}",
    )
    memory_warning = (
        f"{SO_LABEL}: spec.triggers[1]: the pods of Deployment serving/web have no memory usage (no Traffic "
        "aimed at it models it, no gpufleet.io/memory-usage annotation): the Resource metric reads no value "
        "and the HPA holds on it"
    )
    assert relative(tmp_path, load(tmp_path, annotated).warnings) == [memory_warning]
    traffic = (
        "---\napiVersion: gpufleet.io/v1alpha1\nkind: Traffic\nmetadata: {name: chat, namespace: serving}\n"
        "spec: {target: web, perReplicaRps: 10, rps: [{at: 0s, value: 5}], cpuPerRequest: 50m}\n"
    )
    assert relative(tmp_path, load(tmp_path, so + traffic).warnings) == [memory_warning]


def test_a_cron_trigger_with_an_unknown_timezone_is_a_warning(tmp_path: Path) -> None:
    trigger = (
        "  - type: cron\n    metadata: {timezone: Mars/Olympus, start: 0 9 * * *, end: 0 17 * * *, "
        "desiredReplicas: '2'}"
    )
    scenario = load(tmp_path, scaled_object(trigger))
    assert relative(tmp_path, scenario.warnings) == [
        f"{SO_LABEL}: spec.triggers[0].metadata.timezone: 'Mars/Olympus' is not an IANA time zone: "
        "KEDA's cron scaler fails at every poll (unable to load timezone)"
    ]


def test_a_cron_schedule_that_does_not_parse_is_an_error(tmp_path: Path) -> None:
    trigger = (
        "  - type: cron\n    metadata: {timezone: Etc/UTC, start: 0 9 * *, end: 0 17 * * *, "
        "desiredReplicas: '2'}"
    )
    assert problems(tmp_path, scaled_object(trigger)) == [
        f"{SO_LABEL}: spec.triggers[0].metadata.start: error parsing start schedule: expected exactly 5 "
        "fields, found 4: ['0', '9', '*', '*']"
    ]


SIMULATION = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {{name: run}}
spec: {{duration: 1h, startTime: {start}}}
"""


@pytest.mark.parametrize(
    ("start", "seconds"),
    [
        ('"2026-12-07T08:00:00Z"', 1796630400.0),
        ('"2026-12-07T09:00:00+01:00"', 1796630400.0),
        ("2026-12-07T08:00:00Z", 1796630400.0),  # YAML reads an unquoted one as a date-time
    ],
)
def test_simulation_start_time_is_an_rfc3339_date_time(tmp_path: Path, start: str, seconds: float) -> None:
    assert load(tmp_path, SIMULATION.format(start=start)).simulation.start_time_s == seconds


def test_simulation_start_time_needs_an_offset(tmp_path: Path) -> None:
    [line] = problems(tmp_path, SIMULATION.format(start='"2026-12-07T08:00:00"'))
    assert "spec.startTime" in line
    assert "has no UTC offset" in line
