"""Nothing is lost, over random scenarios (hypothesis): every run below checks every invariant of
``gpufleet.sim.invariants`` after every event (no resource or device over-committed, one final state
per pod, whole gangs, checkpoints kept, replicas within bounds, metering that adds up), and a
violation fails the test with the invariant, the object and the time.

The scenarios are manifests, as users write them: node pools of several GPU models (whole GPUs,
time-slicing, MIG, DRA devices), some autoscaling; Jobs with priorities, checkpoints, deletions, Kueue
queues (the training kinds' too, a CPU-only launcher or master on a flavor of its own; Jobs of more
completions than parallelism, whose finished pods release quota; fair sharing with random weights and
strategies; contended queues, where Jobs of high priority that come late preempt the early ones,
reclaim lent quota, with and without fair sharing); a JobSet and an MPIJob; gangs under Coscheduling (a
PyTorchJob among them) and under Volcano; pods claiming DRA devices; a Deployment and a StatefulSet scaled by
an HPA against traffic, maybe under a PodDisruptionBudget; queue workers KEDA scales on a list of work items.
``GPUFLEET_SOAK=N`` runs N examples of each property instead of the few the suite runs (a long run, by
hand).

``fault_documents`` adds random faults to half the scenarios (a ``gpufleet.io/v1alpha1``
``FaultModel``, ``docs/faults.md``): random rates of every class and faults at given times.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import coscheduling, invariants_checked, kueue_queues, local_queue, resource_flavor
from gpufleet.gpus.dra.cel import compile_selector
from gpufleet.kube import load_scenario
from gpufleet.model.pod import POD_GROUP_LABEL
from gpufleet.model.scenario import Scenario
from test_properties import clusters

SOAK = int(os.environ.get("GPUFLEET_SOAK", "0"))
#: the DeviceClass's selector. Compiling it makes cel-python's environment, which raises the recursion
#: limit: made here, before hypothesis runs, which warns of a limit changed during a test
DRIVER = 'device.driver == "gpu.nvidia.com"'
compile_selector(DRIVER)


def examples(default: int) -> settings:
    return settings(
        max_examples=SOAK or default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


#: the FaultModel's rate fields (``docs/faults.md``) and the classes a scheduled fault may name
FAULT_RATES = (
    "xidGpuReset", "xidNodeReboot", "xidNodeReplace", "eccDoubleBit", "rowRemapFailure",
    "driverCrash", "nodeLoss", "nic", "nvlink",
)  # fmt: skip
FAULT_KINDS = ("xid-79", "xid-48", "ecc-double-bit", "driver-crash", "node-loss", "nic", "nvlink")


@st.composite
def _fault_model(draw: st.DrawFn, pools: list[str]) -> list[str]:
    rates = ", ".join(f"{name}: {draw(st.sampled_from([0, 0.01, 0.05, 0.2]))}" for name in FAULT_RATES)
    scheduled = ", ".join(
        f"{{at: {draw(st.sampled_from(['5m', '20m', '50m']))}, node: {pool}-0, "
        f"gpu: {draw(st.integers(0, 3))}, kind: {draw(st.sampled_from(FAULT_KINDS))}}}"
        for pool in draw(st.lists(st.sampled_from(pools), max_size=2))
    )
    detection = draw(st.sampled_from(["0s", "30s"]))
    return [
        "apiVersion: gpufleet.io/v1alpha1\nkind: FaultModel\nmetadata: {name: random-faults}\n"
        f"spec:\n  rates: [{{product: '*', {rates}}}]\n  faults: [{scheduled}]\n"
        f"  response: {{detection: {detection}, gpuReset: 5m, reboot: 10m}}\n"
    ]


def fault_documents(pools: list[str]) -> st.SearchStrategy[list[str]]:
    """Random faults on the scenario's node ``pools`` (a ``FaultModel``: random rates for every class,
    a few faults at given times on each pool's first node), or none."""
    return st.one_of(st.just([]), _fault_model(pools))


# -- node pools ------------------------------------------------------------------------------
#: (resource a pod asks for, the pool's ``spec.gpu``): whole GPUs, fractional shares of whole GPUs (HAMi's
#: resources, ``FRACTION``), time-slicing replicas, MIG instances
FRACTION = "fraction"
GPU_KINDS = {
    "whole": ("nvidia.com/gpu", "{{model: {model}, count: {count}}}"),
    "fractions": (FRACTION, "{{model: {model}, count: {count}}}"),
    "time-slicing": ("nvidia.com/gpu", "{{model: {model}, count: {count}, timeSlicingReplicas: 4}}"),
    "mig": (
        "nvidia.com/mig-1g.10gb",
        "{{model: A100-80GB, count: {count}, migStrategy: mixed, "
        "migLayout: [3g.40gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]}}",
    ),
}


#: the node label each pool's nodes carry (``node_pool``): a ResourceFlavor's ``nodeLabels`` and a pod's
#: nodeSelector name a pool by it
POOL_LABEL = "example.com/pool"


