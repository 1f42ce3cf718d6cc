"""``gpufleet describe node``: find the node, read it from its source, and describe it
(``report.describe_node``).

Sources, as for ``describe pod`` (``describe_command``): ``--summary FILE`` (a saved ``summary.json``,
which keeps of a node its pool, GPU counts and times only: what it lacks is said); files whose Pod
documents carry a ``status`` (``kubectl get nodes,pods,events -A -o json``), the Node as the dump has it,
its non-terminated pods (``spec.nodeName``, phase neither Succeeded nor Failed, as kubectl's field
selector) and its Events, the pending pods explained by ``explain``; any other scenario (or the embedded
default), simulated here to its end, the node as it is then. Bad input, an unknown node: one line each
on stderr, exit status 2.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpufleet.experiments.describe_command import (
    DescribeError,
    described,
    is_pod,
    pod_key,
    read_summary,
    simulated,
    simulated_time,
)
from gpufleet.experiments.node_gpus import counted_gpus, ledger_gpus, pending_row
from gpufleet.gpus.devices import NodeDevices
from gpufleet.kube.documents import Document
from gpufleet.kube.explain import explain_scenario, this_node
from gpufleet.kube.explain_together import serving
from gpufleet.kube.load import scenario_from_documents
from gpufleet.kube.problems import Problems, ScenarioError
from gpufleet.model.pod_names import PodNameError
from gpufleet.model.resources import Resources, parse_resource_list, pod_requests
from gpufleet.model.scenario import Scenario
from gpufleet.report.describe import KUBECTL, SIMULATION, SUMMARY, dump_event, epoch, involves
from gpufleet.report.describe_node import NodeFacts, NodeStatusFacts, PodUse, described_node, rfc1123z
from gpufleet.scheduling.profile import ProfileError
from gpufleet.sim.summary import build_summary

#: the node names an unknown name's message lists at most
NAMES_SHOWN = 10
TERMINATED = ("Succeeded", "Failed")
NODE_LEASE_NAMESPACE = "kube-node-lease"


def describe_node(name: str, paths: Sequence[Path], summary_path: Path | None) -> dict[str, Any]:
    """The described node (``report.describe_node``'s record); ``DescribeError`` for anything that
    stops it."""
    return described(
        paths,
        summary_path,
        lambda path: _from_summary(name, read_summary(path, "nodes")),
        lambda given: _from_dump(name, given.documents, given.sources, given.problems),
        lambda given: _simulated(name, given.documents, given.sources, given.problems),
    )


def _unknown(name: str, names: Sequence[str]) -> DescribeError:
    shown = ", ".join(sorted(names)[:NAMES_SHOWN]) + (", ..." if len(names) > NAMES_SHOWN else "")
    return DescribeError([f"no node named {name} (nodes: {shown or 'none'})"])


def _namespaced(key: str) -> tuple[str, str]:
    namespace, _, name = key.partition("/")
    return namespace, name


def _pending(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pods still pending at the end of the run, not bound (``pods[]`` of ``summary.json``)."""
    return [
        p
        for p in summary["pods"]
        if p["phase"] == "Pending" and p["deleted_s"] is None and p["bound_s"] is None
    ]


def _from_summary(name: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    node = next((n for n in summary["nodes"] if n.get("name") == name), None)
    if node is None:
        raise _unknown(name, [str(n.get("name")) for n in summary["nodes"]])
    end = summary["end_time_s"]
    on = [
        p
        for p in summary["pods"]
        if p["node"] == name and p["phase"] not in TERMINATED and p["deleted_s"] is None
    ]
    facts = NodeFacts(
        SUMMARY, name, None, None, simulated_time(node.get("created_s")), None, None, None, None, None, end
    )
    pods = [PodUse(*_namespaced(p["name"]), None, None, end - p["created_s"]) for p in on]
    times = ", ".join(
        f"{label} {simulated_time(node.get(key))}"
        for label, key in (("ready", "ready_s"), ("GPUs ready", "gpu_ready_s"), ("deleted", "deleted_s"))
        if node.get(key) is not None
    )
    note = "summary.json keeps the devices each pod holds, not the node's free ones"
    held = [(p["name"], p["gpus"], p["devices"]) for p in on if p["gpus"]]
    gpus = counted_gpus(None, None, node.get("gpus"), held, note)
    if node.get("pool"):
        gpus["note"] += f"; pool {node['pool']}"
    if times:
        gpus["note"] += f"; {times}"
    pending = [
        pending_row(p["name"], p["gpus"], None, p["message"], (p.get("diagnosis") or {}).get("hints") or [])
        for p in _pending(summary)
    ]
    gpufleet = {
        "gpus": gpus,
        "pending": pending,
        "pending_note": "summary.json keeps no per-node reasons; shown: the scheduler's message",
    }
    return described_node(facts, pods, None, gpufleet)


def _simulated(
    name: str, documents: list[Document], sources: list[str], problems: Problems
) -> dict[str, Any]:
    sim = simulated(documents, sources, problems)
    record = sim.nodes.get(name)
    if record is None:
        raise _unknown(name, list(sim.nodes))
    summary = build_summary(sim)
    i = sim.state.index.get(name)
    end = sim.end_time
    if i is None:  # the node was deleted during the run: its summary record is what is left of it
        return _from_summary(name, summary)
    node = sim.state.nodes[i]
    ready = {
        "type": "Ready",
        "status": node.ready,
        "last_heartbeat": "<not modelled>",
        "last_transition": simulated_time(record.ready_s if node.ready == "True" else None) or "<unknown>",
        "reason": "",
        "message": "",
    }
    facts = NodeFacts(
        SIMULATION,
        name,
        node.labels,
        None,
        simulated_time(record.created_s),
        [(t.key, t.value, t.effect) for t in node.taints],
        node.unschedulable,
        [ready],
        node.capacity,
        node.allocatable,
        end,
    )
    on = sorted(sim.state.pods_on[i].values(), key=lambda a: a.pod.key)
    pods = [
        PodUse(
            a.pod.namespace,
            a.pod.name,
            a.pod.requests,
            None,
            end - sim.records[a.pod.key].creation_timestamp_s,
        )
        for a in on
    ]
    pending = []
    for p in _pending(summary):
        pod = sim.records[p["name"]].pod
        owner = serving(pod, sim.schedulers)
        here = None if owner is None else this_node(sim.state, owner, pod, i)
        hints = (p.get("diagnosis") or {}).get("hints") or []
        pending.append(pending_row(p["name"], p["gpus"], here, p["message"], hints))
    gpus = ledger_gpus(sim.cluster.devices_of(name), node.labels)
    if dra := int(sim.cluster.dra_gpus_per_node()[i]):
        gpus["note"] = f"{dra} GPUs published as DRA devices (ResourceSlices) are not listed here"
    gpufleet = {"gpus": gpus, "pending": pending}
    return described_node(facts, pods, None, gpufleet)


def _from_dump(
    name: str, documents: Sequence[Document], sources: list[str], problems: Problems
) -> dict[str, Any]:
    nodes = {str((d.body.get("metadata") or {}).get("name")): d.body for d in documents if _is_node(d)}
    body = nodes.get(name)
    if body is None:
        raise _unknown(name, list(nodes))
    try:
        scenario = scenario_from_documents(list(documents), sources, problems)
    except ScenarioError as exc:
        raise DescribeError(exc.problems) from None
    model = next(n for n in scenario.nodes if n.name == name)
    now = time.time()
    meta, spec, status = body.get("metadata") or {}, body.get("spec") or {}, body.get("status") or {}
    facts = NodeFacts(
        KUBECTL,
        name,
        dict(meta.get("labels") or {}),
        dict(meta.get("annotations") or {}),
        _stamp(meta.get("creationTimestamp")),
        [(t.get("key", ""), t.get("value", ""), t.get("effect", "")) for t in spec.get("taints") or []],
        bool(spec.get("unschedulable")),
        [_condition(c) for c in status.get("conditions") or [] if isinstance(c, Mapping)],
        model.capacity,
        model.allocatable if status.get("allocatable") else None,
        status=_status_facts(name, spec, status, documents),
    )
    requests = {bare.pod.key: bare.pod.requests for bare in scenario.pods}
    on = [
        d.body
        for d in documents
        if is_pod(d)
        and (d.body.get("spec") or {}).get("nodeName") == name
        and (d.body.get("status") or {}).get("phase") not in TERMINATED
    ]
    pods = [_dumped_pod(pod, requests.get(pod_key(pod), {}), now) for pod in on]
    events = sorted(
        (
            dump_event(d.body, now)
            for d in documents
            if d.body.get("kind") == "Event" and involves(d.body, None, name, "Node")
        ),
        key=lambda e: -(e["age_s"] or 0),
    )
    devices = NodeDevices.of(model)
    held: list[tuple[str, float, Sequence[str]]] = [
        (pod_key(p), float(sum(requests.get(pod_key(p), {}).get(r, 0) for r in devices.units)), [])
        for p in on
    ]
    units = float(sum(len(u) for u in devices.units.values()))
    note = "a kubectl dump does not say which device each pod holds: the kubelet's device manager keeps that"
    gpus = counted_gpus(devices, facts.labels, units, [h for h in held if h[1]], note)
    return described_node(facts, pods, events, {"gpus": gpus, **_explained(scenario, name)})


def _explained(scenario: Scenario, name: str) -> dict[str, Any]:
    """The dump's pending pods as ``explain`` judges them, with what keeps each off this node."""
    try:
        explained = explain_scenario(scenario, node=name)
    except (ScenarioError, ProfileError, PodNameError) as exc:
        return {"pending": [], "pending_note": f"gpufleet cannot explain the pending pods: {exc}"}
    rows = []
    for e in explained:
        hints = [f"cannot judge: {s} is not modelled" for s in e["cannot_judge"]]
        hints += e["diagnosis"]["hints"] if e.get("diagnosis") else []
        gpus = e["diagnosis"]["gpus_requested"] if e.get("diagnosis") else 0
        here = name in e["equally_good_nodes"]
        rows.append(pending_row(e["pod"], gpus, e.get("this_node"), e["message"], hints, here))
    return {"pending": rows}


def _status_facts(
    name: str, spec: Mapping[str, Any], status: Mapping[str, Any], documents: Sequence[Document]
) -> NodeStatusFacts:
    """What only the dump holds of the node: its addresses, ``nodeInfo``, pod CIDRs, provider ID, and its
    Lease (``kube-node-lease/<node>``) where the dump has it."""
    lease = next(
        (
            d.body.get("spec") or {}
            for d in documents
            if d.body.get("kind") == "Lease"
            and (d.body.get("metadata") or {}).get("namespace") == NODE_LEASE_NAMESPACE
            and (d.body.get("metadata") or {}).get("name") == name
        ),
        None,
    )
    info = status.get("nodeInfo") or {}
    return NodeStatusFacts(
        [
            (str(a.get("type")), str(a.get("address")))
            for a in status.get("addresses") or []
            if isinstance(a, Mapping)
        ],
        {str(k): str(v) for k, v in info.items()} if isinstance(info, Mapping) else {},
        str(spec.get("podCIDR") or ""),
        [str(c) for c in spec.get("podCIDRs") or []],
        str(spec.get("providerID") or ""),
        None
        if lease is None
        else (
            str(lease.get("holderIdentity") or "<unset>"),
            _stamp(lease.get("acquireTime")) or "<unset>",
            _stamp(lease.get("renewTime")) or "<unset>",
        ),
    )


def _is_node(document: Document) -> bool:
    return document.body.get("apiVersion") == "v1" and document.body.get("kind") == "Node"


def _stamp(value: object) -> str | None:
    """An RFC 3339 time of the dump as kubectl describe writes it (``time.RFC1123Z``)."""
    at = epoch(value)
    return None if at is None else rfc1123z(datetime.fromtimestamp(at, UTC))


def _condition(c: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": c.get("type"),
        "status": c.get("status"),
        "last_heartbeat": _stamp(c.get("lastHeartbeatTime")) or "<unknown>",
        "last_transition": _stamp(c.get("lastTransitionTime")) or "<unknown>",
        "reason": c.get("reason") or "",
        "message": c.get("message") or "",
    }


def _dumped_pod(body: Mapping[str, Any], requests: Resources, now: float) -> PodUse:
    """A pod of the dump: its requests as gpufleet reads them (``PodRequests``), its limits as
    ``resourcehelper.PodLimits`` sums them (containers and sidecars, the larger of that and each init
    container, plus the overhead), its age."""
    meta, spec = body.get("metadata") or {}, body.get("spec") or {}

    def limits(container: Mapping[str, Any]) -> Resources:
        return parse_resource_list((container.get("resources") or {}).get("limits"), "")[0]

    init = [
        (limits(c), c.get("restartPolicy") == "Always")
        for c in spec.get("initContainers") or []
        if isinstance(c, Mapping)
    ]
    containers = [limits(c) for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    overhead = parse_resource_list(spec.get("overhead"), "")[0]
    created = epoch(meta.get("creationTimestamp"))
    return PodUse(
        str(meta.get("namespace") or "default"),
        str(meta.get("name")),
        dict(requests),
        pod_requests(containers, init, overhead),
        None if created is None else now - created,
    )
