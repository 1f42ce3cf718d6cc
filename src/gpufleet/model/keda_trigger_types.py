"""The trigger types of the pinned KEDA release, and what gpufleet says of those it does not model.

``KEDA_SCALER_TYPES`` is the ``switch`` of ``buildScaler`` (``kedacore/keda`` v2.20.2,
``pkg/scaling/scalers_builder.go``); a type outside it is one KEDA itself refuses (``no scaler found
for type``). gpufleet models ``redis`` (with its ``redis-cluster`` and ``redis-sentinel`` variants,
the same list scaler, ``NewRedisScaler``) and ``prometheus``; every other type is refused with a
line that says why and what to write instead, never accepted to scale silently by nothing.
"""

from __future__ import annotations

KEDA_VERSION = "v2.20.2"

REDIS_LIST_TYPES: tuple[str, ...] = ("redis", "redis-cluster", "redis-sentinel")
MODELLED_TYPES: tuple[str, ...] = (*REDIS_LIST_TYPES, "prometheus", "cron", "cpu", "memory")

KEDA_SCALER_TYPES: frozenset[str] = frozenset(
    {
        "activemq",
        "apache-kafka",
        "arangodb",
        "artemis-queue",
        "aws-cloudwatch",
        "aws-dynamodb",
        "aws-dynamodb-streams",
        "aws-kinesis-stream",
        "aws-sqs-queue",
        "azure-app-insights",
        "azure-blob",
        "azure-data-explorer",
        "azure-eventhub",
        "azure-log-analytics",
        "azure-monitor",
        "azure-pipelines",
        "azure-queue",
        "azure-servicebus",
        "beanstalkd",
        "cassandra",
        "couchdb",
        "cpu",
        "cron",
        "datadog",
        "dynatrace",
        "elastic-forecast",
        "elasticsearch",
        "etcd",
        "external",
        "external-mock",
        "external-push",
        "forgejo-runner",
        "gcp-cloudtasks",
        "gcp-pubsub",
        "gcp-stackdriver",
        "gcp-storage",
        "github-runner",
        "graphite",
        "huawei-cloudeye",
        "ibmmq",
        "influxdb",
        "kafka",
        "kubernetes-resource",
        "kubernetes-workload",
        "liiklus",
        "loki",
        "memory",
        "metrics-api",
        "mongodb",
        "mssql",
        "mysql",
        "nats-jetstream",
        "new-relic",
        "nsq",
        "opensearch",
        "openstack-metric",
        "openstack-swift",
        "postgresql",
        "predictkube",
        "prometheus",
        "pulsar",
        "rabbitmq",
        "redis",
        "redis-cluster",
        "redis-cluster-streams",
        "redis-sentinel",
        "redis-sentinel-streams",
        "redis-streams",
        "selenium-grid",
        "solace-direct-messaging",
        "solace-event-queue",
        "solarwinds",
        "solr",
        "splunk",
        "splunk-observability",
        "sumologic",
        "temporal",
    }
)


def unmodelled_trigger_reason(type_: str) -> str:
    """Why gpufleet refuses a trigger type it does not model, and what to use instead."""
    if type_ not in KEDA_SCALER_TYPES:
        return f"KEDA {KEDA_VERSION} has no such scaler (no scaler found for type: {type_})"
    modelled = ", ".join(MODELLED_TYPES)
    instead = "to simulate a queue, use a redis trigger on a list that a QueueFeed fills"
    return f"the KEDA scaler {type_!r} is not modelled (gpufleet models {modelled}): {instead}"
