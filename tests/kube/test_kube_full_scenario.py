"""A valid scenario with every modelled kind loads into the right model values."""

from __future__ import annotations

from pathlib import Path

from kube_manifests import load

from gpufleet.model.node import Taint, Toleration
from gpufleet.model.pod import PreferredTerm, Requirement, SelectorTerm
from gpufleet.model.scheduler_config import PluginRef, PluginSet
from gpufleet.model.simulation import SimulationSettings

GI = 2**30

SCENARIO = """
apiVersion: gpufleet.io/v1alpha1
kind: Simulation
metadata: {name: demo}
spec: {duration: 2h, seed: 7, sampleInterval: 30s}
---
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {name: h100}
spec:
  replicas: 2
  template:
    metadata:
      labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    spec:
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    status:
      capacity: {cpu: "96", memory: 768Gi, nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata:
  name: cpu-0
  labels: {topology.kubernetes.io/zone: a}
spec:
  unschedulable: true
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "58"}
  allocatable: {cpu: 31500m, memory: 120Gi, pods: "58"}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training}
value: 1000
preemptionPolicy: Never
description: batch training
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: llama, namespace: ml}
spec: {minMember: 2, scheduleTimeoutSeconds: 600}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: llama
  namespace: ml
  annotations: {gpufleet.io/submit-at: 5m}
spec:
  parallelism: 2
  completions: 2
  backoffLimit: 1
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: llama}
      annotations: {gpufleet.io/duration: 4h, gpufleet.io/checkpoint-interval: 30m}
    spec:
      restartPolicy: Never
      priorityClassName: training
      schedulerName: gang-scheduler
      terminationGracePeriodSeconds: 120
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: nvidia.com/gpu.count, operator: Gt, values: ["4"]}]
              matchFields: [{key: metadata.name, operator: NotIn, values: [cpu-0]}]
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 50
            preference:
              matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a, b]}]
      initContainers:
      - name: fetch
        image: busybox
        resources: {requests: {cpu: "4", memory: 8Gi}}
      - name: proxy
        image: envoy
        restartPolicy: Always
        resources: {requests: {cpu: 250m, memory: 256Mi}}
      containers:
      - name: train
        image: trainer
        resources:
          requests: {cpu: "16", memory: 200Gi}
          limits: {nvidia.com/gpu: 8, memory: 200Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 3
  selector: {matchLabels: {app: vllm}}
  template:
    metadata:
      labels: {app: vllm}
      annotations: {gpufleet.io/submit-at: 1m}
    spec:
      containers:
      - name: server
        image: vllm
        resources: {limits: {nvidia.com/gpu: 1, cpu: "8", memory: 32Gi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm-exporter, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: dcgm}}
  template:
    metadata: {labels: {app: dcgm}}
    spec:
      priorityClassName: system-node-critical
      containers:
      - {name: exporter, image: dcgm, resources: {requests: {cpu: 100m, memory: 128Mi}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  annotations: {gpufleet.io/submit-at: 90s}
spec:
  containers:
  - name: jupyter
    image: jupyter
    resources: {requests: {cpu: "2", nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
---
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
podMaxBackoffSeconds: 30
profiles:
- schedulerName: gang-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
    queueSort:
      enabled: [{name: Coscheduling}]
      disabled: [{name: "*"}]
    score:
      enabled: [{name: NodeResourcesFit, weight: 2}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 1}]
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 30}
"""


def test_every_modelled_kind_loads_into_the_model(tmp_path: Path) -> None:
    scenario = load(tmp_path, SCENARIO)

    assert scenario.warnings == []
    assert scenario.simulation == SimulationSettings(duration_s=7200.0, seed=7, sample_interval_s=30.0)

    (pool,) = scenario.node_pools
    assert (pool.name, pool.replicas) == ("h100", 2)
    assert pool.template.labels == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert pool.template.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert pool.template.allocatable == {"cpu": 96_000, "memory": 768 * GI, "nvidia.com/gpu": 8, "pods": 110}

    (node,) = scenario.nodes
    assert node.unschedulable and node.labels["kubernetes.io/hostname"] == "cpu-0"
    assert node.capacity == {"cpu": 32_000, "memory": 128 * GI, "pods": 58}
    assert node.allocatable == {"cpu": 31_500, "memory": 120 * GI, "pods": 58}

    assert scenario.priority_classes["training"].value == 1000
    group = scenario.pod_groups["ml/llama"]
    assert (group.min_member, group.schedule_timeout_s) == (2, 600.0)


