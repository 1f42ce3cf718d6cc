"""``gpufleet describe node``: one node in ``kubectl describe node``'s layout, then gpufleet's own part.

Mirrors ``k8s.io/kubectl`` v0.34.10 ``pkg/describe/describe.go`` ``describeNode``: Name, Roles
(``findNodeRoles``), Labels and Annotations (``printLabelsMultiline``), CreationTimestamp (RFC 1123 with
a numeric zone), Taints (``printNodeTaintsMultiline``: sorted by effect then key, ``Taint.ToString``),
Unschedulable, Conditions, Capacity and Allocatable (sorted by name), the Non-terminated Pods table and
Allocated resources (``describeNodeResource``: each pod's CPU and memory requests and limits with their
share of allocatable -- capacity where the node has no allocatable -- cut to a whole percent as Go's
``int64(float64)`` does; the totals of cpu, memory and ephemeral-storage with that share, hugepages with
it, extended resources such as ``nvidia.com/gpu`` without it), Events (``DescribeEvents``). kubectl's
columns are laid out as its ``tabwriter`` (padding 2) lays them out; a pod's Age counts back from the
end of the run (a simulation) or from now (a dump), written as ``describe pod`` writes its Events'
ages. A dump's node also shows its Lease (``describeNodeLease``, where the dump holds the node's Lease in
``kube-node-lease``), Addresses, System Info (``status.nodeInfo``), PodCIDR(s) and ProviderID; a simulated
node has none of them (``<not modelled>``).

Below, gpufleet's part (``report.describe_node_gpus``): the node's GPU devices as gpufleet holds them and,
for each pending pod, what keeps it off this node (``kube.explain.node_needs``).

What a source does not hold (a simulated node has no creation timestamp of its own, a summary keeps no
labels, gpufleet models no CPU or memory limits) is said where it would be shown, never filled in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from gpufleet.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    HUGEPAGES_PREFIX,
    MEMORY,
    PODS,
    Resources,
    format_units,
    is_overcommittable,
)
from gpufleet.report._format import kubectl_age
from gpufleet.report.describe import NOT_KNOWN, aligned, events_lines
from gpufleet.report.describe_node_gpus import gpufleet_lines

#: ``LabelNodeRolePrefix`` and ``NodeLabelRole`` (kubectl ``findNodeRoles``)
ROLE_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"
#: ``IsStandardContainerResourceName``'s names (hugepages-* besides)
STANDARD = (CPU, MEMORY, EPHEMERAL_STORAGE)
#: the tabwriter's padding in kubectl's ``tabbedString``
PADDING = 2


@dataclass(frozen=True)
class NodeFacts:
    """What a source holds of the Node object; None where it holds nothing of a field."""

    source: str
    name: str
    labels: Mapping[str, str] | None
    annotations: Mapping[str, str] | None
    created: str | None  # already written as the source knows it
    taints: Sequence[tuple[str, str, str]] | None  # (key, value, effect)
    unschedulable: bool | None
    conditions: Sequence[Mapping[str, Any]] | None  # type, status, heartbeat, transition, reason, message
    capacity: Resources | None
    allocatable: Resources | None
    end_time_s: float | None = None
    #: what only a dump holds (None: the source holds none of it, a simulated node or a summary)
    status: NodeStatusFacts | None = None


@dataclass(frozen=True)
class NodeStatusFacts:
    """A dumped Node's addresses, ``status.nodeInfo``, ``spec.podCIDR(s)`` and ``providerID``, and its Lease
    in ``kube-node-lease`` where the dump holds one (holder, acquire and renew times as kubectl writes them;
    None: not in the dump)."""

    addresses: Sequence[tuple[str, str]]
    system_info: Mapping[str, str]
    pod_cidr: str
    pod_cidrs: Sequence[str]
    provider_id: str
    lease: tuple[str, str, str] | None


@dataclass(frozen=True)
class PodUse:
    """A non-terminated pod on the node: its requests and, where known, its limits (None: the source
    holds no CPU or memory limits; those of the other resources equal their requests, as the API server
    requires), its age; ``requests`` None where the source holds no requests."""

    namespace: str
    name: str
    requests: Resources | None
    limits: Resources | None
    age_s: float | None


def rfc1123z(stamp: datetime) -> str:
    """Go's ``time.RFC1123Z`` (``Mon, 02 Jan 2006 15:04:05 -0700``), in UTC."""
    return stamp.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S %z")


