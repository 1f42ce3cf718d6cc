"""A container's ``livenessProbe`` (``k8s.io/api/core/v1`` ``Probe``), with the defaults the API server
gives it (``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Probe``: ``timeoutSeconds`` 1, ``periodSeconds``
10, ``failureThreshold`` 3; ``initialDelaySeconds`` 0). What the probe runs (``exec``, ``httpGet``,
``tcpSocket``, ``grpc``) does not matter here: a hung process fails it, a computing one passes it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LivenessProbe:
    initial_delay_s: float = 0.0
    period_s: float = 10.0
    timeout_s: float = 1.0
    failure_threshold: int = 3
    #: the probe's own ``terminationGracePeriodSeconds`` (the pod's when None) for the kill that follows
    termination_grace_s: float | None = None
