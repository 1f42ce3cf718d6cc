"""Prometheus for the tests: Debian's ``prometheus`` package, unpacked without root into a cache,
and a server on loopback that scrapes the given targets every second.

The binary is the one on ``PATH`` if there is one; otherwise ``apt-get download prometheus`` (the
candidate of the machine's APT sources, Debian 12's ``2.42.0+ds-5+deb12u1`` here) is unpacked with
``dpkg-deb -x`` into ``~/.cache/gpufleet/prometheus-<version>/`` (``GPUFLEET_CACHE`` moves it, as for
the control plane's builds), once. The server runs as one of the control plane's processes
(``ControlPlane.spawn``: it dies with the test run, its log is kept with theirs), its storage in the
control plane's working directory on tmpfs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from e2e.components import cache_root
from e2e.controlplane import ControlPlane, free_port
from gpufleet.live.prometheus_api import PrometheusAPI, PrometheusError, Sample

SCRAPE_INTERVAL = "1s"


class PrometheusUnavailable(RuntimeError):
    """No prometheus binary on PATH, and the Debian package could not be fetched or unpacked."""


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise PrometheusUnavailable(f"{' '.join(args)}: {(proc.stderr or proc.stdout).strip()[-500:]}")
    return proc.stdout


def binary() -> Path:
    """The prometheus binary: on PATH, in the cache, or Debian's package fetched and unpacked now."""
    if (found := shutil.which("prometheus")) is not None:
        return Path(found)
    cached = sorted(cache_root().parent.glob("prometheus-*/usr/bin/prometheus"))
    if cached:
        return cached[-1]
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise PrometheusUnavailable(
            "no prometheus on PATH, and no apt-get/dpkg-deb to fetch Debian's package"
        )
    with tempfile.TemporaryDirectory(prefix="gpufleet-prometheus-") as tmp:
        _run(["apt-get", "download", "prometheus"], Path(tmp))
        deb = next(Path(tmp).glob("prometheus_*.deb"), None)
        if deb is None:
            raise PrometheusUnavailable("apt-get download prometheus wrote no .deb")
        version = _run(["dpkg-deb", "-f", str(deb), "Version"], Path(tmp)).strip()
        target = cache_root().parent / f"prometheus-{version}"
        unpacked = target / "usr" / "bin" / "prometheus"
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")  # one per process
        partial.parent.mkdir(parents=True, exist_ok=True)
        _run(["dpkg-deb", "-x", str(deb), str(partial)], Path(tmp))
        try:
            partial.rename(target)
        except OSError:  # another test run unpacked it first
            shutil.rmtree(partial, ignore_errors=True)
            if not unpacked.is_file():
                raise
    return unpacked


@dataclass(frozen=True)
class Prometheus:
    url: str  # http://127.0.0.1:PORT

    def wait_scraped(self, expr: str, timeout_s: float = 30.0) -> list[Sample]:
        """Poll until the instant query ``expr`` returns something (what a test waits for)."""
        api = PrometheusAPI(self.url, attempts=1)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if result := api.query(expr, time.time()):
                    return result
            except PrometheusError:
                pass
            time.sleep(0.25)
        raise AssertionError(f"Prometheus returned nothing for {expr} after {timeout_s} s")


def start(cp: ControlPlane, prometheus: Path, targets: list[str]) -> Prometheus:
    """Start Prometheus as a process of ``cp``, scraping ``targets`` (``host:port``) every second,
    and wait for its ``/-/ready`` and then for its first scrape of every target: its discovery
    manager hands the targets to the scrape manager only after its first 5-second update tick
    (``discovery.Manager``'s ``updatert``), so a workload started at ``/-/ready`` would run unseen."""
    workdir = cp.workdir / "prometheus"
    workdir.mkdir(exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
                "scrape_configs": [
                    {"job_name": "kube-state-metrics", "static_configs": [{"targets": targets}]}
                ],
            }
        )
    )
    port = free_port()
    cp.spawn(
        "prometheus",
        [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        executable=prometheus,
    )
    server = Prometheus(f"http://127.0.0.1:{port}")
    cp.wait(lambda: cp.http_ok(f"{server.url}/-/ready"), "prometheus", "/-/ready")
    server.wait_scraped(f"count(up == 1) == {len(targets)}")
    return server


def stop(cp: ControlPlane) -> None:
    cp.terminate("prometheus")
