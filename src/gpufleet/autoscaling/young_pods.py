"""cluster-autoscaler's young pods (``core/static_autoscaler.go``, ``filterOutYoungPods``): after the pod list
processors (``filterOutSchedulable`` among them), a pending pod no older than its scale-up delay is left out
of scale-up: it triggers none, and gets no ``NotTriggerScaleUp`` event. Its delay is
``--new-pod-scale-up-delay`` (0 by default), or its annotation
``cluster-autoscaler.kubernetes.io/pod-scale-up-delay`` (a Go duration) when that parses and is not shorter
(a shorter one, or one that does not parse, is logged and the flag's delay kept). The pod is old enough once
``podAge > podScaleUpDelay``, its age counted from its ``creationTimestamp``.

A delay of 0 holds no pod back: upstream's loop reads a pod as unschedulable only after a scheduling attempt
that took time after its creation, so its age is never 0; gpufleet's clock can put both at one instant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpufleet.model.pod import Pod
from gpufleet.model.quantity import parse_go_duration

POD_SCALE_UP_DELAY = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"


def scale_up_delay_s(pod: Pod, new_pod_scale_up_delay_s: float) -> float:
    """The pod's scale-up delay: its annotation's when it parses and is at least the flag's, else the
    flag's."""
    written = pod.annotations.get(POD_SCALE_UP_DELAY)
    annotated = parse_go_duration(written) if written is not None else None
    if annotated is None or annotated < new_pod_scale_up_delay_s:
        return new_pod_scale_up_delay_s
    return annotated


def young_pods(
    pods: Iterable[Pod], created_s: Mapping[str, float], now: float, new_pod_scale_up_delay_s: float
) -> dict[str, float]:
    """The pods too young at ``now`` to trigger a scale-up (``created_s``: each pod's creation time, by key),
    each with the time after which it is old enough."""
    out: dict[str, float] = {}
    for pod in pods:
        delay = scale_up_delay_s(pod, new_pod_scale_up_delay_s)
        old_after = created_s[pod.key] + delay
        if delay > 0 and now <= old_after:
            out[pod.key] = old_after
    return out
