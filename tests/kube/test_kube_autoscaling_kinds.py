"""HorizontalPodAutoscaler, KEDA ScaledObject and ScaledJob, PodDisruptionBudget, QueueFeed and Traffic."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load, problems, warnings

from gpufleet.model.disruption_budget import DisruptionBudget
from gpufleet.model.hpa import (
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerBehavior,
    HorizontalPodAutoscalerSpec,
    HPAScalingPolicy,
    HPAScalingRules,
    MetricIdentifier,
    MetricTarget,
    PodsMetricSource,
    ResourceMetricSource,
)
from gpufleet.model.keda import RedisListScaler, ScaledObjectSpec, ScaleTargetRef, ScaleTrigger
from gpufleet.model.load import FeedItems, FeedRate, QueueFeed, Traffic

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: train-worker, namespace: ai-train}
spec:
  selector: {matchLabels: {app: train-worker}}
  template:
    metadata: {labels: {app: train-worker}}
    spec:
      containers:
      - name: worker
        image: trainer:1
        resources: {limits: {nvidia.com/gpu: 1}}
"""

HPA = """
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: train-worker, namespace: ai-train}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: train-worker}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Pods
    pods:
      metric: {name: DCGM_FI_DEV_GPU_UTIL}
      target: {type: AverageValue, averageValue: "70"}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies:
      - {type: Pods, value: 2, periodSeconds: 60}
      - {type: Percent, value: 50, periodSeconds: 60}
      selectPolicy: Max
    scaleDown:
      stabilizationWindowSeconds: 600
"""

# As written in /work/shared/seeds/001_7bc790a3a9607296.txt.
SEED_001_SCALED_OBJECT = """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: gpu-train-scaler
  namespace: ai-train
spec:
  scaleTargetRef:
    name: train-worker
  minReplicaCount: 0
  maxReplicaCount: 4
  cooldownPeriod: 300
  triggers:
  - type: redis
    metadata:
      address: redis.ai-train.svc:6379
      listName: train:jobs
      listLength: "1"
"""

SCALED_JOB = """
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {name: train-job, namespace: ai-train}
spec:
  jobTargetRef:
    parallelism: 1
    completions: 1
    backoffLimit: 2
    template:
      metadata:
        annotations:
          gpufleet.io/consumes: train:jobs
          gpufleet.io/checkpoint-on-sigterm: "true"
      spec:
        restartPolicy: Never
        containers:
        - name: train
          image: trainer:2
          resources: {limits: {nvidia.com/gpu: 8}}
  pollingInterval: 15
  maxReplicaCount: 6
  scalingStrategy: {strategy: accurate}
  triggers:
  - type: redis
    metadata: {address: "redis:6379", listName: "train:jobs", listLength: "1"}
"""

PDB = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: train-worker, namespace: ai-train}
spec:
  minAvailable: "50%"
  selector: {matchLabels: {app: train-worker}}
"""

QUEUE_FEED = """
apiVersion: gpufleet.io/v1alpha1
kind: QueueFeed
metadata: {name: nightly, namespace: ai-train}
spec:
  list: train:jobs
  items:
  - {at: 30m, count: 3, work: 2h}
  - {at: 0s, count: 5, work: 45m}
  rate: {perHour: 4, work: 1h, from: 1h, until: 6h}
"""

TRAFFIC = """
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {name: chat, namespace: ai-train}
spec:
  target: train-worker
  rps:
  - {at: 0s, value: 20}
  - {at: 10m, value: 120.5}
  perReplicaRps: 15
