"""A fidelity case: a gpufleet scenario reduced to what both sides can be given the same way.

Both the real control plane and gpufleet get the case *flattened*: the Nodes present at the start
(a NodePool's ``replicas`` and ``warm`` nodes stamped as the simulator stamps them), the cluster's
PriorityClasses, PodDisruptionBudgets and DRA objects, and every pod the scenario creates at the
start, written as a bare Pod in the order the simulator creates them (``gpufleet.io/submit-at``,
then document order; a Job's first ``parallelism`` pods, a Deployment's replicas, a DaemonSet's
pod for each node it runs on, named as gpufleet's controllers name them and pinned as upstream's
DaemonSet controller pins them). Time is taken out: ``gpufleet.io/*`` annotations are dropped (no
pod finishes or is deleted during a case) and pods terminate at once (grace period 0), so each
pod's decision depends only on the pods created before it; only the order of arrival is kept (a
pod that arrives later than the one before it starts in a later second on the real side).

A case the upstream binaries cannot decide (a profile with plugins outside kube-scheduler, pods
that a scheduler extension shares GPUs for, Kueue admission) is *excluded*, with the reason. A case
gpufleet warns it does not fully model (``... is not modelled``) is run and reported, but judged
apart from the cases gpufleet claims to model.
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpufleet.kube import ScenarioError, load_scenario
from gpufleet.kube.manifests import node_manifest, node_selector_terms, tolerations
from gpufleet.model.pod import DEFAULT_SCHEDULER, Pod
from gpufleet.model.scenario import Scenario
from gpufleet.scheduling.registry import in_tree
from gpufleet.sim.simulation import Simulation
from gpufleet.workloads import controller_for, manifest_readers

SCHEDULER_CONFIG = ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")
CLUSTER_KINDS = {
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"),
}
WORKLOAD_KINDS = {("batch/v1", "Job"), ("apps/v1", "Deployment"), ("apps/v1", "DaemonSet")}
GPUFLEET_PREFIX = "gpufleet.io/"
#: what makes kube-scheduler's decision not upstream's alone
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
NOT_MODELLED = "is not modelled"


class CaseError(ValueError):
    """The case's documents are not a valid gpufleet scenario."""


@dataclass(frozen=True)
class Case:
    name: str  # e.g. examples/seed-004/default-scheduler.yaml, generated/0042
    origin: str  # seed-004 | example | fixture | generated
    documents: tuple[dict[str, Any], ...]
    note: str = ""  # what it checks


@dataclass
class Flat:
    case: Case
    nodes: list[dict[str, Any]]
    cluster_objects: list[dict[str, Any]]  # PriorityClasses, PDBs, DRA objects, in document order
    pods: list[dict[str, Any]]  # in creation order
    scheduler_config: dict[str, Any] | None  # the one KubeSchedulerConfiguration (None: upstream defaults)
    profiles: set[str]  # the schedulerNames it serves
    #: per pod: created later than the pod before it (a later ``gpufleet.io/submit-at``); the real
    #: side then starts it in a later second (a pod's start time has a resolution of one second)
    later: list[bool] = field(default_factory=list)
    excluded: str = ""  # why the upstream binaries cannot decide it
    not_modelled: list[str] = field(
        default_factory=list
    )  # gpufleet's own warnings that it does not model something
    _scenario: Scenario | None = None

    def documents(self, spacing_s: float | None = None) -> list[dict[str, Any]]:
        """The flat scenario as gpufleet reads it; with ``spacing_s`` each pod the scheduler decides is
        submitted that long after the one before (``gpufleet.io/submit-at``), so the simulator creates
        them one by one; a pod written with ``spec.nodeName`` arrives with the next of them, beside the
        others of its arrival (they start in the same second on the real side too)."""
        pods = self.pods
        if spacing_s is not None:
            pods = [copy.deepcopy(p) for p in pods]
            slot = 0
            for k, p in enumerate(pods):
                prebound = bool(p["spec"].get("nodeName"))
                if k and (not prebound or self.later[k] or not pods[k - 1]["spec"].get("nodeName")):
                    slot += 1
                p["metadata"].setdefault("annotations", {})[f"{GPUFLEET_PREFIX}submit-at"] = (
                    f"{slot * spacing_s:g}s"
                )
        config = [self.scheduler_config] if self.scheduler_config is not None else []
        return [*self.nodes, *self.cluster_objects, *config, *pods]

    def scenario(self) -> Scenario:
        """The flat scenario as gpufleet reads it (read once)."""
        if self._scenario is None:
            self._scenario = load_documents(self.documents())
        return self._scenario


