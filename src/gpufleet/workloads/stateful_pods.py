"""A StatefulSet's pods, as ``pkg/controller/statefulset/stateful_set_utils.go`` (Kubernetes 1.34) names,
labels and judges them: what a StatefulSet of its own (``workloads.statefulset``) and a LeaderWorkerSet's
StatefulSets (``workloads.leaderworkerset``) share.

- ``newStatefulSetPod``: the template's pod named ``<set>-<ordinal>`` (``getPodName``), owned by the
  StatefulSet, labelled ``statefulset.kubernetes.io/pod-name: <pod>`` and ``apps.kubernetes.io/pod-index:
  <ordinal>`` (``updateIdentity``; ``PodIndexLabel`` is GA in 1.34). ``controller-revision-hash``
  (``setPodRevision``) is left out: gpufleet does not roll templates (no ControllerRevisions).
- ``getParentNameAndOrdinal``: a pod's parent and ordinal from its name (``(.*)-([0-9]+)$``, an int32);
  ``isMemberOf``, ``identityMatches``.
- ``isRunningAndReady``, ``isRunningAndAvailable`` (``podutil.IsPodAvailable``: Ready for
  ``minReadySeconds``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufleet.model.pod import OwnerRef, Pod

#: ``apps.StatefulSetPodNameLabel`` and ``apps.PodIndexLabel``
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_STATEFUL_POD = re.compile(r"(.*)-([0-9]+)")
_INT32_MAX = 2**31 - 1


def parent_and_ordinal(pod_name: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: the parent StatefulSet's name and the ordinal, from the pod's name;
    ``("", -1)`` for a name that is not ``<parent>-<digits>``; the ordinal -1 where it is no int32."""
    found = _STATEFUL_POD.fullmatch(pod_name)
    if found is None:
        return "", -1
    ordinal = int(found.group(2))
    return found.group(1), ordinal if ordinal <= _INT32_MAX else -1


def is_member_of(set_name: str, pod_name: str) -> bool:
    """``isMemberOf``: the pod's name makes it one of the set's."""
    return parent_and_ordinal(pod_name)[0] == set_name


def identity_matches(set_name: str, namespace: str, pod: Pod) -> bool:
    """``identityMatches``: a valid ordinal, the set's name as parent, the set's namespace, and the
    pod-name label naming the pod."""
    parent, ordinal = parent_and_ordinal(pod.name)
    return (
        ordinal >= 0
        and parent == set_name
        and pod.name == f"{set_name}-{ordinal}"
        and pod.namespace == namespace
        and pod.labels.get(POD_NAME_LABEL) == pod.name
    )


def stateful_pod(
    template: Pod, set_name: str, namespace: str, ordinal: int, labels: dict[str, str] | None = None
) -> Pod:
    """``newStatefulSetPod``: the pod of ordinal ``ordinal`` (with ``labels`` besides the template's, a
    LeaderWorkerSet's), owned by the StatefulSet ``set_name``, its identity labels set (``initIdentity``)."""
    name = f"{set_name}-{ordinal}"
    identity = {**(labels or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}
    return template.stamped(name, OwnerRef("StatefulSet", set_name), identity, namespace=namespace)


def running_and_ready(phase: str, ready: bool) -> bool:
    """``isRunningAndReady``: phase Running and the Ready condition True."""
    return phase == "Running" and ready


@dataclass
class Replica:
    """What the StatefulSet controller reads of one of its pods: its key, since when it is Running and Ready
    (None: not both; gpufleet's pod turns Ready only while it runs), and whether it is being deleted
    (``isTerminating``)."""

    key: str
    ready_s: float | None = None
    terminating: bool = False

    def available(self, min_ready_s: float, now: float) -> bool:
        """``isRunningAndAvailable`` (``podutil.IsPodAvailable``): Running and Ready, and with
        ``minReadySeconds`` Ready for that long. Upstream asks the Ready transition plus ``minReadySeconds``
        to be strictly before now; its sync comes a moment after the requeue it armed for that time, so here
        the time itself counts (the simulation's sync is at that instant)."""
        return self.ready_s is not None and (min_ready_s == 0 or self.ready_s + min_ready_s <= now)