@st.composite
def node_pool(draw: st.DrawFn, name: str, kind: str, autoscaled: bool) -> str:
    replicas = draw(st.integers(0, 2))
    grows = draw(st.integers(1, 3)) if autoscaled and draw(st.booleans()) else 0
    bounds = f"min: 0\n  max: {replicas + grows}\n  " if grows else ""
    gpu = GPU_KINDS[kind][1].format(
        model=draw(st.sampled_from(["A100-80GB", "H100-80GB", "L4", "T4"])),
        count=draw(st.sampled_from([1, 2, 4, 8])),
    )
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {name}}}
spec:
  {bounds}replicas: {replicas}
  pricePerHour: {draw(st.sampled_from([0.5, 1.25, 4.0]))}
  gpu: {gpu}
  provisioning: {{boot: {draw(st.sampled_from(["30s", "2m"]))}, devicePlugin: 30s}}
  template:
    metadata: {{labels: {{{POOL_LABEL}: {name}}}}}
    status:
      capacity: {{cpu: "64", memory: 512Gi, pods: "110"}}
"""


# -- workloads -------------------------------------------------------------------------------
def minutes(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(lambda m: f"{m}m")


def limits(draw: st.DrawFn, resource: str, count: int) -> str:
    """A container's GPU limits: ``count`` of ``resource``, or for ``FRACTION`` one HAMi vGPU with random
    memory (MiB) and compute (%), uneven in the two as often as not."""
    if resource != FRACTION:
        return f"{resource}: {count}"
    memory, cores = draw(st.sampled_from([8192, 16384, 40960])), draw(st.sampled_from([10, 25, 60]))
    return f"nvidia.com/gpu: 1, nvidia.com/gpumem: {memory}, nvidia.com/gpucores: {cores}"


@st.composite
def job(
    draw: st.DrawFn,
    name: str,
    resources: list[str],
    queued: bool,
    gang: bool,
    namespace: str = "default",
    contending: str | None = None,
) -> str:
    """A batch Job in ``namespace``: ``queued`` names Kueue's LocalQueue ``queue``, and then its
    ``completions`` may exceed its ``parallelism`` (Kueue releases the quota of the pods it will not run
    again: ``reclaimablePods``); ``gang``: its pods form a PodGroup (the document before it) under the
    Coscheduling scheduler. ``contending`` (a queued Job of a contended Kueue setup, ``kueue_setup``):
    ``"early"``, a long Job of low or no priority submitted first, filling the quota; ``"late"``, one
    pod (of the least quota drawn, ``kueue_setup``) of high priority (its pods' PriorityClass or Kueue's
    WorkloadPriorityClass ``urgent``, the pods then of no priority) submitted while the early ones run,
    which Kueue admits by preempting them."""
    pods = draw(st.integers(1, 1 if contending == "late" else 3))
    completions = pods + (draw(st.integers(0, 3)) if queued else 0)
    resource = draw(st.sampled_from(resources))
    gpus = draw(st.sampled_from([1, 2] if contending else [1, 2, 4]))
    duration = minutes(30, 90) if contending == "early" else minutes(5, 90)
    annotations = [f"gpufleet.io/duration: {draw(duration)}"]
    if draw(st.booleans()):
        annotations.append(f"gpufleet.io/checkpoint-interval: {draw(minutes(2, 20))}")
    if draw(st.booleans()):
        annotations.append('gpufleet.io/checkpoint-on-sigterm: "true"')
    if draw(st.integers(0, 4)) == 0:
        annotations.append(f"gpufleet.io/delete-at: {draw(minutes(1, 120))}")
    job_labels = "kueue.x-k8s.io/queue-name: queue" if queued else ""
    if contending == "early":
        priority = draw(st.sampled_from(["", "priorityClassName: low"]))
    elif contending == "late":
        priority = draw(st.sampled_from(["priorityClassName: high", "urgent"]))
        if priority == "urgent":
            job_labels += ", kueue.x-k8s.io/priority-class: urgent"
            priority = ""
    else:
        priority = draw(st.sampled_from(["", "priorityClassName: high", "priorityClassName: low"]))
    submit = {"early": minutes(0, 2), "late": minutes(5, 30)}.get(contending or "", minutes(0, 60))
    pod_labels = f"{POD_GROUP_LABEL}: {name}" if gang else ""
    group = ""
    if gang:
        group = f"""
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}}}
spec: {{minMember: {draw(st.integers(1, pods))}}}
---"""
    return f"""{group}
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  labels: {{{job_labels}}}
  annotations: {{gpufleet.io/submit-at: {draw(submit)}}}
spec:
  parallelism: {pods}
  completions: {completions}
  backoffLimit: {draw(st.integers(0, 2))}
  template:
    metadata:
      labels: {{{pod_labels}}}
      annotations: {{{", ".join(annotations)}}}
    spec:
      {priority}
      schedulerName: {"gang-scheduler" if gang else "default-scheduler"}
      restartPolicy: {draw(st.sampled_from(["Never", "OnFailure"]))}
      containers:
      - name: main
        image: trainer
        resources: {{requests: {{cpu: "4", memory: 16Gi}}, limits: {{{limits(draw, resource, gpus)}}}}}
