"""scheduler-plugins' ``PodGroup`` (``scheduling.x-k8s.io/v1alpha1``): a gang's size and timeout.

Fields of ``sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1.PodGroupSpec``:
``minMember`` (at least 1; 1 when absent), ``scheduleTimeoutSeconds`` and ``minResources`` (a
resource list: Coscheduling's PreFilter checks the cluster can hold it). ``status`` is what the
controller reports and is not read. ``gpufleet.io/submit-at`` on the PodGroup sets when it is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from gpufleet.kube import pod_annotations, resource_lists
from gpufleet.kube.objects import Meta
from gpufleet.kube.problems import Reporter
from gpufleet.kube.spec_model import NonNegativeInt, SpecModel, validate
from gpufleet.model.workloads import Created, PodGroup


class PodGroupSpec(SpecModel):
    min_member: Annotated[int, Field(ge=1)] = 1
    schedule_timeout_seconds: NonNegativeInt | None = None
    min_resources: dict[str, Any] | None = None


def pod_group(meta: Meta, body: Mapping[str, Any], report: Reporter, order: int) -> PodGroup:
    spec = validate(PodGroupSpec, body.get("spec") or {}, report, "spec") or PodGroupSpec()
    min_resources = None
    if spec.min_resources is not None:
        min_resources = resource_lists.read(spec.min_resources, report, "spec.minResources")
    own = pod_annotations.read(meta.annotations, report.at("metadata"), pod_annotations.WORKLOAD_KEYS)
    timeout = spec.schedule_timeout_seconds
    return PodGroup(
        meta.name,
        meta.namespace,
        min_member=spec.min_member,
        schedule_timeout_s=float(timeout) if timeout is not None else None,
        created=Created(pod_annotations.number(own, pod_annotations.SUBMIT_AT) or 0.0, order),
        min_resources=min_resources,
    )
