"""``gpufleet startup --calibrate``: the measured start-up as a scenario fragment, so the next what-if
starts from the cluster's own numbers.

Per node group, a ``NodePool`` (DESIGN.md) whose ``template`` is one of the group's nodes (its labels
but ``kubernetes.io/hostname``, its taints, its capacity and allocatable, the group's largest GPU
count) and whose ``provisioning`` holds what was measured, in ``NodePool.spec.provisioning``'s
stage names (``live.startup_summary.node_stages``): ``boot`` is the launch request (a pod's
``TriggeredScaleUp``) -> the Node object (the cloud's capacity, the boot and, in seed 000's order, the
driver: a cluster does not record them apart), ``join`` Node created -> Ready and ``devicePlugin``
Ready -> ``nvidia.com/gpu`` allocatable (a watch only). Each is the lognormal ``{median, p95}`` of
``lifecycle.distributions`` with the samples' nearest-rank median and p95; one sample, or samples all
equal, give that fixed duration; a median of 0 with a larger p95 is not a lognormal and is written as
the uniform ``{min, max}`` of the samples. Every figure carries a comment with its number of samples.

The pods' stages make a ``Change`` (``kube.change_kind``: the file is a change file for ``gpufleet
whatif``): per measured workload (the pods' controller, else the bare pod) one pod edit whose
``selector.owner`` is that controller and whose ``set.annotations`` are its readiness (last container
start -> Ready: model load and warm-up together) as ``gpufleet.io/warmup``, in the NodePools' figures,
and its largest measured image pull as ``gpufleet.io/image-size``; and, in ``set``,
``Simulation.spec.registry.bandwidth``: the median of size / pull time over the pulls (the kubelet's
``Pulled`` message, waiting excluded), which the comments list per image.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import yaml

from gpufleet.lifecycle.distributions import LogNormal
from gpufleet.live.startup_objects import GPU
from gpufleet.live.startup_records import StartupMeasurement
from gpufleet.live.startup_summary import GroupChain, chain_samples
from gpufleet.model.percentiles import nearest_rank

_HOSTNAME = "kubernetes.io/hostname"
_NOT_DNS = re.compile(r"[^a-z0-9.-]+")


def calibration_yaml(measurement: StartupMeasurement, group_key: str | None) -> str:
    """The scenario fragment (YAML text, NodePool documents with comments) of ``measurement``."""
    key = group_key or "the kwok provider's, GKE's, EKS's, AKS's or Karpenter's pool, or instance type"
    lines = [
        f"# gpufleet startup --calibrate: measured from {'a watch' if measurement.watched else 'a dump'}.",
        f"# Node groups by {key};",
        "# only the nodes that started in the measured window.",
        "# provisioning: boot = the launch request (TriggeredScaleUp) -> the Node object: capacity, boot",
        "# and (seed 000's order) driver, before the kubelet registers; 0 where the provider makes the Node",
        "# at once (kwok's). join = Node created -> Ready. devicePlugin = Ready -> nvidia.com/gpu",
        "# allocatable (a watch only). A stage not measured is left out.",
        "# A figure is the lognormal {median, p95} of its samples' nearest-rank median and p95.",
    ]
    chains = chain_samples(measurement.nodes, measurement.origin)
    if not chains:
        lines.append("# No node started in the measured window: no NodePool to calibrate.")
    for group, chain in chains.items():
        lines += ["---", *_node_pool(group, chain)]
    lines += _image_comments(measurement)
    lines += _change(measurement)
    return "\n".join(lines) + "\n"


def duration_spec(samples: Sequence[float]) -> tuple[str, str]:
    """A ``provisioning`` value (YAML flow text) for ``samples`` and the comment saying what it rests on."""
    count = f"{len(samples)} sample" + ("" if len(samples) == 1 else "s")
    median, p95 = nearest_rank(samples, 50), nearest_rank(samples, 95)
    if len(samples) < 2 or median == p95:
        why = "a single value, fixed" if len(samples) < 2 else "all alike, fixed"
        return _go(median), f"{count}: {why}"
    if median == 0:
        return (
            f"{{min: {_go(min(samples))}, max: {_go(max(samples))}}}",
            f"{count}: median 0, uniform over them",
        )
    spec = LogNormal(median, p95)
    return f"{{median: {_go(spec.median_s)}, p95: {_go(spec.p95_s)}}}", f"{count}, lognormal"


def _go(seconds: float) -> str:
    """Seconds in Go duration syntax, to the millisecond."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def _pool_name(group: str) -> str:
    name = _NOT_DNS.sub("-", group.lower()).strip("-.")
    return name or "pool"