"""


@st.composite
def scaled_on_gpu_use(draw: st.DrawFn, name: str, ref: str, target_kind: str) -> str:
    """An HPA that scales ``ref`` (its ``scaleTargetRef``) on GPU use between random bounds, and the traffic
    aimed at it (a ``Traffic`` of ``target_kind``)."""
    low = draw(st.integers(1, 2))
    rps = draw(st.lists(st.integers(0, 80), min_size=1, max_size=4))
    steps = ", ".join(f"{{at: {10 * i}m, value: {v}}}" for i, v in enumerate(rps))
    return f"""
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}}}
spec:
  scaleTargetRef: {ref}
  minReplicas: {low}
  maxReplicas: {low + draw(st.integers(0, 3))}
  metrics:
  - type: Pods
    pods:
      metric: {{name: DCGM_FI_DEV_GPU_UTIL}}
      target: {{type: AverageValue, averageValue: "70"}}
---
apiVersion: gpufleet.io/v1alpha1
kind: Traffic
metadata: {{name: {name}-load}}
spec: {{target: {name}, targetKind: {target_kind}, perReplicaRps: 10, rps: [{steps}]}}
"""


SRV = "{apiVersion: apps/v1, kind: Deployment, name: srv}"


@st.composite
def served(draw: st.DrawFn, resource: str) -> str:
    """A Deployment, the HPA that scales it on GPU use, the traffic it serves, and maybe a
    PodDisruptionBudget that drains and scale-downs must respect."""
    budget = ""
    if draw(st.booleans()):
        budget = f"""
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: srv}}
spec: {{minAvailable: {draw(st.integers(1, 2))}, selector: {{matchLabels: {{app: srv}}}}}}"""
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: srv}}
spec:
  replicas: {draw(st.integers(1, 3))}
  selector: {{matchLabels: {{app: srv}}}}
  template:
    metadata: {{labels: {{app: srv}}}}
    spec:
      containers:
      - name: server
        image: llm
        resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
---{draw(scaled_on_gpu_use("srv", SRV, "Deployment"))}{budget}"""


@st.composite
def consumed(draw: st.DrawFn, resource: str) -> str:
    """Work items fed to a list, and the queue workers KEDA scales on its length (checkpointing, and
    maybe pushing their item back when terminated)."""
    batches = draw(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 4)), min_size=1, max_size=3))
    items = ", ".join(f"{{at: {at}m, count: {n}, work: {draw(minutes(5, 40))}}}" for at, n in batches)
    requeue = draw(st.sampled_from(["true", "false"]))
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: QueueFeed
metadata: {{name: feed}}
spec: {{list: work, items: [{items}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: worker}}
spec:
  replicas: {draw(st.integers(0, 2))}
  selector: {{matchLabels: {{app: worker}}}}
  template:
    metadata:
      labels: {{app: worker}}
      annotations:
        gpufleet.io/consumes: work
        gpufleet.io/checkpoint-interval: {draw(minutes(2, 10))}
        gpufleet.io/requeue-on-sigterm: "{requeue}"
    spec:
      containers:
      - name: worker
        image: trainer
        resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: worker}}
spec:
  scaleTargetRef: {{name: worker}}
  minReplicaCount: 0
  maxReplicaCount: {draw(st.integers(1, 4))}
  cooldownPeriod: {draw(st.sampled_from([60, 300]))}
  triggers:
  - {{type: redis, metadata: {{address: redis:6379, listName: work, listLength: "1"}}}}
"""


@st.composite
def grouped(draw: st.DrawFn, resource: str) -> str:
    """A LeaderWorkerSet of multi-pod groups, the HPA that scales its groups on GPU use, and its traffic."""
    ref = "{apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: lws}"
    return f"""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: lws}}
spec:
  replicas: {draw(st.integers(1, 2))}
  leaderWorkerTemplate:
    size: {draw(st.integers(1, 3))}
    restartPolicy: {draw(st.sampled_from(["RecreateGroupOnPodRestart", "None"]))}
    workerTemplate:
      spec:
        containers:
        - name: server
          image: llm
          resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