def roles(labels: Mapping[str, str]) -> list[str]:
    """kubectl's ``findNodeRoles``: the suffixes of ``node-role.kubernetes.io/<role>`` labels and the
    value of ``kubernetes.io/role``, sorted and unique."""
    found = {k.removeprefix(ROLE_PREFIX) for k in labels if k.startswith(ROLE_PREFIX) and k != ROLE_PREFIX}
    found |= {v for k, v in labels.items() if k == ROLE_LABEL and v}
    return sorted(found)


def taint_text(key: str, value: str, effect: str) -> str:
    """``Taint.ToString`` (``k8s.io/api/core/v1/taint.go``)."""
    if not effect:
        return f"{key}={value}:" if value else key
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def percent(part: int, whole: int) -> int:
    """``int64(float64(part) / float64(whole) * 100)``; 0 where ``whole`` is 0 (as kubectl's totals)."""
    return int(part / whole * 100) if whole else 0


def _allocatable(facts: NodeFacts) -> Resources:
    """``describeNodeResource``: allocatable, capacity where the node has none."""
    return dict(facts.allocatable or facts.capacity or {})


def _limit(pod: PodUse, resource: str) -> int | None:
    """The pod's limit of ``resource``; where its limits are not known, its request for a resource that
    may not be overcommitted (``helper.IsOvercommitAllowed``: the API server makes them equal), None for
    the others."""
    if pod.limits is not None:
        return pod.limits.get(resource, 0)
    if pod.requests is not None and not is_overcommittable(resource):
        return pod.requests.get(resource, 0)
    return None


def _cell(resource: str, value: int | None, whole: int | None, unknown: str) -> str:
    """``%s (%d%%)`` as kubectl writes a quantity and its share; ``%s`` where ``whole`` is None."""
    if value is None:
        return unknown
    text = format_units(resource, value)
    return text if whole is None else f"{text} ({percent(value, whole)}%)"


def pod_rows(facts: NodeFacts, pods: Sequence[PodUse]) -> list[dict[str, Any]]:
    """The Non-terminated Pods table's rows: CPU and memory requests and limits with their share of
    allocatable (``describeNodeResource``)."""
    unknown = NOT_KNOWN[facts.source]
    allocatable = _allocatable(facts)
    rows = []
    for pod in pods:
        row: dict[str, Any] = {"namespace": pod.namespace, "name": pod.name}
        for resource in (CPU, MEMORY):
            whole = allocatable.get(resource, 0)
            request = None if pod.requests is None else pod.requests.get(resource, 0)
            row[f"{resource}_requests"] = _cell(resource, request, whole, unknown)
            row[f"{resource}_limits"] = _cell(resource, _limit(pod, resource), whole, unknown)
        row["age_s"] = pod.age_s
        rows.append(row)
    return rows


def allocated_rows(facts: NodeFacts, pods: Sequence[PodUse]) -> list[dict[str, str]] | None:
    """Allocated resources (``describeNodeResource``, ``getPodsTotalRequestsAndLimits``): cpu, memory,
    ephemeral-storage and hugepages with their share of allocatable, then the extended resources the node
    has, sorted, without; None where the source holds no requests."""
    if any(pod.requests is None for pod in pods):
        return None
    unknown = NOT_KNOWN[facts.source]
    allocatable = _allocatable(facts)
    huge = sorted(r for r in allocatable if r.startswith(HUGEPAGES_PREFIX))
    extended = sorted(
        r for r in allocatable if r not in (*STANDARD, PODS) and not r.startswith(HUGEPAGES_PREFIX)
    )
    rows = []
    for resource in (*STANDARD, *huge, *extended):
        whole = None if resource in extended else allocatable.get(resource, 0)
        requested = sum((pod.requests or {}).get(resource, 0) for pod in pods)
        limits = [_limit(pod, resource) for pod in pods]
        limited = None if None in limits else sum(v or 0 for v in limits)
        rows.append(
            {
                "resource": resource,
                "requests": _cell(resource, requested, whole, unknown),
                "limits": _cell(resource, limited, whole, unknown),
            }
        )
    return rows


