"""Changing a node's MIG configuration, the way the GPU Operator's MIG Manager does it (pure decisions).

Upstream, ``NVIDIA/mig-parted`` ``pkg/mig/reconfigure/reconfigure.go`` (``Reconfigure.Run``), when the node
label ``nvidia.com/mig.config`` changes:

1. if the selected configuration is already applied, ``nvidia.com/mig.config.state=success`` and nothing else;
2. state ``pending``; the GPU clients it manages are stopped by setting their deploy labels to
   ``paused-for-mig-change`` (device plugin, GPU Feature Discovery, DCGM, DCGM exporter) and it waits for
   their pods to go. With the device plugin gone the node advertises none of its GPU resources;
3. ``nvidia-mig-parted apply`` changes the MIG mode if needed, then the instances, on every GPU
   (``devices: all``); ``WITH_REBOOT`` reboots the node (state ``rebooting``) when the mode change needs it —
   gpufleet folds that into the change's duration;
4. the clients restart: the device plugin registers the new resources, GFD relabels the node, state
   ``success``. If the apply fails, the clients restart on the old layout and the state is ``failed``.

MIG Manager does not evict user pods: "MIG Manager requires that no user workloads are running on the GPUs
being configured" (GPU Operator docs, "GPU Operator with MIG"); draining them is the administrator's job, and
"if the GPU is busy when the reconfiguration is requested, the GPU Operator will fail to delete the MIG
instances" (Red Hat, "Multi-Instance GPU support with the GPU Operator v1.7.0"): ``nvidia-mig-parted`` cannot
destroy an instance a process holds (NVML ``In use by another client``). So a change says what the
administrator does first (:class:`gpufleet.model.mig_configs.MigConfigChange`): with ``drain`` the node is
cordoned and every pod holding its GPUs is evicted with its grace period; the label is set once they are
gone (``kubectl drain`` polls for their deletion every second) and the node is uncordoned when MIG Manager
reports. Without ``drain`` the label is set at once, and a pod still on the GPUs makes the change ``failed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpufleet.model.mig_configs import (
    Layout,
    MigConfigChange,
    MigManaged,
    config_layout,
    is_device_plugin_resource,
)
from gpufleet.model.pod import Pod

#: ``kubectl drain`` checks every second whether the pods it evicted are gone (``waitForDelete``).
DRAIN_POLL_S = 1.0


@dataclass(frozen=True)
class MigChangePlan:
    """What one node does for a :class:`MigConfigChange`."""

    config: str
    layout: Layout
    already_applied: bool  # mig-parted asserts the layout is in place: state ``success`` at once
    evict: tuple[str, ...]  # pods the administrator evicts first (``drain``), by key
    resources: dict[str, int]  # device-plugin resources advertised once the change succeeds
    labels: dict[str, str]  # GFD labels and ``nvidia.com/mig.config`` once it succeeds
    stale_labels: tuple[str, ...]  # GFD labels of the old layout that the new one does not set


def holds_gpus(pod: Pod) -> bool:
    """Whether the pod holds any of the node's device-plugin resources (a GPU, a replica, a MIG
    instance) or a fractional share of a GPU."""
    return pod.gpu_share is not None or any(
        is_device_plugin_resource(r) and n > 0 for r, n in pod.requests.items()
    )


def gpu_pods(pods: Iterable[Pod]) -> tuple[str, ...]:
    """Keys of the pods holding the node's GPUs, sorted: what must be gone before the change applies."""
    return tuple(sorted(p.key for p in pods if holds_gpus(p)))


def plan_change(
    mig: MigManaged,
    current: Layout,
    current_config: str | None,
    change: MigConfigChange,
    pods_on_node: Iterable[Pod],
) -> MigChangePlan:
    """The plan for one node now carrying ``current``, asked to apply ``change.config``."""
    layout = config_layout(change.config, mig.gpu_model)
    old = mig.labels(current, current_config)
    new = mig.labels(layout, change.config)
    return MigChangePlan(
        config=change.config,
        layout=layout,
        already_applied=layout == current,
        evict=gpu_pods(pods_on_node) if change.drain and layout != current else (),
        resources=mig.resources(layout),
        labels=new,
        stale_labels=tuple(sorted(set(old) - set(new))),
    )


def with_device_resources(allocatable: Mapping[str, int], devices: Mapping[str, int]) -> dict[str, int]:
    """A node's allocatable with its device-plugin resources replaced by ``devices`` (empty: none)."""
    kept = {r: n for r, n in allocatable.items() if not is_device_plugin_resource(r)}
    return {**kept, **devices}
