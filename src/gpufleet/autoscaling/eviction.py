"""The grace period cluster-autoscaler's drain evicts a pod with (``core/scaledown/actuation/drain.go``,
``Evictor.evictPod``): the pod's ``terminationGracePeriodSeconds``, cut to ``--max-graceful-termination-sec``
(600 by default) when that is above 0 (``if maxTermination > 0 && termination > maxTermination``). The drain
then waits for the pods to go (``waitPodsToDisappear``) before the node is deleted.

Not modelled: ``--drain-priority-config`` (eviction in priority groups, each with its own grace period),
which upstream will not take together with ``--max-graceful-termination-sec``.
"""

from __future__ import annotations

from gpufleet.model.pod import Pod


def eviction_grace_s(pod: Pod, max_graceful_termination_s: int) -> float:
    """The grace period the eviction gives ``pod``."""
    grace = pod.termination_grace_s
    if max_graceful_termination_s > 0 and grace > max_graceful_termination_s:
        return float(max_graceful_termination_s)
    return grace