def described_node(
    facts: NodeFacts,
    pods: Sequence[PodUse],
    events: Sequence[Mapping[str, Any]] | None,
    gpufleet: Mapping[str, Any],
) -> dict[str, Any]:
    """The node's record (what ``-o json`` and ``-o yaml`` print): kubectl's fields, then ``gpufleet``
    (``report.describe_node_gpus``: its devices and the pending pods)."""
    resources = {"capacity": facts.capacity, "allocatable": facts.allocatable}
    return {
        "source": facts.source,
        "name": facts.name,
        "roles": None if facts.labels is None else roles(facts.labels),
        "labels": None if facts.labels is None else dict(facts.labels),
        "annotations": None if facts.annotations is None else dict(facts.annotations),
        "created": facts.created,
        "taints": None
        if facts.taints is None
        else [taint_text(*t) for t in sorted(facts.taints, key=lambda t: f"{t[2]},{t[0]}")],
        "unschedulable": facts.unschedulable,
        "conditions": None if facts.conditions is None else [dict(c) for c in facts.conditions],
        **{
            label: None if values is None else {r: format_units(r, v) for r, v in sorted(values.items())}
            for label, values in resources.items()
        },
        **_status_record(facts.status),
        "pods": pod_rows(facts, pods),
        "allocated": allocated_rows(facts, pods),
        "events": None if events is None else list(events),
        "end_time_s": facts.end_time_s,
        "gpufleet": dict(gpufleet),
    }


#: ``describeNode``'s System Info lines, each with its ``status.nodeInfo`` field
SYSTEM_INFO = (
    ("Machine ID", "machineID"),
    ("System UUID", "systemUUID"),
    ("Boot ID", "bootID"),
    ("Kernel Version", "kernelVersion"),
    ("OS Image", "osImage"),
    ("Operating System", "operatingSystem"),
    ("Architecture", "architecture"),
    ("Container Runtime Version", "containerRuntimeVersion"),
    ("Kubelet Version", "kubeletVersion"),
    ("Kube-Proxy Version", "kubeProxyVersion"),
)


def _status_record(status: NodeStatusFacts | None) -> dict[str, Any]:
    if status is None:
        return {"addresses": None, "system_info": None, "pod_cidrs": None, "provider_id": None, "lease": None}
    lease = status.lease
    return {
        "addresses": [{"type": t, "address": a} for t, a in status.addresses],
        "system_info": {label: status.system_info.get(key, "") for label, key in SYSTEM_INFO},
        "pod_cidr": status.pod_cidr,
        "pod_cidrs": list(status.pod_cidrs),
        "provider_id": status.provider_id,
        "lease": None
        if lease is None
        else {"holder_identity": lease[0], "acquire_time": lease[1], "renew_time": lease[2]},
    }


def tabbed(rows: Sequence[Sequence[str]]) -> list[str]:
    """Lines as Go's ``text/tabwriter`` (padding 2) writes tab-separated cells: each cell but a line's last
    padded to its column's widest (over the lines that have a cell after it)."""
    widths: dict[int, int] = {}
    for row in rows:
        for c, cell in enumerate(row[:-1]):
            widths[c] = max(widths.get(c, 0), len(cell))
    return [
        ("".join(cell.ljust(widths[c] + PADDING) for c, cell in enumerate(row[:-1])) + row[-1]).rstrip()
        for row in rows
    ]


def _listed(label: str, items: Sequence[str] | None, unknown: str) -> list[tuple[str, str]]:
    """``printLabelsMultiline`` / ``printNodeTaintsMultiline``: the first value beside the label, the
    others under it; ``<none>`` when empty."""
    if items is None:
        return [(f"{label}:", unknown)]
    first, *rest = list(items) or ["<none>"]
    return [(f"{label}:", first), *(("", item) for item in rest)]


