"""The real side of a cluster-autoscaler case: the real cluster-autoscaler (its ``kwok`` cloud
provider) decides the case on the test control plane.

Each NodePool becomes a node-group template in the ``kwok-provider-templates`` ConfigMap: the Node
gpufleet models (``kube.manifests.node_manifest``: capacity, allocatable, GPU Feature Discovery
labels, taints) labelled with its group and annotated with its ``min`` and ``max``; the provider
creates Nodes from it (named ``<group>-<5 random characters>``), which kwok plays. A pool's existing
``replicas`` are created as that group's Nodes (``<pool>-<n>``, as gpufleet names them). Then the
pods are created (those with ``nodeName`` first), cluster-autoscaler is started with the case's
settings (scan every second) and watched: the scale-ups from its log (``Scale-up: setting group G
size to N``), each pod's first ``NotTriggerScaleUp`` Event, and which existing nodes are gone.

The provider's template node also runs a kube-proxy pod of 100m cpu (``BuildKubeProxy``, as some
clouds' templates do); gpufleet's templates have none, so the cases leave that much cpu free.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import yaml

from e2e.controlplane import KWOK_NODE_ANNOTATION, ControlPlane
from e2e.fidelity.autoscaler_cases import NAMESPACE, UNUSED_SCHEDULER, AutoscalerCase
from e2e.fidelity.autoscaler_decisions import Decisions
from gpufleet.kube.load import load_scenario
from gpufleet.kube.manifests import node_manifest

CA_NAMESPACE = "kube-system"
GROUP_LABEL = "gpufleet.io/node-pool"
GROUP_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/name"
MIN_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/min-count"
MAX_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/max-count"
DESIRED_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/desired-count"
GPU_LABEL = "nvidia.com/gpu.product"
#: what cluster-autoscaler logs at the start of every loop (``RunOnce``)
FIRST_LOOP = "static_autoscaler.go"
SCALE_UP_LINE = re.compile(r"Scale-up: setting group (\S+) size to (\d+)")
#: what cluster-autoscaler logs when it starts to remove a node (``actuator.go``)
SCALE_DOWN_LINE = re.compile(r"Scale-down: removing (?:empty )?node \"?([^\s\",]+)")
#: how long a removal once started may take: the drain's wait for its pods (``waitPodsToDisappear``
#: polls every 5 s) and the node's deletion through the provider, on a loaded machine
REMOVAL_S = 45.0
#: how long cluster-autoscaler is watched after its first loop
WATCH_S = {"scale-up": 15.0, "no-scale-up": 8.0, "scale-down": 8.0}
POLL_S = 0.1
CONFIG_MAPS = ("kwok-provider-config", "kwok-provider-templates", "cluster-autoscaler-priority-expander")


def _flags(case: AutoscalerCase) -> list[str]:
    s = case.settings
    flags = [
        f"--expander={s.get('expander', 'least-waste')}",
        "--scan-interval=1s",
        f"--scale-down-enabled={'true' if case.kind == 'scale-down' else 'false'}",
        f"--scale-down-unneeded-time={s.get('scaleDownUnneededTime', '10m')}",
        f"--scale-down-delay-after-add={s.get('scaleDownDelayAfterAdd', '10m')}",
        "--scale-down-delay-after-delete=0s",
        # the 5 s cluster-autoscaler waits between tainting a node and deleting it changes no decision;
        # gpufleet's side sets the same (``AutoscalerCase.scenario``)
        "--node-delete-delay-after-taint=0s",
        "--max-node-provision-time=15m",
        "--write-status-configmap=false",
        "--kube-client-qps=200",
        "--kube-client-burst=400",
        # a scheduler name no pod uses: cluster-autoscaler then skips its wait for "very new" pods (2 s,
        # 30 s with GPU pods: ``allPodsAreNew``) and nothing else changes; gpufleet's side sets the same
        # (``AutoscalerCase.scenario``)
        f"--bypassed-scheduler-names={UNUSED_SCHEDULER}",
        "--v=2",
    ]
    if "scaleDownUtilizationThreshold" in s:
        flags.append(f"--scale-down-utilization-threshold={s['scaleDownUtilizationThreshold']}")
    return flags


def _templates(case: AutoscalerCase, tmp: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The node-group templates and the pools' existing nodes, as the API's Nodes."""
    path = tmp / "case.yaml"
    path.write_text(yaml.safe_dump_all(case.scenario(), sort_keys=False))
    scenario = load_scenario([path])
    templates, existing = [], []
    for p in scenario.node_pools:
        top = p.max if p.max is not None else p.replicas
        limits = {
            MIN_ANNOTATION: str(p.min),
            MAX_ANNOTATION: str(top),
            # the provider refuses to start when the desired size is outside min..max
            DESIRED_ANNOTATION: str(min(max(p.replicas, p.min), top)),
        }
        template = node_manifest(p.template, annotations=limits, labels={GROUP_LABEL: p.name})
        template["metadata"]["name"] = p.name
        templates.append(template)
        for n in range(p.replicas):
            name = f"{p.name}-{n}"
            node = node_manifest(
                p.template,
                annotations={KWOK_NODE_ANNOTATION: "fake", GROUP_ANNOTATION: p.name},
                labels={GROUP_LABEL: p.name, "kubernetes.io/hostname": name},
            )
            node["metadata"]["name"] = name
            node["spec"]["providerID"] = f"kwok:{name}"
            existing.append(node)
    return templates, existing