def test_job_template_carries_requests_priority_gang_tolerations_and_affinity(tmp_path: Path) -> None:
    (job,) = load(tmp_path, SCENARIO).jobs
    assert (job.key, job.parallelism, job.completions, job.backoff_limit) == ("ml/llama", 2, 2, 1)
    assert (job.created.submit_at_s, job.created.order) == (300.0, 5)
    pod = job.template
    assert pod.name == "" and pod.namespace == "ml"
    # Sidecar and app run together; the plain init container (4 CPUs) runs alone before them.
    assert pod.requests == {"cpu": 16_250, "memory": 200 * GI + 256 * 2**20, "nvidia.com/gpu": 8}
    assert pod.gpus == 8
    assert (pod.priority, pod.priority_class_name, pod.preemption_policy) == (1000, "training", "Never")
    assert pod.pod_group == "llama"
    assert pod.scheduler_name == "gang-scheduler"
    assert pod.restart_policy == "Never" and pod.termination_grace_s == 120.0
    assert pod.behavior.duration_s == 4 * 3600.0 and pod.behavior.checkpoint_interval_s == 1800.0
    assert pod.node_selector == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    assert pod.tolerations == (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),)
    assert pod.required_terms == (
        SelectorTerm(
            expressions=(Requirement("nvidia.com/gpu.count", "Gt", ("4",)),),
            fields=(Requirement("metadata.name", "NotIn", ("cpu-0",)),),
        ),
    )
    assert pod.preferred_terms == (
        PreferredTerm(50, SelectorTerm((Requirement("topology.kubernetes.io/zone", "In", ("a", "b")),))),
    )


def test_deployment_daemonset_and_bare_pod_get_api_server_defaults(tmp_path: Path) -> None:
    scenario = load(tmp_path, SCENARIO)
    (deployment,) = scenario.deployments
    assert deployment.replicas == 3 and deployment.key == "default/vllm"
    # Limits alone set the requests; the template's submit-at applies when the Deployment has none.
    assert deployment.template.requests == {"cpu": 8000, "memory": 32 * GI, "nvidia.com/gpu": 1}
    assert deployment.created.submit_at_s == 60.0
    assert deployment.template.restart_policy == "Always"
    assert deployment.template.scheduler_name == "default-scheduler"
    assert deployment.template.termination_grace_s == 30.0
    assert deployment.template.labels == {"app": "vllm"}

    (daemonset,) = scenario.daemonsets
    assert daemonset.template.priority == 2_000_001_000
    assert daemonset.template.priority_class_name == "system-node-critical"

    (bare,) = scenario.pods
    assert bare.pod.key == "default/notebook" and bare.pod.priority == 0
    assert bare.pod.requests == {"cpu": 2000, "nvidia.com/gpu": 1}
    assert (bare.created.submit_at_s, bare.phase, bare.bound_node) == (90.0, "Pending", None)


def test_scheduler_configuration_keeps_plugins_and_args_as_written(tmp_path: Path) -> None:
    (config,) = load(tmp_path, SCENARIO).schedulers
    assert config.name.endswith("scenario.yaml#10")
    assert config.percentage_of_nodes_to_score == 50
    assert (config.pod_initial_backoff_s, config.pod_max_backoff_s) == (1.0, 30.0)
    (profile,) = config.profiles
    assert profile.scheduler_name == "gang-scheduler"
    assert profile.plugins["queueSort"] == PluginSet(enabled=(PluginRef("Coscheduling"),), disabled=("*",))
    assert profile.plugins["multiPoint"] == PluginSet(enabled=(PluginRef("Coscheduling"),))
    assert profile.plugins["score"].enabled == (PluginRef("NodeResourcesFit", 2),)
    assert set(profile.plugins) == {"queueSort", "multiPoint", "score"}
    assert profile.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert profile.plugin_args["Coscheduling"] == {"permitWaitingTimeSeconds": 30}