def render_node(d: Mapping[str, Any], console: Console) -> None:
    """The record in ``kubectl describe node``'s layout, then gpufleet's part."""
    unknown = NOT_KNOWN[d["source"]]
    labels, annotations = d["labels"], d["annotations"]
    head = [
        ("Name:", d["name"]),
        ("Roles:", unknown if d["roles"] is None else ",".join(d["roles"]) or "<none>"),
        *_listed(
            "Labels", None if labels is None else [f"{k}={v}" for k, v in sorted(labels.items())], unknown
        ),
        *_listed(
            "Annotations",
            None if annotations is None else [f"{k}={v}" for k, v in sorted(annotations.items())],
            unknown,
        ),
        ("CreationTimestamp:", d["created"] or "<unknown>"),
        *_listed("Taints", d["taints"], unknown),
        ("Unschedulable:", unknown if d["unschedulable"] is None else str(d["unschedulable"]).lower()),
    ]
    lines = tabbed(head)
    if d["lease"] is not None:  # describeNodeLease: "Lease:" alone ends the tabwriter's column block
        lease = d["lease"]
        lines += [
            "Lease:",
            *tabbed(
                [
                    ("  HolderIdentity:", lease["holder_identity"]),
                    ("  AcquireTime:", lease["acquire_time"]),
                    ("  RenewTime:", lease["renew_time"]),
                ]
            ),
        ]
    lines += _conditions(d, unknown)
    if d["addresses"] is None:
        lines += tabbed([("Addresses:", unknown)])
    else:
        lines += ["Addresses:", *tabbed([(f"  {a['type']}:", a["address"]) for a in d["addresses"]])]
    for label in ("Capacity", "Allocatable"):
        values = d[label.lower()]
        if values is None:
            lines += tabbed([(f"{label}:", unknown)])
        elif values:
            lines += [f"{label}:", *aligned([(f"{r}:", v) for r, v in values.items()])]
    lines += _system_info(d, unknown) + _pods(d) + _allocated(d, unknown)
    events = d["events"]
    lines += events_lines(d) if events else tabbed([("Events:", unknown if events is None else "<none>")])
    lines += gpufleet_lines(d["gpufleet"], d["source"], d["end_time_s"])
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _system_info(d: Mapping[str, Any], unknown: str) -> list[str]:
    """System Info (``status.nodeInfo``), then PodCIDR, PodCIDRs and ProviderID where set."""
    info = d["system_info"]
    if info is None:
        return tabbed([("System Info:", unknown)])
    lines = ["System Info:", *tabbed([(f"  {label}:", value) for label, value in info.items()])]
    rows = [
        (label, value)
        for label, value in (
            ("PodCIDR:", d["pod_cidr"]),
            ("PodCIDRs:", ",".join(d["pod_cidrs"])),
            ("ProviderID:", d["provider_id"]),
        )
        if value
    ]
    return lines + (tabbed(rows) if rows else [])


def _conditions(d: Mapping[str, Any], unknown: str) -> list[str]:
    """kubectl's Conditions table; each cell of a row but the last followed by a space, as kubectl writes
    them (``"%v \\t%v \\t..."``)."""
    conditions = d["conditions"]
    if conditions is None:
        return tabbed([("Conditions:", unknown)])
    if not conditions:
        return []
    keys = ("type", "status", "last_heartbeat", "last_transition", "reason")
    rows = [
        ("Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"),
        ("----", "------", "-----------------", "------------------", "------", "-------"),
        *((*(f"{c.get(k) or ''} " for k in keys), str(c.get("message") or "")) for c in conditions),
    ]
    return ["Conditions:", *("  " + line for line in tabbed(rows))]


def _pods(d: Mapping[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("Non-terminated Pods:", f"({len(d['pods'])} in total)"),
        ("  Namespace", "Name", "", "CPU Requests", "CPU Limits", "Memory Requests", "Memory Limits", "Age"),
        ("  ---------", "----", "", "------------", "----------", "---------------", "-------------", "---"),
    ]
    for p in d["pods"]:
        age = "<unknown>" if p["age_s"] is None else kubectl_age(max(p["age_s"], 0.0))
        cells = (p["cpu_requests"], p["cpu_limits"], p["memory_requests"], p["memory_limits"])
        rows.append((f"  {p['namespace']}", p["name"], "", *cells, age))
    return tabbed(rows)


def _allocated(d: Mapping[str, Any], unknown: str) -> list[str]:
    if d["allocated"] is None:
        return tabbed([("Allocated resources:", unknown)])
    rows = [("Resource", "Requests", "Limits"), ("--------", "--------", "------")]
    rows += [(a["resource"], a["requests"], a["limits"]) for a in d["allocated"]]
    return [
        "Allocated resources:",
        "  (Total limits may be over 100 percent, i.e., overcommitted.)",
        *("  " + line for line in tabbed(rows)),
    ]
