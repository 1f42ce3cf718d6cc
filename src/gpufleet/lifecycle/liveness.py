"""The kubelet's livenessProbe and container restarts, as time: when a hung process is killed, and how
long the container waits before it starts again.

The prober (``pkg/kubelet/prober/worker.go``) probes a container every ``periodSeconds`` from when its
worker starts (here: when the container starts), skipping the probes before ``initialDelaySeconds``
(``doProbe``); a hung process fails each probe once ``timeoutSeconds`` passes without an answer
(``pkg/kubelet/prober/prober.go``), and after ``failureThreshold`` failures in a row the kubelet kills the
container ("Container ... failed liveness probe, will be restarted", ``pkg/kubelet/kuberuntime``
``computePodActions``), giving it the probe's or else the pod's termination grace period. A probe that
takes longer than the period delays the next one (the worker's ticker drops the ticks it missed).

A container that ended starts again as ``ShouldContainerBeRestarted`` (``pkg/kubelet/container/helpers.go``)
says: never under ``restartPolicy: Never``, under ``OnFailure`` when it exited non-zero, under ``Always``
whatever its exit code (a killed one exits 137), after the kubelet's
back-off (``kuberuntime_manager.go`` ``doBackOff`` over ``k8s.io/client-go/util/flowcontrol``'s
``Backoff``, ``backOffPeriod`` 10 s, ``MaxContainerBackOff`` 300 s, ``pkg/kubelet/kubelet.go``): the first
restart at once, then 10 s, doubling to 5 min; a container that ran 10 min (twice the maximum) since its
last start has its back-off reset (``hasExpired``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpufleet.model.probes import LivenessProbe

#: ``backOffPeriod`` and ``MaxContainerBackOff`` (``pkg/kubelet/kubelet.go``)
BACK_OFF_S = 10.0
MAX_BACK_OFF_S = 300.0


def restarts_container(restart_policy: str, exit_code: int) -> bool:
    """``ShouldContainerBeRestarted`` for a container that exited with ``exit_code`` (the pod not deleted):
    ``Never`` never, ``OnFailure`` on a non-zero exit, ``Always`` on any."""
    if restart_policy == "OnFailure":
        return exit_code != 0
    return restart_policy == "Always"


def liveness_kill_s(probe: LivenessProbe, started_s: float, hung_s: float) -> float:
    """When the kubelet kills a container started at ``started_s`` whose process hung at ``hung_s``: the
    ``failureThreshold``-th failed probe from the first one after the hang (and after the initial delay)
    has timed out."""
    period = max(probe.period_s, probe.timeout_s)
    earliest = max(hung_s, started_s + probe.initial_delay_s)
    first = started_s + math.ceil((earliest - started_s) / period - 1e-9) * period
    return first + (probe.failure_threshold - 1) * period + probe.timeout_s


@dataclass
class RestartBackOff:
    """One container's back-off (``doBackOff``: ``IsInBackOffSince`` the exit, then ``Next``): the wait
    before its next start after it ended at ``ended_s``; shared by every way a container ends and restarts
    (its liveness probe, CUDA out of memory, a non-zero exit)."""

    delay_s: float = 0.0
    last_s: float | None = None  # when the back-off last moved (``lastUpdate``: the last start)

    def wait_s(self, ended_s: float) -> float:
        if self.last_s is None or ended_s - self.last_s > 2 * MAX_BACK_OFF_S:
            wait, self.delay_s = 0.0, BACK_OFF_S
        else:
            wait, self.delay_s = self.delay_s, min(2 * self.delay_s, MAX_BACK_OFF_S)
        self.last_s = ended_s + wait
        return wait
