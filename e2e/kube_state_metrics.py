"""kube-state-metrics (v2.18.0, built with the control plane by ``e2e.components``) serving the
control plane's pods, nodes and Jobs on loopback, for Prometheus to scrape.

Labels are exported as ``kube_pod_labels`` / ``kube_node_labels`` only for the keys
``--metric-labels-allowlist`` names (kube-state-metrics exports none by default); the allowlist is
``gpufleet.live.history_metrics.labels_allowlist()``, the same one ``docs/history.md`` asks users
for, as is the opt-in metric ``kube_pod_nodeselectors`` (``OPT_IN``).
"""

from __future__ import annotations

from e2e.controlplane import ControlPlane, free_ports
from gpufleet.live.history_metrics import OPT_IN, labels_allowlist

RESOURCES = "pods,nodes,jobs"


def start(cp: ControlPlane) -> str:
    """Start kube-state-metrics as a process of ``cp`` (it dies with the test run) and return the
    ``host:port`` of its ``/metrics`` once it serves them."""
    port, telemetry = free_ports(2)
    cp.spawn(
        "kube-state-metrics",
        [
            "kube-state-metrics",
            f"--kubeconfig={cp.kubeconfig}",
            "--host=127.0.0.1",
            f"--port={port}",
            "--telemetry-host=127.0.0.1",
            f"--telemetry-port={telemetry}",
            f"--resources={RESOURCES}",
            f"--metric-labels-allowlist={labels_allowlist()}",
            f"--metric-opt-in-list={OPT_IN}",
        ],
    )
    target = f"127.0.0.1:{port}"
    cp.wait(lambda: cp.http_ok(f"http://{target}/metrics"), "kube-state-metrics", "/metrics")
    return target


def stop(cp: ControlPlane) -> None:
    cp.terminate("kube-state-metrics")