def _node_pool(group: str, chain: GroupChain) -> list[str]:
    nodes = chain.nodes
    model = max(nodes, key=lambda node: (node.gpus, node.created, node.name))
    labels = {k: v for k, v in model.template["labels"].items() if k != _HOSTNAME}
    capacity = dict(model.template["capacity"])
    allocatable = dict(model.template["allocatable"] or capacity)
    if model.gpus:
        capacity[GPU] = allocatable[GPU] = str(int(model.gpus))
    template: dict[str, Any] = {"metadata": {"labels": labels}}
    if model.template["taints"]:
        template["spec"] = {"taints": model.template["taints"]}
    template["status"] = {"capacity": capacity, "allocatable": allocatable}
    document = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "NodePool",
        "metadata": {"name": _pool_name(group)},
        "spec": {"min": 0, "max": len(nodes), "template": template},
    }
    lines = [f"# node group {group}: {len(nodes)} node(s) ({', '.join(node.name for node in nodes)});"]
    lines.append("# max is the nodes seen: set the group's real maximum.")
    lines += yaml.safe_dump(document, sort_keys=False, default_flow_style=False).rstrip("\n").split("\n")
    measured = (("boot", chain.boot), ("join", chain.join), ("devicePlugin", chain.device_plugin))
    stages = [(name, samples) for name, samples in measured if samples]
    if stages:
        lines.append("  provisioning:")
        for name, samples in stages:
            value, comment = duration_spec(samples)
            lines.append(f"    {name}: {value}  # {comment}")
    else:
        lines.append("  # provisioning: no stage of this group's nodes was measured")
    return lines


def _image_comments(measurement: StartupMeasurement) -> list[str]:
    pulls: dict[str, list[tuple[float, int | None]]] = defaultdict(list)
    for pod in measurement.pods:
        for pull in pod.pulls:
            if not pull.present:
                pulls[pull.image].append((pull.pull_s, pull.size_bytes))
    lines = ["", "# Images (the kubelet's Pulled events; pull time without waiting for other pulls):"]
    if not pulls:
        return [*lines, "#   no image was pulled in the measured window"]
    for image, samples in sorted(pulls.items()):
        times = [t for t, _ in samples]
        sizes = [size for _, size in samples if size]
        size = f", {_size(max(sizes))}" if sizes else ""
        lines.append(
            f"#   {image}: {len(samples)} pull(s){size}; pull time median {_go(nearest_rank(times, 50))}, "
            f"p95 {_go(nearest_rank(times, 95))}"
        )
    return lines


def _size(size: float) -> str:
    return f"{size / 1e9:.2f}GB"


def _bandwidth(measurement: StartupMeasurement) -> list[str]:
    """``set``'s registry bandwidth (the median of size / pull time), or nothing without a sized pull."""
    rates = [
        pull.size_bytes / pull.pull_s
        for pod in measurement.pods
        for pull in pod.pulls
        if not pull.present and pull.size_bytes and pull.pull_s > 0
    ]
    if not rates:
        return ["  # set: no pull with its image size: the registry bandwidth is not measured"]
    return [
        "  set:",
        f"    Simulation.spec.registry.bandwidth: {nearest_rank(rates, 50) / 1e6:.1f}MB/s"
        f"  # median of size / pull time over {len(rates)} pull(s)",
    ]


#: namespace, controller "Kind/name" (None: a bare pod) and, for a bare pod, its name
_Workload = tuple[str, str | None, str | None]


def _change(measurement: StartupMeasurement) -> list[str]:
    readiness: dict[_Workload, list[float]] = defaultdict(list)
    images: dict[_Workload, list[tuple[int, str]]] = defaultdict(list)
    for pod in measurement.pods:
        namespace, name = pod.name.split("/", 1)
        workload = (namespace, pod.owner, None if pod.owner else name)
        if pod.working is not None:
            readiness[workload].append(pod.stages.get("readiness", 0.0))
        images[workload] += [(p.size_bytes, p.image) for p in pod.pulls if not p.present and p.size_bytes]
    lines = [
        "",
        "# The pods' start-up, a Change for gpufleet whatif (gpufleet simulate and validate refuse it):",
        "# per workload (the pods' controller), its pods and the pod templates of the controllers that",
        "# make them get gpufleet.io/warmup = readiness (last container start -> Ready: model load and",
        "# warm-up together, which the objects cannot separate: remove a gpufleet.io/model-size the",
        "# template has) and gpufleet.io/image-size = the largest image its pods pulled.",
        "---",
        "apiVersion: gpufleet.io/v1alpha1",
        "kind: Change",
        "metadata:",
        "  name: startup-calibration",
        "spec:",
    ]
    measured = sorted(
        (w for w in {*readiness, *images} if w in readiness or images[w]),
        key=lambda w: (w[0], w[1] or "", w[2] or ""),
    )
    if measured:
        lines.append("  pods:")
    else:
        lines.append("  # pods: no pod turned Ready or pulled a sized image in the measured window")
    for workload in measured:
        lines += _pod_edit(workload, readiness.get(workload, []), images.get(workload, []))
    return lines + _bandwidth(measurement)


def _pod_edit(workload: _Workload, readiness: list[float], images: list[tuple[int, str]]) -> list[str]:
    namespace, owner, name = workload
    lines = [f"  - selector:  # {owner or 'the pod'} in {namespace}", f"      namespace: {namespace}"]
    if owner is None:
        lines.append(f"      names: [{name}]")
    else:
        kind, _, owner_name = owner.partition("/")
        lines.append(f"      owner: {{kind: {kind}, name: {owner_name}}}")
    lines += ["    set:", "      annotations:"]
    if readiness:
        value, comment = duration_spec(readiness)
        lines.append(f"        gpufleet.io/warmup: {_quoted(value)}  # {comment}")
    else:
        lines.append("        # gpufleet.io/warmup: no pod of it turned Ready in the measured window")
    if images:
        size, image = max(images)
        lines.append(f"        gpufleet.io/image-size: {_size(size)}  # {image}, {len(images)} pull(s)")
    return lines


def _quoted(value: str) -> str:
    return f"'{value}'" if value.startswith("{") else value