def _provider_config(templates: list[dict[str, Any]]) -> dict[str, Any]:
    products = sorted(
        {t["metadata"]["labels"][GPU_LABEL] for t in templates if GPU_LABEL in t["metadata"]["labels"]}
    )
    return {
        "apiVersion": "v1alpha1",
        "readNodesFrom": "configmap",
        "nodegroups": {"fromNodeLabelKey": GROUP_LABEL},
        "nodes": {
            "skipTaint": True,
            "gpuConfig": {
                "gpuLabelKey": GPU_LABEL,
                "availableGPUTypes": {p: {} for p in products or ["none"]},
            },
        },
        "configmap": {"name": "kwok-provider-templates"},
    }


def _node_list(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The templates as one ``v1`` List: the provider reads a single document only as a List."""
    return {"apiVersion": "v1", "kind": "List", "items": nodes}


def _config_map(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": CA_NAMESPACE},
        "data": data,
    }


def clean(cp: ControlPlane) -> None:
    """cluster-autoscaler stopped; the case's pods (at once), Nodes, ConfigMaps and Events deleted,
    through the API (what ``kubectl delete --all`` asks, without a kubectl process for each)."""
    from lightkube import ApiError
    from lightkube.resources.core_v1 import ConfigMap, Event, Node, Pod

    cp.stop_cluster_autoscaler()
    client = cp.client()
    client.deletecollection(Pod, namespace=NAMESPACE, grace_period=0)
    client.deletecollection(Node)
    for name in CONFIG_MAPS:
        try:
            client.delete(ConfigMap, name, namespace=CA_NAMESPACE)
        except ApiError as exc:
            if exc.status.code != 404:
                raise
    client.deletecollection(Event, namespace=NAMESPACE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if not _items(cp, f"/api/v1/namespaces/{NAMESPACE}/pods") and not _items(cp, "/api/v1/nodes"):
            return
        time.sleep(POLL_S)
    raise RuntimeError("the cluster did not empty within 20 s")


def _items(cp: ControlPlane, path: str) -> list[dict[str, Any]]:
    return list((cp.get(path) or {}).get("items", []))


def _apply(cp: ControlPlane, objects: list[dict[str, Any]]) -> None:
    """Create ``objects`` in order (as ``kubectl create -f`` does a List's items)."""
    from lightkube import codecs

    client = cp.client()
    for obj in objects:
        client.create(codecs.from_dict(obj))


def _ready(node: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", [])
    )


def _wait(what: str, done: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not within {timeout:.0f} s")
        time.sleep(POLL_S)


def real_decisions(cp: ControlPlane, binary: Path, case: AutoscalerCase, tmp: Path) -> Decisions:
    clean(cp)
    templates, existing = _templates(case, tmp)
    maps = [
        _config_map("kwok-provider-config", {"config": yaml.safe_dump(_provider_config(templates))}),
        _config_map("kwok-provider-templates", {"templates": yaml.safe_dump(_node_list(templates))}),
    ]
    if case.priorities is not None:
        maps.append(_config_map("cluster-autoscaler-priority-expander", {"priorities": case.priorities}))
    _apply(cp, maps)
    _apply(cp, existing)
    names = {n["metadata"]["name"] for n in existing}
    _wait(
        "the existing nodes Ready", lambda: sum(_ready(n) for n in _items(cp, "/api/v1/nodes")) == len(names)
    )
    pods = sorted(case.pods, key=lambda p: "nodeName" not in p["spec"])
    _apply(cp, [p for p in pods if "nodeName" in p["spec"]])
    pinned = sum(1 for p in pods if "nodeName" in p["spec"])
    _wait("the pinned pods Running", lambda: _running(cp) == pinned)
    _apply(cp, [p for p in pods if "nodeName" not in p["spec"]])
    _wait("the pending pods decided by kube-scheduler", lambda: _undecided(cp) == 0)
    cp.start_cluster_autoscaler(binary, _flags(case), CA_NAMESPACE)
    log = cp.logs / "cluster-autoscaler.log"
    _wait("cluster-autoscaler's first loop", lambda: _first_loop(cp, log), 60)
    return _watch(cp, case, log, names)


def _first_loop(cp: ControlPlane, log: Path) -> bool:
    proc = cp.processes.get("cluster-autoscaler")
    if proc is None or proc.poll() is not None:
        raise RuntimeError(f"cluster-autoscaler exited:\n{cp.log_tail('cluster-autoscaler', 5)}")
    return FIRST_LOOP in _text(log)


def _text(log: Path) -> str:
    return log.read_text(errors="replace").replace("\0", "") if log.exists() else ""


def _running(cp: ControlPlane) -> int:
    return sum(
        1 for p in _items(cp, f"/api/v1/namespaces/{NAMESPACE}/pods") if p["status"].get("phase") == "Running"
    )


def _undecided(cp: ControlPlane) -> int:
    """Pods neither bound nor marked unschedulable by kube-scheduler."""
    n = 0
    for p in _items(cp, f"/api/v1/namespaces/{NAMESPACE}/pods"):
        conditions = {c["type"]: c for c in p["status"].get("conditions", [])}
        scheduled = conditions.get("PodScheduled")
        if not p["spec"].get("nodeName") and not (scheduled and scheduled.get("reason") == "Unschedulable"):
            n += 1
    return n


def _watch(cp: ControlPlane, case: AutoscalerCase, log: Path, existing: set[str]) -> Decisions:
    """Watch until the decision is in or the case's time is up. A scale-up is in once every pod is
    bound, or once it has scaled up and every pod still pending has its ``NotTriggerScaleUp`` Event:
    cluster-autoscaler sends that Event only in a loop without a scale-up attempt, and only to the
    pods no node group can help (``EventingScaleUpStatusProcessor``, ``GetRemainingPods``), so no
    further scale-up can come. No scale-up: every pending pod has its Event. A scale-down is known
    only when the case's time is up (nodes go after ``scale-down-unneeded-time``); a removal
    cluster-autoscaler has started by then (``Scale-down: removing node``) is waited for, so that a
    slow drain on a loaded machine is not read as no removal."""
    started = time.monotonic()
    while time.monotonic() - started < WATCH_S[case.kind]:
        time.sleep(POLL_S)
        pods = _items(cp, f"/api/v1/namespaces/{NAMESPACE}/pods")
        pending = {p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")}
        if case.kind == "scale-up" and not pending:
            break
        if case.kind == "scale-down" or not pending <= set(_not_triggered(cp)):
            continue
        if case.kind == "no-scale-up" or SCALE_UP_LINE.search(_text(log)) is not None:
            break
    if case.kind == "scale-down":
        removing = set(SCALE_DOWN_LINE.findall(_text(log)))
        _wait("the nodes cluster-autoscaler removes gone", lambda: not removing & _node_names(cp), REMOVAL_S)
    cp.stop_cluster_autoscaler()
    return _read(cp, case, log, existing)


def _node_names(cp: ControlPlane) -> set[str]:
    return {n["metadata"]["name"] for n in _items(cp, "/api/v1/nodes")}


def _not_triggered(cp: ControlPlane) -> dict[str, str]:
    """Each pod's first ``NotTriggerScaleUp`` message."""
    events = sorted(
        (
            e
            for e in _items(cp, f"/api/v1/namespaces/{NAMESPACE}/events")
            if e.get("reason") == "NotTriggerScaleUp"
        ),
        key=lambda e: e.get("firstTimestamp") or e.get("eventTime") or "",
    )
    out: dict[str, str] = {}
    for e in events:
        out.setdefault(e["involvedObject"]["name"], e["message"])
    return out


def _read(cp: ControlPlane, case: AutoscalerCase, log: Path, existing: set[str]) -> Decisions:
    out = Decisions()
    size = {p["metadata"]["name"]: p["spec"].get("replicas", 0) for p in case.pools}
    for line in _text(log).splitlines():
        if (m := SCALE_UP_LINE.search(line)) is not None:
            group, new = m.group(1), int(m.group(2))
            out.scale_ups.append((group, new - size.get(group, 0)))
            size[group] = new
    out.not_triggered = _not_triggered(cp)
    out.removed = sorted(existing - _node_names(cp))
    return out
