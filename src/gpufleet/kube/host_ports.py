"""The host ports of a ``PodSpec``, as kube-scheduler's NodePorts plugin collects them.

``util.GetHostPorts`` (Kubernetes 1.34): every ``ports[]`` entry with a ``hostPort`` above 0 of the
app containers and of the init containers with ``restartPolicy: Always`` (sidecars, which run as
long as the pod; other init containers are done before the app starts). With ``hostNetwork`` the
API server first defaults each ``hostPort`` to its ``containerPort`` (``SetDefaults_Pod``,
``defaultHostNetworkPorts``). Protocol and ``hostIP`` are kept as ``HostPortInfo`` sanitises them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.kube.objects import items
from gpufleet.model.host_ports import HostPort

SIDECAR_RESTART_POLICY = "Always"


def host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    host_network = spec.get("hostNetwork") is True
    init = items(spec.get("initContainers"))
    sidecars = [c for c in init if c.get("restartPolicy") == SIDECAR_RESTART_POLICY]
    out: list[HostPort] = []
    for container in [*sidecars, *items(spec.get("containers"))]:
        for port in items(container.get("ports")):
            number = port.get("hostPort") or (port.get("containerPort") if host_network else 0)
            if isinstance(number, int) and number > 0:
                ip, protocol = str(port.get("hostIP") or ""), str(port.get("protocol") or "")
                out.append(HostPort.of(ip, protocol, number))
    return tuple(out)