"""


def doc(*texts: str) -> str:
    return "---\n".join(text.lstrip("\n") for text in texts)


# -- HorizontalPodAutoscaler -------------------------------------------------------------------


def test_hpa_on_a_pods_metric_with_behavior(tmp_path: Path) -> None:
    scenario = load(tmp_path, doc(DEPLOYMENT, HPA))
    assert scenario.hpas == [
        (
            "ai-train/train-worker",
            HorizontalPodAutoscalerSpec(
                scale_target_ref=CrossVersionObjectReference("Deployment", "train-worker", "apps/v1"),
                max_replicas=8,
                min_replicas=1,
                metrics=(
                    PodsMetricSource(
                        MetricIdentifier("DCGM_FI_DEV_GPU_UTIL"),
                        MetricTarget("AverageValue", average_value=70_000),
                    ),
                ),
                behavior=HorizontalPodAutoscalerBehavior(
                    scale_up=HPAScalingRules(
                        stabilization_window_seconds=0,
                        select_policy="Max",
                        policies=(HPAScalingPolicy("Pods", 2, 60), HPAScalingPolicy("Percent", 50, 60)),
                    ),
                    scale_down=HPAScalingRules(stabilization_window_seconds=600),
                ),
            ),
        )
    ]
    assert scenario.warnings == []


def test_hpa_behavior_tolerance_is_dropped_while_its_gate_is_off(tmp_path: Path) -> None:
    """strategy.go ``dropDisabledFields``: with HPAConfigurableTolerance off (alpha, off in 1.34) the API
    server drops ``behavior.scaleUp.tolerance`` / ``scaleDown.tolerance`` on create; the cluster-wide
    tolerance applies."""
    text = HPA.replace("selectPolicy: Max", 'selectPolicy: Max\n      tolerance: "0.01"')
    scenario = load(tmp_path, doc(DEPLOYMENT, text))
    ((_, spec),) = scenario.hpas
    assert spec.behavior is not None and spec.behavior.scale_up is not None
    assert spec.behavior.scale_up.tolerance is None
    label = "scenario.yaml: document 2 (HorizontalPodAutoscaler/ai-train/train-worker)"
    assert relative_warnings(tmp_path, scenario.warnings) == [
        f"{label}: spec.behavior.scaleUp.tolerance: dropped, as the API server drops it while the "
        "HPAConfigurableTolerance feature gate is off (alpha, off by default in Kubernetes 1.34): the "
        "cluster-wide tolerance 0.1 applies"
    ]


def test_hpa_resource_and_external_metrics_and_defaults(tmp_path: Path) -> None:
    text = """
    apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec:
      scaleTargetRef: {kind: Deployment, name: web}
      maxReplicas: 3
      metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
      - type: External
        external:
          metric: {name: queue_length, selector: {matchLabels: {queue: a}}}
          target: {type: Value, value: 500m}
      - type: ContainerResource
        containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 50}}
    """
    scenario = load(tmp_path, text)
    ((key, spec),) = scenario.hpas
    assert (key, spec.min_replicas, spec.max_replicas, spec.behavior) == ("default/web", 1, 3, None)
    assert spec.metrics == (
        ResourceMetricSource("cpu", MetricTarget("Utilization", average_utilization=60)),
        ExternalMetricSource(
            MetricIdentifier("queue_length", (("queue", "a"),)), MetricTarget("Value", value=500)
        ),
    )
    label = "scenario.yaml: document 1 (HorizontalPodAutoscaler/default/web)"
    assert relative_warnings(tmp_path, scenario.warnings) == [
        f"{label}: spec.metrics[2].containerResource is not modelled; ignored",
        f"{label}: spec.scaleTargetRef: Deployment default/web is not a Deployment or ReplicaSet of the "
        "scenario: it scales nothing gpufleet runs",
    ]


def test_hpa_errors_have_field_paths(tmp_path: Path) -> None:
    text = HPA.replace("maxReplicas: 8", "maxReplicas: 0").replace("minReplicas: 1", "minReplicas: 0")
    label = "scenario.yaml: document 1 (HorizontalPodAutoscaler/ai-train/train-worker)"
    assert problems(tmp_path, doc(text, DEPLOYMENT)) == [
        f"{label}: spec.metrics: Forbidden: must specify at least one Object or External metric to support "
        "scaling to zero",
        f"{label}: spec.maxReplicas: Invalid value: 0: must be greater than or equal to 1",
    ]
    bad = (
        HPA.replace("type: Pods\n", "type: Object\n")
        .replace('averageValue: "70"', "averageValue: lots")
        .replace("value: 2, periodSeconds: 60", "value: 0, periodSeconds: 60")
        .replace(
            "stabilizationWindowSeconds: 600", "stabilizationWindowSeconds: 600\n      selectPolicy: Most"
        )
        .replace("maxReplicas: 8", "maxReplicas: 8\n  replicas: 3")
    )
    # The schema's errors, then what the API server's validation adds.
    assert problems(tmp_path, doc(bad, DEPLOYMENT)) == [
        f"{label}: spec.replicas: Additional properties are not allowed ('replicas' was unexpected)",
        f"{label}: spec.metrics[0].object: Required value: must populate information for the given metric "
        "source",
        f"{label}: spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        f'{label}: spec.behavior.scaleDown.selectPolicy: Unsupported value: "Most": supported values: '
        '"Max", "Min", "Disabled"',
    ]
    bad = HPA.replace('averageValue: "70"', "averageValue: lots").replace(
        "type: Pods, value", "type: Pod, value"
    )
    assert problems(tmp_path, doc(bad, DEPLOYMENT)) == [
        f"{label}: spec.metrics[0].pods.target.averageValue: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': 'lots'",
        f'{label}: spec.behavior.scaleUp.policies[0].type: Unsupported value: "Pod": supported values: '
        '"Pods", "Percent"',
    ]


# -- KEDA ----------------------------------------------------------------------------------------


def test_seed_001_scaled_object(tmp_path: Path) -> None:
    scenario = load(tmp_path, doc(SEED_001_SCALED_OBJECT, DEPLOYMENT))
    assert scenario.scaled_objects == [
        ScaledObjectSpec(
            name="gpu-train-scaler",
            namespace="ai-train",
            scale_target_ref=ScaleTargetRef("train-worker"),
            triggers=(ScaleTrigger(RedisListScaler("train:jobs", list_length=1)),),
            cooldown_period_s=300,
            min_replica_count=0,
            max_replica_count=4,
        )
    ]
    assert scenario.warnings == []
    # Without the Deployment it scales nothing gpufleet runs.
    assert warnings(tmp_path, SEED_001_SCALED_OBJECT) == [
        "scenario.yaml: document 1 (ScaledObject/ai-train/gpu-train-scaler): spec.scaleTargetRef: "
        "apps/v1/Deployment ai-train/train-worker is not a Deployment or ReplicaSet of the scenario: it "
        "scales nothing gpufleet runs"
    ]


def test_scaled_object_fields_not_modelled_are_warnings(tmp_path: Path) -> None:
    text = SEED_001_SCALED_OBJECT.replace(
        "  cooldownPeriod: 300\n",
        "  cooldownPeriod: 300\n  advanced:\n    restoreToOriginalReplicaCount: true\n"
        "    horizontalPodAutoscalerConfig:\n      behavior:\n"
        "        scaleDown: {stabilizationWindowSeconds: 60}\n",
    )
    scenario = load(tmp_path, doc(text, DEPLOYMENT))
    assert scenario.scaled_objects[0].hpa_behavior == {"scaleDown": {"stabilizationWindowSeconds": 60}}
    assert relative_warnings(tmp_path, scenario.warnings) == [
        "scenario.yaml: document 1 (ScaledObject/ai-train/gpu-train-scaler): "
        "spec.advanced.restoreToOriginalReplicaCount is not modelled; ignored"
    ]


def relative_warnings(directory: Path, lines: list[str]) -> list[str]:
    return [line.replace(f"{directory}/", "") for line in lines]


def test_scaled_object_errors_have_field_paths(tmp_path: Path) -> None:
    text = (
        SEED_001_SCALED_OBJECT.replace("cooldownPeriod: 300", "cooldownPeriod: 300\n  pollingIntervall: 10")
        .replace('listLength: "1"', "listLength: 1")
        .replace("    name: train-worker", "    name: train-worker\n    kind: Deployment\n    replicas: 2")
    )
    label = "scenario.yaml: document 1 (ScaledObject/ai-train/gpu-train-scaler)"
    assert problems(tmp_path, doc(text, DEPLOYMENT)) == [
        f"{label}: spec.scaleTargetRef.replicas: Additional properties are not allowed ('replicas' was "
        "unexpected)",
        f"{label}: spec.triggers[0].metadata.listLength: Invalid value: 1: must be a string",
        f"{label}: spec.pollingIntervall: Additional properties are not allowed ('pollingIntervall' was "
        "unexpected)",
    ]
    bad = SEED_001_SCALED_OBJECT.replace("maxReplicaCount: 4", "maxReplicaCount: 4\n  idleReplicaCount: 1")
    assert problems(tmp_path, doc(bad, DEPLOYMENT)) == [
        f"{label}: spec.idleReplicaCount: IdleReplicaCount=1 must be less than MinReplicaCount=1"
    ]


def test_scaled_job_stamps_its_job_target_ref(tmp_path: Path) -> None:
    scenario = load(tmp_path, SCALED_JOB)
    ((spec, job),) = scenario.scaled_jobs
    assert (spec.name, spec.namespace, spec.job_target_ref) == ("train-job", "ai-train", "train-job")
    assert (spec.polling_interval_s, spec.max_replica_count, spec.scaling_strategy.strategy) == (
        15,
        6,
        "accurate",
    )
    assert spec.triggers == (ScaleTrigger(RedisListScaler("train:jobs", list_length=1)),)
    assert (job.name, job.namespace) == ("train-job", "ai-train")
    assert (job.parallelism, job.completions, job.backoff_limit) == (1, 1, 2)
    assert job.template.requests == {"nvidia.com/gpu": 8}
    assert job.template.restart_policy == "Never"
    behavior = job.template.behavior
    assert (behavior.image, behavior.consumes, behavior.checkpoint_on_sigterm) == (
        "trainer:2",
        "train:jobs",
        True,
    )
    assert scenario.jobs == []
    assert scenario.warnings == []


def test_scaled_job_target_is_checked_as_a_job_spec(tmp_path: Path) -> None:
    text = (
        SCALED_JOB.replace("backoffLimit: 2", "backoffLimit: -1\n    backofLimit: 2")
        .replace("restartPolicy: Never", "restartPolicy: Always")
        .replace("pollingInterval: 15", "pollingInterval: 15\n  rollout: {strategy: gradual}")
    )
    label = "scenario.yaml: document 1 (ScaledJob/ai-train/train-job)"
    assert problems(tmp_path, text) == [
        f"{label}: spec.jobTargetRef.backofLimit: Additional properties are not allowed ('backofLimit' was "
        "unexpected)",
        f'{label}: spec.jobTargetRef.template.spec.restartPolicy: Unsupported value: "Always": supported '
        'values: "OnFailure", "Never"',
        f"{label}: spec.jobTargetRef.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
    ]
    text = (
        text.replace("\n    backofLimit: 2", "")
        .replace("backoffLimit: -1", "backoffLimit: 1")
        .replace("Always", "OnFailure")
    )
    assert warnings(tmp_path, text) == [f"{label}: spec.rollout is not modelled; ignored"]


def test_other_keda_kinds_stay_warnings(tmp_path: Path) -> None:
    text = "apiVersion: keda.sh/v1alpha1\nkind: TriggerAuthentication\nmetadata: {name: redis}\nspec: {}\n"
    assert warnings(tmp_path, text) == [
        "scenario.yaml: document 1 (TriggerAuthentication/redis): "
        "kind keda.sh/v1alpha1/TriggerAuthentication is not modelled; ignored"
    ]


# -- PodDisruptionBudget -------------------------------------------------------------------------


def test_pdb_min_available_percent(tmp_path: Path) -> None:
    scenario = load(tmp_path, PDB)
    assert scenario.budgets == [
        DisruptionBudget("ai-train", "train-worker", (("app", "train-worker"),), min_available="50%")
    ]
    assert scenario.warnings == []
    text = PDB.replace('minAvailable: "50%"', "maxUnavailable: 1").replace(
        "selector: {matchLabels: {app: train-worker}}",
        "selector:\n    matchLabels: {app: train-worker}\n"
        "    matchExpressions: [{key: tier, operator: Exists}]",
    )
    scenario = load(tmp_path, text)
    assert scenario.budgets[0].max_unavailable == 1
    assert scenario.budgets[0].min_available is None
    assert relative_warnings(tmp_path, scenario.warnings) == [
        "scenario.yaml: document 1 (PodDisruptionBudget/ai-train/train-worker): "
        "spec.selector.matchExpressions is not modelled (the budget selects by matchLabels only); ignored"
    ]


def test_pdb_errors(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (PodDisruptionBudget/ai-train/train-worker)"
    both = PDB.replace('minAvailable: "50%"', 'minAvailable: "50%"\n  maxUnavailable: 1')
    (line,) = problems(tmp_path, both)
    assert line.startswith(f"{label}: spec: Invalid value: {{")
    assert line.endswith(": minAvailable and maxUnavailable cannot be both set")
    assert problems(tmp_path, PDB.replace('"50%"', '"150%"')) == [
        f'{label}: spec.minAvailable: Invalid value: "150%": must not be greater than 100%'
    ]
    assert problems(tmp_path, PDB.replace('"50%"', '"half"')) == [
        f'{label}: spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric string '
        "followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
    ]


# -- QueueFeed and Traffic -----------------------------------------------------------------------


def test_queue_feed_items_and_rate(tmp_path: Path) -> None:
    scenario = load(tmp_path, QUEUE_FEED)
    assert scenario.queue_feeds == [
        QueueFeed(
            "nightly",
            "ai-train",
            "train:jobs",
            items=(FeedItems(0.0, 5, 2700.0), FeedItems(1800.0, 3, 7200.0)),
            rate=FeedRate(4.0, 3600.0, 3600.0, 21600.0),
        )
    ]
    assert scenario.warnings == []
    only_rate = QUEUE_FEED.replace(
        "  items:\n  - {at: 30m, count: 3, work: 2h}\n  - {at: 0s, count: 5, work: 45m}\n", ""
    )
    (feed,) = load(tmp_path, only_rate.replace(", from: 1h, until: 6h", "")).queue_feeds
    assert (feed.items, feed.rate) == ((), FeedRate(4.0, 3600.0))


def test_queue_feed_errors(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (QueueFeed/ai-train/nightly)"
    assert problems(tmp_path, QUEUE_FEED.replace("  list: train:jobs\n", "")) == [
        f"{label}: spec.list: Required value"
    ]
    bad = (
        QUEUE_FEED.replace("count: 3", "count: -3")
        .replace("until: 6h", "until: 30m")
        .replace("work: 45m", "work: 45m, size: 3")
    )
    assert problems(tmp_path, bad) == [
        f"{label}: spec.items[0].count: Invalid value: -3: must be greater than or equal to 0",
        f"{label}: spec.items[1].size: Additional properties are not allowed ('size' was unexpected)",
        f'{label}: spec.rate.until: Invalid value: "30m": must be later than from',
    ]
    nothing = "apiVersion: gpufleet.io/v1alpha1\nkind: QueueFeed\nmetadata: {name: q}\nspec: {list: a}\n"
    assert problems(tmp_path, nothing) == [
        "scenario.yaml: document 1 (QueueFeed/default/q): spec: Required value: at least one of items or rate"
    ]


def test_traffic(tmp_path: Path) -> None:
    scenario = load(tmp_path, doc(TRAFFIC, DEPLOYMENT))
    assert scenario.traffic == [
        Traffic("chat", "ai-train", "train-worker", ((0.0, 20.0), (600.0, 120.5)), per_replica_rps=15.0)
    ]
    assert scenario.warnings == []


def test_traffic_errors(tmp_path: Path) -> None:
    label = "scenario.yaml: document 1 (Traffic/ai-train/chat)"
    assert problems(tmp_path, doc(TRAFFIC.replace("perReplicaRps: 15", "perReplicaRps: 0"), DEPLOYMENT)) == [
        f"{label}: spec.perReplicaRps: Invalid value: 0: must be greater than 0"
    ]
    assert problems(tmp_path, doc(TRAFFIC.replace("at: 10m", "at: 0s"), DEPLOYMENT)) == [
        f'{label}: spec.rps[1].at: Invalid value: "0s": must be later than spec.rps[0].at'
    ]
    assert problems(tmp_path, TRAFFIC) == [
        f'{label}: spec.target: Invalid value: "train-worker": no Deployment in namespace ai-train'
    ]
    # targetKind: ReplicaSet aims it at a ReplicaSet of that name, not at the Deployment
    on_a_replica_set = TRAFFIC.replace(
        "target: train-worker", "target: train-worker\n  targetKind: ReplicaSet"
    )
    assert problems(tmp_path, doc(on_a_replica_set, DEPLOYMENT)) == [
        f'{label}: spec.target: Invalid value: "train-worker": no ReplicaSet in namespace ai-train'
    ]
