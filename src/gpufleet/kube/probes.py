"""A container's ``livenessProbe`` read into ``model.probes.LivenessProbe``: the API server's defaults
(``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Probe``: a 0 ``timeoutSeconds``, ``periodSeconds``,
``successThreshold`` or ``failureThreshold`` takes 1, 10, 1, 3) and its validation
(``pkg/apis/core/validation/validation.go`` ``validateProbe``, ``validateLivenessProbe``): every count
non-negative, ``terminationGracePeriodSeconds`` above 0, a liveness probe's ``successThreshold`` 1, one
handler."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.problems import Reporter, invalid, required
from gpufleet.model.probes import LivenessProbe

_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_DEFAULTS = {"initialDelaySeconds": 0, "timeoutSeconds": 1, "periodSeconds": 10, "failureThreshold": 3}


def liveness_probe(container: Mapping[str, Any], report: Reporter, path: str) -> LivenessProbe | None:
    """The container's ``livenessProbe`` (``report`` at the pod's spec, ``path`` the container's)."""
    probe = container.get("livenessProbe")
    if not isinstance(probe, Mapping):
        return None
    at = f"{path}.livenessProbe"
    values: dict[str, int] = {}
    for name, default in _DEFAULTS.items():
        value = probe.get(name) or default
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            report.error(f"{at}.{name}", invalid(value, "must be greater than or equal to 0"))
            value = default
        values[name] = value
    success = probe.get("successThreshold") or 1
    if success != 1:
        report.error(f"{at}.successThreshold", invalid(success, "must be 1"))
    if not any(probe.get(handler) is not None for handler in _HANDLERS):
        report.error(at, required("must specify a handler type"))
    grace = probe.get("terminationGracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool) or grace <= 0):
        report.error(f"{at}.terminationGracePeriodSeconds", invalid(grace, "must be greater than 0"))
        grace = None
    return LivenessProbe(
        float(values["initialDelaySeconds"]),
        float(values["periodSeconds"]),
        float(values["timeoutSeconds"]),
        values["failureThreshold"],
        None if grace is None else float(grace),
    )