---{draw(scaled_on_gpu_use("lws", ref, "LeaderWorkerSet"))}"""


@st.composite
def stateful(draw: st.DrawFn, resource: str) -> str:
    """A StatefulSet (``OrderedReady`` or ``Parallel``, from a random start ordinal, maybe with
    ``minReadySeconds``), the HPA that scales it on GPU use, its traffic, and maybe a PodDisruptionBudget."""
    ref = "{apiVersion: apps/v1, kind: StatefulSet, name: sts}"
    budget = ""
    if draw(st.booleans()):
        budget = f"""
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: sts}}
spec: {{maxUnavailable: {draw(st.integers(0, 1))}, selector: {{matchLabels: {{app: sts}}}}}}"""
    return f"""
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: sts}}
spec:
  replicas: {draw(st.integers(0, 3))}
  podManagementPolicy: {draw(st.sampled_from(["OrderedReady", "Parallel"]))}
  ordinals: {{start: {draw(st.integers(0, 2))}}}
  minReadySeconds: {draw(st.sampled_from([0, 30]))}
  selector: {{matchLabels: {{app: sts}}}}
  template:
    metadata: {{labels: {{app: sts}}}}
    spec:
      containers:
      - name: server
        image: llm
        resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
---{draw(scaled_on_gpu_use("sts", ref, "StatefulSet"))}{budget}"""


@st.composite
def ray_cluster(draw: st.DrawFn, resource: str) -> str:
    """A RayCluster whose in-tree autoscaler grows and shrinks a GPU worker group on Ray demand."""
    low = draw(st.integers(0, 1))
    demand = ", ".join(
        f"{{at: {at}m, bundles: {n}, resources: {{GPU: 1}}, duration: {draw(minutes(5, 30))}}}"
        for at, n in draw(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 4)), min_size=1, max_size=2))
    )
    return f"""
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ray
  annotations: {{gpufleet.io/ray-demand: '[{demand}]'}}