def load_documents(documents: list[dict[str, Any]]) -> Scenario:
    with tempfile.TemporaryDirectory(prefix="gpufleet-fidelity-") as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
        try:
            return load_scenario([path])
        except ScenarioError as exc:
            raise CaseError("\n".join(exc.problems)) from None


def _gvk(doc: dict[str, Any]) -> tuple[str, str]:
    return str(doc.get("apiVersion", "")), str(doc.get("kind", ""))


def _strip_timing(metadata: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in metadata.items() if k not in ("annotations", "resourceVersion", "uid")}
    annotations = {
        k: v for k, v in (metadata.get("annotations") or {}).items() if not k.startswith(GPUFLEET_PREFIX)
    }
    if annotations:
        meta["annotations"] = annotations
    return meta


def _bare(pod_doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(pod_doc)
    doc.pop("status", None)
    doc["metadata"] = _strip_timing(doc.get("metadata") or {})
    doc["metadata"].setdefault("namespace", "default")
    doc["spec"]["terminationGracePeriodSeconds"] = 0
    return doc


def _from_template(pod: Pod, template: dict[str, Any]) -> dict[str, Any]:
    """The Pod a controller makes of ``template``: the name, labels, required node affinity and
    tolerations gpufleet's controller gave it (a DaemonSet's pin to its node, as upstream's
    ``ReplaceDaemonSetPodNodeNameNodeAffinity`` and ``AddOrUpdateDaemonPodTolerations`` do)."""
    metadata = _strip_timing(template.get("metadata") or {})
    metadata.update(name=pod.name, namespace=pod.namespace)
    if pod.labels:
        metadata["labels"] = dict(pod.labels)
    spec = copy.deepcopy(template.get("spec") or {})
    spec["terminationGracePeriodSeconds"] = 0
    if pod.required_terms is not None:
        affinity = spec.setdefault("affinity", {})
        affinity["nodeAffinity"] = {
            **affinity.get("nodeAffinity", {}),
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": node_selector_terms(pod)},
        }
    if pod.tolerations:
        spec["tolerations"] = tolerations(pod)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _excluded(scenario: Scenario, documents: tuple[dict[str, Any], ...]) -> str:
    readers = manifest_readers()
    operated = sorted({k for api, k in map(_gvk, documents) if (*api.rpartition("/")[::2], k) in readers})
    if operated:
        return f"{', '.join(operated)}: its operator is not part of the control plane"
    configs = [d for d in documents if _gvk(d) == SCHEDULER_CONFIG]
    if len(configs) > 1:
        return "several scheduler processes (the real side runs one kube-scheduler)"
    for config in configs:
        for profile in config.get("profiles") or []:
            named = {
                p.get("name")
                for point in (profile.get("plugins") or {}).values()
                for p in (point or {}).get("enabled") or []
            }
            extra = sorted(str(n) for n in named if not in_tree(str(n)))
            if extra:
                name = profile.get("schedulerName", DEFAULT_SCHEDULER)
                return f"profile {name} uses plugins kube-scheduler does not have: {', '.join(extra)}"
    templates = [
        *(j.template for j in scenario.jobs),
        *(d.template for d in scenario.deployments),
        *(d.template for d in scenario.daemonsets),
    ]
    if any(p.gpu_share is not None for p in [*(b.pod for b in scenario.pods), *templates]):
        return "fractional GPUs (KAI or HAMi annotations): a scheduler extension shares them"
    if any(p.scheduling_gates for p in [*(b.pod for b in scenario.pods), *templates]):
        return "scheduling gates removed at a scenario time (gpufleet.io/ungate-at): a flat case has no time"
    if scenario.kueue.workload_queues or scenario.kueue.cluster_queues:
        return "Kueue admission (Kueue is not part of the control plane)"
    if any(rt for rt in scenario.node_pools if rt.dra_gpus is not None):
        return "ResourceSlices a node pool publishes as its nodes register"
    return ""


def _nothing_to_decide(scenario: Scenario) -> str:
    if scenario.scaled_objects or scenario.scaled_jobs:
        return "no pod at the start: KEDA makes its pods (KEDA is not part of the control plane)"
    return "no pod exists at the start"


def flatten(case: Case) -> Flat:
    scenario = load_documents(list(case.documents))
    sim = Simulation(scenario)
    nodes = [node_manifest(n) for n in sim.state.nodes]
    for n in nodes:
        n["metadata"]["labels"].setdefault("kubernetes.io/hostname", n["metadata"]["name"])
    cluster_objects = [copy.deepcopy(d) for d in case.documents if _gvk(d) in CLUSTER_KINDS]
    for d in cluster_objects:
        d["metadata"] = _strip_timing(d.get("metadata") or {})
    workloads = {
        (d["kind"], (d.get("metadata") or {}).get("namespace", "default"), d["metadata"]["name"]): d
        for d in case.documents
        if _gvk(d) in WORKLOAD_KINDS
    }
    bare_docs = [d for d in case.documents if _gvk(d) == ("v1", "Pod")]
    arrivals: list[tuple[float, int, int, dict[str, Any]]] = []  # (submit-at, document order, k, pod)
    for doc, bare in zip(bare_docs, scenario.pods, strict=True):
        if bare.phase in ("Succeeded", "Failed"):
            continue
        arrivals.append((bare.created.submit_at_s, bare.created.order, 0, _bare(doc)))
    for workload in scenario.workloads():
        controller = controller_for(workload)
        document = workloads.get((controller.kind, workload.namespace, workload.name))
        if document is None:  # a kind of another operator: excluded below
            continue
        template = document["spec"]["template"]
        for k, pod in enumerate(controller.wanted(sim.state.nodes)):
            arrivals.append(
                (workload.created.submit_at_s, workload.created.order, k, _from_template(pod, template))
            )
    arrivals.sort(key=lambda a: (a[0], a[1], a[2]))
    configs = [copy.deepcopy(d) for d in case.documents if _gvk(d) == SCHEDULER_CONFIG]
    config = configs[0] if configs else None
    profiles = {DEFAULT_SCHEDULER}
    if config is not None:
        config["percentageOfNodesToScore"] = 100
        names = [p.get("schedulerName", DEFAULT_SCHEDULER) for p in config.get("profiles") or [{}]]
        if DEFAULT_SCHEDULER not in names:  # the cluster's own kube-scheduler, in the same process
            config["profiles"] = [*(config.get("profiles") or []), {"schedulerName": DEFAULT_SCHEDULER}]
        profiles |= set(names)
    flat = Flat(case, nodes, cluster_objects, [a[3] for a in arrivals], config, profiles)
    flat.later = [k > 0 and a[0] > arrivals[k - 1][0] for k, a in enumerate(arrivals)]
    flat.excluded = _excluded(scenario, case.documents) or ("" if flat.pods else _nothing_to_decide(scenario))
    if not flat.excluded:
        flat.not_modelled = [w for w in flat.scenario().warnings if NOT_MODELLED in w]
    return flat
