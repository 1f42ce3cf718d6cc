"""A hung process in the simulator and the kubelet's answer to it (a ``process-hang`` fault,
``sim.faults``): the process keeps its GPUs and computes nothing, and its gang waits with it; if its
container has a ``livenessProbe`` the probe fails, the kubelet kills the container (SIGTERM, which a hung
process does not answer, then SIGKILL after the grace period) and, under ``restartPolicy`` Always or
OnFailure, starts it again after its CrashLoopBackOff back-off, resuming from its last checkpoint; under
Never the pod fails and its controller makes another. Without a probe the process hangs until the end.
The times are ``lifecycle.liveness``'s (kubelet's ``pkg/kubelet/prober`` and its back-off)."""

from __future__ import annotations

from functools import partial
from typing import Protocol

from gpufleet.control.clock import Clock, Priority
from gpufleet.lifecycle.liveness import liveness_kill_s
from gpufleet.model.pod_failure_policy import ERROR, SIGKILL_EXIT_CODE, ContainerExit
from gpufleet.sim.pod_lifecycle import PodLifecycle
from gpufleet.sim.records import PodRecord


class HangFault(Protocol):
    """What the fault that hung the process records: when the probe noticed, when the GPUs work again."""

    detected_s: float | None
    recovered_s: float | None


class HungProcesses:
    def __init__(self, clock: Clock, lifecycle: PodLifecycle) -> None:
        self.clock = clock
        self.lifecycle = lifecycle

    def hang(self, rec: PodRecord, fault: HangFault) -> None:
        self.lifecycle.hang(rec)
        probe = rec.pod.liveness_probe
        if probe is None or rec.running_s is None:
            return  # nothing will notice: it holds its GPUs until the end
        kill = liveness_kill_s(probe, rec.running_s, self.clock.now)
        self.clock.at(kill, Priority.COMPLETION, partial(self._killed, rec, rec.token, fault))

    def _killed(self, rec: PodRecord, token: int, fault: HangFault) -> None:
        """``failureThreshold`` probes failed: the kubelet kills the container."""
        if rec.token != token or not rec.hung or rec.terminating or rec.deleted_s is not None:
            return  # it went another way meanwhile (its node failed, it was deleted)
        now = self.clock.now
        if fault.detected_s is None:
            fault.detected_s = now
        probe = rec.pod.liveness_probe
        grace = probe.termination_grace_s if probe is not None else None
        rec.message = "Liveness probe failed: the container is killed and restarted (its process hung)"
        exited = now + (rec.pod.termination_grace_s if grace is None else grace)
        self.clock.at(exited, Priority.COMPLETION, partial(self._exited, rec, token, fault))

    def _exited(self, rec: PodRecord, token: int, fault: HangFault) -> None:
        if rec.token != token or not rec.hung or rec.terminating or rec.deleted_s is not None:
            return
        now = self.clock.now
        if rec.pod.restart_policy == "Never":
            rec.message = "Liveness probe failed and restartPolicy is Never: the container was killed"
            self.lifecycle.failed(rec, "Error")
            self._recovered(fault)
            return
        killed = ContainerExit(rec.pod.behavior.container, SIGKILL_EXIT_CODE, ERROR)
        wait = self.lifecycle.restart_container(rec, killed)
        self.clock.at(now + wait, Priority.COMPLETION, partial(self._recovered, fault))

    def _recovered(self, fault: HangFault) -> None:
        """The GPUs the hung process held compute again (restarted) or are free (the pod failed)."""
        fault.recovered_s = max(fault.recovered_s or 0.0, self.clock.now)