spec:
  enableInTreeAutoscaling: true
  autoscalerOptions: {{idleTimeoutSeconds: {draw(st.sampled_from([30, 120]))}}}
  headGroupSpec:
    template:
      spec:
        containers:
        - name: head
          image: ray
          resources: {{requests: {{cpu: "2", memory: 8Gi}}}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: {low}
    minReplicas: {low}
    maxReplicas: {low + draw(st.integers(1, 3))}
    numOfHosts: {draw(st.integers(1, 2))}
    template:
      spec:
        containers:
        - name: worker
          image: ray
          resources: {{requests: {{cpu: "4", memory: 16Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
"""


@st.composite
def scaled_job(draw: st.DrawFn, resource: str) -> str:
    """Jobs a KEDA ScaledJob makes for the items fed to a list, under a random scaling strategy."""
    items = ", ".join(
        f"{{at: {at}m, count: {n}, work: {draw(minutes(5, 30))}}}"
        for at, n in draw(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 4)), min_size=1, max_size=2))
    )
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: QueueFeed
metadata: {{name: job-feed}}
spec: {{list: jobs, items: [{items}]}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledJob
metadata: {{name: batch}}
spec:
  pollingInterval: 30
  maxReplicaCount: {draw(st.integers(1, 4))}
  scalingStrategy: {{strategy: {draw(st.sampled_from(["default", "accurate", "eager"]))}}}
  jobTargetRef:
    backoffLimit: 1
    template:
      metadata:
        annotations: {{gpufleet.io/consumes: jobs, gpufleet.io/checkpoint-interval: 5m}}
      spec:
        restartPolicy: Never
        containers:
        - name: batch
          image: trainer
          resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
  triggers:
  - {{type: redis, metadata: {{address: redis:6379, listName: jobs, listLength: "1"}}}}
"""


def training(draw: st.DrawFn) -> str:
    """A training pod's annotations: 5-60 min of work, checkpointed every 2-20 min as often as not."""
    annotations = f"gpufleet.io/duration: {draw(minutes(5, 60))}"
    if draw(st.booleans()):
        annotations += f", gpufleet.io/checkpoint-interval: {draw(minutes(2, 20))}"
    return annotations


@st.composite
def claimed(draw: st.DrawFn, pool: str, autoscaled: bool) -> str:
    """A pool whose GPUs are DRA devices (it publishes ResourceSlices), the NVIDIA driver's DeviceClass,
    and a Job whose pods claim 1-4 GPUs each through a ResourceClaimTemplate (some of high priority, so
    claims are preempted and given back)."""
    replicas = draw(st.integers(0, 2))
    bounds = f"min: 0\n  max: {replicas + draw(st.integers(1, 2))}\n  " if autoscaled else ""
    pods = draw(st.integers(1, 3))
    annotations = training(draw)
    priority = draw(st.sampled_from(["", "priorityClassName: high", "priorityClassName: low"]))
    model = draw(st.sampled_from(["H100-80GB", "L4"]))
    return f"""
apiVersion: gpufleet.io/v1alpha1
kind: NodePool
metadata: {{name: {pool}}}
spec:
  {bounds}replicas: {replicas}
  gpu: {{model: {model}, count: {draw(st.sampled_from([2, 4, 8]))}, publishResourceSlices: true}}
  provisioning: {{boot: 30s, driver: 30s}}
  template:
    status:
      capacity: {{cpu: "64", memory: 512Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu.nvidia.com}}
spec:
  selectors:
  - cel: {{expression: {DRIVER}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: gpus}}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {{deviceClassName: gpu.nvidia.com, count: {draw(st.integers(1, 4))}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: claims
  annotations: {{gpufleet.io/submit-at: {draw(minutes(0, 40))}}}
spec:
  parallelism: {pods}
  completions: {pods}
  backoffLimit: {draw(st.integers(0, 2))}
  template:
    metadata:
      annotations: {{{annotations}}}
    spec:
      {priority}
      restartPolicy: Never
      resourceClaims:
      - {{name: gpus, resourceClaimTemplateName: gpus}}
      containers:
      - name: main
        image: trainer
        resources:
          requests: {{cpu: "4", memory: 16Gi}}
          claims: [{{name: gpus}}]
"""


@st.composite
def pytorch_gang(draw: st.DrawFn, resource: str, master_on: str | None = None) -> str:
    """A Kubeflow PyTorchJob run as a gang (``schedulingPolicy.minAvailable``: the operator's PodGroup)
    under the Coscheduling scheduler, a Master and 1-3 Workers, restarted by the operator; ``master_on``:
    its Master asks for no GPU and selects the nodes of that pool (``POOL_LABEL``), a pod set of its own
    that Kueue gives a CPU flavor."""
    workers = draw(st.integers(1, 3))
    annotations = training(draw)
    gpus = draw(st.sampled_from([1, 2]))

    def replica(role: str, count: int) -> str:
        selector, gpu_limits = "", f", limits: {{{limits(draw, resource, gpus)}}}"
        if role == "Master" and master_on is not None:
            selector, gpu_limits = f"\n          nodeSelector: {{{POOL_LABEL}: {master_on}}}", ""
        return f"""
    {role}:
      replicas: {count}
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {{{annotations}}}
        spec:
          schedulerName: gang-scheduler{selector}
          containers:
          - name: pytorch
            image: trainer
            resources: {{requests: {{cpu: "4", memory: 16Gi}}{gpu_limits}}}"""

    return f"""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
  annotations: {{gpufleet.io/submit-at: {draw(minutes(0, 40))}}}
spec:
  runPolicy:
    backoffLimit: {draw(st.integers(0, 3))}
    schedulingPolicy: {{minAvailable: {draw(st.integers(1, workers + 1))}}}
  pytorchReplicaSpecs:{replica("Master", 1)}{replica("Worker", workers)}
"""


@st.composite
def jobset(draw: st.DrawFn, resource: str) -> str:
    """A JobSet of 1-2 replicated Jobs whose failure restarts the whole set (``failurePolicy.maxRestarts``),
    its pods checkpointing."""
    annotations = training(draw)
    jobs = "".join(
        f"""
  - name: {name}
    replicas: {draw(st.integers(1, 2))}
    template:
      spec:
        parallelism: {(pods := draw(st.integers(1, 2)))}
        completions: {pods}
        backoffLimit: 0
        template:
          metadata:
            annotations: {{{annotations}}}
          spec:
            containers:
            - name: {name}
              image: trainer
              resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}"""
        for name in ("trainer", "eval")[: draw(st.integers(1, 2))]
    )
    return f"""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  annotations: {{gpufleet.io/submit-at: {draw(minutes(0, 40))}}}
spec:
  failurePolicy: {{maxRestarts: {draw(st.integers(0, 2))}}}
  replicatedJobs:{jobs}
"""


@st.composite
def mpijob(draw: st.DrawFn, resource: str, launcher_on: str | None = None) -> str:
    """An MPI Operator v2 MPIJob: a launcher Job's pod and 1-3 GPU workers, restarted as the operator does;
    ``launcher_on``: the (CPU-only) launcher selects the nodes of that pool (``POOL_LABEL``)."""
    annotations = training(draw)
    selector = "" if launcher_on is None else f"\n          nodeSelector: {{{POOL_LABEL}: {launcher_on}}}"
    return f"""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: mpi
  annotations: {{gpufleet.io/submit-at: {draw(minutes(0, 40))}}}
spec:
  runPolicy: {{backoffLimit: {draw(st.integers(0, 2))}}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        metadata:
          annotations: {{{annotations}}}
        spec:{selector}
          containers:
          - {{name: launcher, image: mpi, resources: {{requests: {{cpu: "1", memory: 2Gi}}}}}}
    Worker:
      replicas: {draw(st.integers(1, 3))}
      template:
        metadata:
          annotations: {{{annotations}}}
        spec:
          containers:
          - name: worker
            image: mpi
            resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
"""


@st.composite
def volcano_job(draw: st.DrawFn, resource: str) -> str:
    """A Volcano Job placed by the ``volcano`` scheduler as a gang of ``minAvailable``, restarted whole
    on a failed or evicted pod up to ``maxRetry`` (or its pods made again, without a policy)."""
    replicas = draw(st.integers(1, 3))
    policy = draw(st.sampled_from(["", "  policies:\n  - {event: PodFailed, action: RestartJob}\n"]))
    annotations = training(draw)
    return f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vc
  annotations: {{gpufleet.io/submit-at: {draw(minutes(0, 40))}}}
spec:
  minAvailable: {draw(st.integers(1, replicas))}
  maxRetry: {draw(st.integers(1, 3))}
{policy}  tasks:
  - name: worker
    replicas: {replicas}
    template:
      metadata:
        annotations: {{{annotations}}}
      spec:
        restartPolicy: {draw(st.sampled_from(["Never", "OnFailure"]))}
        containers:
        - name: main
          image: trainer
          resources: {{requests: {{cpu: "2", memory: 8Gi}}, limits: {{{limits(draw, resource, 1)}}}}}
"""


def queued_in(text: str) -> str:
    """A training workload's text (``pytorch_gang``, ``jobset``, ``mpijob``) labelled for Kueue's
    LocalQueue ``queue``: Kueue admits its pod sets whole."""
    labelled = "\nmetadata:\n  name: \\1\n  labels: {kueue.x-k8s.io/queue-name: queue}\n"
    return re.sub(r"\nmetadata:\n  name: (\S+)\n", labelled, text, count=1)


PRIORITY_CLASSES = "---".join(
    f"\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n"
    for name, value in (("high", 1000), ("low", -10))
)


#: what each GPU resource a pod asks for (``GPU_KINDS``) asks of Kueue's quota: HAMi's vGPU its memory
#: (MiB) and cores (%) too
KUEUE_RESOURCES = {
    "nvidia.com/gpu": ("nvidia.com/gpu",),
    FRACTION: ("nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores"),
    "nvidia.com/mig-1g.10gb": ("nvidia.com/mig-1g.10gb",),
}
#: a flavor's quota of the resources only GPU counts bound: 100 GiB of vGPU memory and 800% of cores per
#: GPU of the quota, vGPU memory and cores a pod asks for (``limits``) then fit the way its GPUs do
PER_GPU = {"nvidia.com/gpumem": 102400, "nvidia.com/gpucores": 800}
#: upstream's valid ``fairSharing.preemptionStrategies`` (``validateFairSharing``)
STRATEGY_SETS = (
    "[LessThanOrEqualToFinalShare]",
    "[LessThanInitialShare]",
    "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
)


@st.composite
def fair_sharing_config(draw: st.DrawFn) -> str:
    """Kueue's manager Configuration turning fair sharing on: v1beta2 with one of upstream's valid
    strategy lists, or v1beta1 with ``enable: true`` (its strategies, or none: upstream's defaults)."""
    strategies = draw(st.sampled_from(STRATEGY_SETS))
    if draw(st.integers(0, 2)) == 2:
        listed = draw(st.sampled_from(["", f", preemptionStrategies: {strategies}"]))
        return (
            "\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            f"fairSharing: {{enable: true{listed}}}\n"
        )
    return (
        "\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        f"fairSharing: {{preemptionStrategies: {strategies}}}\n"
    )


def weight(draw: st.DrawFn) -> str:
    """A ClusterQueue's or Cohort's ``fairSharing`` line (indented two spaces), or none: a random weight,
    0 now and then (the queue then borrows last)."""
    value = draw(st.sampled_from([None, None, "0", "1", "2", "500m", "3"]))
    return "" if value is None else f'  fairSharing: {{weight: "{value}"}}\n'


#: the WorkloadPriorityClass a late contending Job may name (``job``): Kueue's priority, not its pods'
URGENT = (
    "\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
    "metadata: {name: urgent}\nvalue: 1000\n"
)


@st.composite
def preemption_policy(draw: st.DrawFn, contended: bool) -> str:
    """A ClusterQueue's ``preemption`` (flow-style, without its braces): random policies, ``contended``
    mostly ones that preempt; ``borrowWithinCohort`` now and then where it may reclaim."""
    reclaims = ["Never", "LowerPriority", "Any"]
    within = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
    if contended:  # preempting within the queue always, reclaiming four times in five
        reclaims = ["Never", *reclaims[1:] * 2]
        within = within[1:]
    reclaim = draw(st.sampled_from(reclaims))
    preemption = f"reclaimWithinCohort: {reclaim}, withinClusterQueue: {draw(st.sampled_from(within))}"
    if reclaim != "Never" and draw(st.booleans()):
        threshold = draw(st.sampled_from(["", ", maxPriorityThreshold: 0", ", maxPriorityThreshold: 1000"]))
        preemption += f", borrowWithinCohort: {{policy: LowerPriority{threshold}}}"
    return preemption


@st.composite
def kueue_setup(draw: st.DrawFn, resources: list[str], pools: int, contended: bool = False) -> str:
    """Kueue's objects for the LocalQueue ``default/queue``: a ClusterQueue ``cq`` with a quota of every
    resource the queued pods ask for (``resources``: their GPU resources; cpu and memory in a group of
    their own), or one drawn wider: a second GPU flavor, a CPU flavor for one of the ``pools``' nodes
    (``POOL_LABEL``: a launcher's or master's nodeSelector names it) before one for any node, a ``pods``
    quota, a cohort with a queue that only lends (and maybe a Cohort object of quota of its own),
    ``flavorFungibility`` and preemption policies (``borrowWithinCohort`` among them), and fair sharing (the
    manager Configuration, random weights). Now and then the queue covers the GPUs only (cpu and memory:
    ``resource cpu unavailable in ClusterQueue``, nothing admitted). ``contended``: small quotas for the
    contending Jobs (``job``), a cohort that lends little, preemption policies that mostly preempt (with
    and without fair sharing) and often the second team's queue, which borrows or reclaims in turn."""
    gpus = draw(st.sampled_from([2, 4] if contended else [2, 8, 16]))
    gpu_covered = sorted({r for resource in resources for r in KUEUE_RESOURCES[resource]})
    if not contended and draw(st.integers(0, 5)) == 5:
        return kueue_queues("default-flavor", gpus, "queue", "default")
    simple = not contended and draw(st.booleans())
    flavors = ["default-flavor", "spare-flavor"][
        : 1 if simple else draw(st.sampled_from([1, 1, 2] if contended else [1, 2]))
    ]
    cpu_pool = None if simple or draw(st.booleans()) else f"pool{draw(st.integers(0, pools - 1))}"
    cpu_flavors = (["pool-cpu"] if cpu_pool is not None else []) + ["any-cpu"]
    pods = None if simple else draw(st.sampled_from([None, 1, 4, 20]))
    if pods is not None:
        gpu_covered.append("pods")

    def groups(quota: int, limits: str = "") -> str:
        lines = [f"  - coveredResources: [{', '.join(gpu_covered)}]\n    flavors:"]
        for flavor in flavors:
            lines.append(f"    - name: {flavor}\n      resources:")
            for r in gpu_covered:
                if r == "pods":
                    lines.append(f"      - {{name: pods, nominalQuota: {pods}}}")
                else:
                    more = limits if r == "nvidia.com/gpu" else ""
                    lines.append(f"      - {{name: {r}, nominalQuota: {quota * PER_GPU.get(r, 1)}{more}}}")
        lines.append("  - coveredResources: [cpu, memory]\n    flavors:")
        for flavor in cpu_flavors:
            lines.append(f"    - name: {flavor}\n      resources:")
            lines.append(f"      - {{name: cpu, nominalQuota: {quota * 8}}}")
            lines.append(f"      - {{name: memory, nominalQuota: {quota * 32}Gi}}")
        return "  resourceGroups:\n" + "\n".join(lines) + "\n"

    flavor_docs = [resource_flavor(f) for f in flavors]
    flavor_docs.append(resource_flavor("any-cpu"))
    if cpu_pool is not None:
        flavor_docs.append(resource_flavor("pool-cpu", spec=f"  nodeLabels: {{{POOL_LABEL}: {cpu_pool}}}\n"))
    if simple:
        cq = "\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
        cq += "spec:\n  namespaceSelector: {}\n" + groups(gpus)
        return "---".join([*flavor_docs, cq, local_queue("queue", "default", "cq")])
    policy = {
        "whenCanBorrow": draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
        "whenCanPreempt": draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
    }
    if set(policy.values()) == {"TryNextFlavor"} and draw(st.booleans()):
        policy["preference"] = draw(st.sampled_from(["BorrowingOverPreemption", "PreemptionOverBorrowing"]))
    preemption = draw(preemption_policy(contended))
    fair = draw(st.booleans())
    fungibility = ", ".join(f"{k}: {v}" for k, v in policy.items())
    cq = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  cohortName: research
  flavorFungibility: {{{fungibility}}}
  preemption: {{{preemption}}}
{weight(draw) if fair else ""}""" + groups(gpus, draw(st.sampled_from(["", ", borrowingLimit: 4"])))
    lender = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: lender}}
spec:
  namespaceSelector: {{}}
  cohortName: research
{weight(draw) if fair else ""}""" + groups(draw(st.sampled_from([0, 0, 2] if contended else [0, 8])))
    docs = [*flavor_docs, cq, lender]
    if fair:
        docs.append(draw(fair_sharing_config()))
        if draw(st.booleans()):  # the cohort's own quota, lent to its queues
            cohort = "\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\nspec:\n"
            docs.append(cohort + weight(draw) + groups(draw(st.sampled_from([0, 4]))))
    if (fair or contended) and draw(st.booleans()):  # a second team, queued in namespace team-b
        team_preemption = (
            draw(preemption_policy(contended))
            if contended
            else "reclaimWithinCohort: Any, withinClusterQueue: LowerPriority"
        )
        team_b = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: team-b}}
spec:
  namespaceSelector: {{}}
  cohortName: research
  preemption: {{{team_preemption}}}
{weight(draw) if fair else ""}""" + groups(draw(st.sampled_from([2, 4])))
        docs += [team_b, local_queue("queue", "team-b", "team-b")]
    if contended:
        docs.append(URGENT)
    return "---".join([*docs, local_queue("queue", "default", "cq")])


@st.composite
def scenarios(draw: st.DrawFn, autoscaled: bool) -> str:
    """A random scenario as one multi-document YAML text; ``autoscaled``: some pools may grow (through
    cluster-autoscaler), else the nodes are those there at the start."""
    kinds = draw(st.lists(st.sampled_from(sorted(GPU_KINDS)), min_size=1, max_size=3))
    docs = [draw(node_pool(f"pool{i}", kind, autoscaled)) for i, kind in enumerate(kinds)]
    resources = sorted({GPU_KINDS[kind][0] for kind in kinds})
    queued = draw(st.booleans())
    #: a contended Kueue setup: small quotas, and Jobs of high priority that come late (``job``)
    contended = queued and draw(st.booleans())
    setup = draw(kueue_setup(resources, len(kinds), contended)) if queued else ""
    if queued:
        docs.append(setup)
    #: the pool of the queue's CPU flavor a launcher or master may select, and the namespaces of its queues
    cpu_pool = re.search(rf"nodeLabels: {{{POOL_LABEL}: (pool\d+)}}", setup)
    namespaces = ["default", "team-b"] if "namespace: team-b" in setup else ["default"]

    def on_pool() -> str | None:
        """The pool a CPU-only launcher or master selects: the CPU flavor's, any, or none."""
        choices = [None, *(f"pool{i}" for i in range(len(kinds)))]
        return cpu_pool[1] if cpu_pool and draw(st.booleans()) else draw(st.sampled_from(choices))

    pools = [f"pool{i}" for i in range(len(kinds))]
    if draw(st.integers(0, 2)) == 0:
        pools.append("dra")
        docs.append(draw(claimed("dra", autoscaled)))
    gangs = draw(st.integers(0, 2))
    jobs = draw(st.integers(0, 5))
    for i in range(jobs + gangs):
        gang = i >= jobs
        in_queue = queued and not gang and draw(st.booleans())
        namespace = draw(st.sampled_from(namespaces)) if in_queue else "default"
        docs.append(draw(job(f"job{i}", resources, in_queue, gang, namespace)))
    if contended:
        for when, count in (("early", draw(st.integers(2, 4))), ("late", draw(st.integers(1, 2)))):
            for i in range(count):
                namespace = draw(st.sampled_from(namespaces))
                docs.append(draw(job(f"{when}{i}", resources, True, False, namespace, contending=when)))
    pytorch = draw(st.integers(0, 2)) == 0
    if pytorch:
        resource = draw(st.sampled_from(resources))
        if queued and draw(st.booleans()):
            docs.append(queued_in(draw(pytorch_gang(resource, on_pool()))))
        else:
            docs.append(draw(pytorch_gang(resource)))
    if gangs or pytorch:
        docs.append(coscheduling("gang-scheduler"))
    if draw(st.booleans()):
        docs.append(draw(served(draw(st.sampled_from(resources)))))
    if draw(st.booleans()):
        docs.append(draw(consumed(draw(st.sampled_from(resources)))))
    for kind in (grouped, stateful, ray_cluster, scaled_job, jobset, mpijob, volcano_job):
        if draw(st.integers(0, 2)) == 0:
            resource = draw(st.sampled_from(resources))
            if queued and kind in (jobset, mpijob) and draw(st.booleans()):
                docs.append(
                    queued_in(draw(mpijob(resource, on_pool()) if kind is mpijob else kind(resource)))
                )
            else:
                docs.append(draw(kind(resource)))
    docs.append(PRIORITY_CLASSES)
    docs.extend(draw(fault_documents(pools)))
    duration = draw(st.sampled_from(["1h", "2h"]))
    docs.append(
        "apiVersion: gpufleet.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
        f"spec: {{duration: {duration}, sampleInterval: 10m}}\n"
    )
    return "\n---\n".join(docs)


# -- properties ------------------------------------------------------------------------------
def run_text(text: str, seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.yaml"
        path.write_text(text)
        scenario = load_scenario([path])
    invariants_checked(scenario, seed)


@examples(15)
@given(scenarios(autoscaled=False), st.integers(0, 2**16))
def test_nothing_is_lost_in_random_clusters_and_workloads(text: str, seed: int) -> None:
    run_text(text, seed)


@examples(15)
@given(scenarios(autoscaled=True), st.integers(0, 2**16))
def test_nothing_is_lost_while_cluster_autoscaler_adds_and_removes_nodes(text: str, seed: int) -> None:
    run_text(text, seed)


@examples(25)
@given(clusters(gangs=True), st.integers(0, 3))
def test_nothing_is_lost_with_gangs_under_coscheduling(scenario: Scenario, seed: int) -> None:
    invariants_checked(scenario, seed)


@examples(15)
@given(clusters(), st.integers(0, 3))
def test_nothing_is_lost_with_bare_pods(scenario: Scenario, seed: int) -> None:
    invariants_checked(scenario, seed)
