"""Volcano's scheduling objects (``scheduling.volcano.sh/v1beta1``): ``PodGroup`` and ``Queue``
(``staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go``).

- ``PodGroup`` (namespaced): ``minMember`` (a gang's size; 0 or absent reads as 1: a group of one),
  ``queue`` (default ``default``), ``minResources`` (validated as a resource list; the queue's check is
  made pod by pod, ``scheduling.plugins.volcano``), ``priorityClassName`` and ``minTaskMember`` (not
  modelled: warnings). Pods join it with the annotation ``scheduling.k8s.io/group-name: <name>``.
- ``Queue`` (cluster-scoped): ``capability`` is modelled (``VolcanoQueue``); ``reclaimable`` is read
  and changes nothing (Volcano's default actions, ``enqueue, allocate, backfill``, never reclaim);
  ``weight``, ``guarantee``, ``deserved``, ``parent`` and the rest are warnings.

``status`` is the scheduler's report and is not read. Any Volcano object in a scenario installs
Volcano: ``kube.load`` then runs its scheduler (``scheduling.plugins.volcano.volcano_scheduler``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube import pod_annotations, resource_lists
from gpufleet.kube.objects import Meta, mapping
from gpufleet.kube.problems import Reporter, invalid
from gpufleet.model.resources import Resources
from gpufleet.model.workloads import Created, PodGroup
from gpufleet.scheduling.plugins.volcano import DEFAULT_QUEUE

_POD_GROUP_READ = ("minMember", "queue", "minResources")
_QUEUE_READ = ("capability", "reclaimable")


def _count(spec: Mapping[str, Any], field: str, report: Reporter) -> int | None:
    value = spec.get(field)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        report.error(f"spec.{field}", invalid(value, "must be an integer"))
        return None
    if value < 0:
        report.error(f"spec.{field}", invalid(value, "must be greater than or equal to 0"))
    return value


def pod_group(meta: Meta, body: Mapping[str, Any], report: Reporter, order: int) -> PodGroup:
    spec = mapping(body.get("spec"))
    min_member = _count(spec, "minMember", report) or 1
    queue = spec.get("queue") or DEFAULT_QUEUE
    if not isinstance(queue, str):
        report.error("spec.queue", invalid(queue, "must be a string"))
        queue = DEFAULT_QUEUE
    if spec.get("minResources") is not None:
        resource_lists.read(spec["minResources"], report, "spec.minResources")
    report.at("spec").unmodelled_fields(spec, sorted(set(spec) - set(_POD_GROUP_READ)))
    own = pod_annotations.read(meta.annotations, report.at("metadata"), pod_annotations.WORKLOAD_KEYS)
    created = Created(pod_annotations.number(own, pod_annotations.SUBMIT_AT) or 0.0, order)
    return PodGroup(meta.name, meta.namespace, min_member, None, created, queue)


def queue(body: Mapping[str, Any], report: Reporter) -> Resources | None:
    """A Queue's ``capability`` (None: no limit)."""
    spec = mapping(body.get("spec"))
    reclaimable = spec.get("reclaimable")
    if reclaimable is not None and not isinstance(reclaimable, bool):
        report.error("spec.reclaimable", invalid(reclaimable, "must be a boolean"))
    report.at("spec").unmodelled_fields(spec, sorted(set(spec) - set(_QUEUE_READ)))
    capability = spec.get("capability")
    if capability is None:
        return None
    return resource_lists.read(capability, report, "spec.capability")
