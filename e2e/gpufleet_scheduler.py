"""``gpufleet scheduler`` run as its own process against a test control plane, as it is deployed:
started, waited for (``/readyz``, then the Lease), its decision log read, stopped with SIGTERM (or
killed), and its PodGroup CRD (scheduler-plugins' ``podgroups.scheduling.x-k8s.io``, with the
status subresource) installed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from e2e.controlplane import ControlPlane, ControlPlaneError, free_port


def custom_resource(
    group: str, version: str, plural: str, kind: str, namespaced: bool = True
) -> dict[str, Any]:
    """A CustomResourceDefinition serving ``kind`` with any fields and a status subresource (the
    projects' own CRDs are not in the module cache; the API paths and scopes are theirs)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced" if namespaced else "Cluster",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


POD_GROUP_CRD = custom_resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup")

COSCHEDULING = [{"name": "Coscheduling"}]


@contextmanager
def crds_installed(cp: ControlPlane, *definitions: dict[str, Any]) -> Iterator[None]:
    """The CRDs served inside; each deleted again after when it was not installed before, so that a
    test that expects it absent finds it absent whatever ran first."""
    names = [str(d["metadata"]["name"]) for d in definitions]
    new = [n for n in names if cp.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{n}") is None]
    for definition, name in zip(definitions, names, strict=True):
        cp.kubectl("apply", "-f", "-", stdin=json.dumps(definition))
        cp.kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=30s")
    try:
        yield
    finally:
        for name in new:
            cp.kubectl("delete", "crd", name, "--timeout=60s")


def pod_group_crd(cp: ControlPlane) -> AbstractContextManager[None]:
    """scheduler-plugins' PodGroup CRD served inside (``crds_installed``)."""
    return crds_installed(cp, POD_GROUP_CRD)


def config(
    scheduler_name: str,
    *,
    plugins: dict[str, Any] | None = None,
    plugin_config: list[dict[str, Any]] | None = None,
    lease: str | None = None,
    lease_namespace: str = "default",
    qps: float | None = None,
    burst: int | None = None,
) -> dict[str, Any]:
    """A KubeSchedulerConfiguration with one profile; Coscheduling (its queue sort too) unless
    ``plugins`` says otherwise; leader election on Lease ``lease`` (none when None)."""
    profile: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "plugins": plugins
        if plugins is not None
        else {
            "multiPoint": {"enabled": COSCHEDULING},
            "queueSort": {"enabled": COSCHEDULING, "disabled": [{"name": "*"}]},
        },
    }
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False}
        if lease is None
        else {
            "leaderElect": True,
            "resourceName": lease,
            "resourceNamespace": lease_namespace,
            "leaseDuration": "8s",
            "renewDeadline": "6s",
            "retryPeriod": "500ms",
        },
        "profiles": [profile],
    }
    if qps is not None or burst is not None:
        doc["clientConnection"] = {k: v for k, v in (("qps", qps), ("burst", burst)) if v is not None}
    return doc


def kept_pod(
    name: str,
    namespace: str,
    scheduler: str,
    limits: dict[str, Any] | None = None,
    group: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A v1 Pod for ``scheduler`` kept on its test's nodes: it selects the label ``gpufleet-test:
    NAMESPACE`` and tolerates the taint of the same name; in PodGroup ``group`` when given."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if group is not None:
        metadata["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {"gpufleet-test": namespace},
            "tolerations": [
                {"key": "gpufleet-test", "operator": "Equal", "value": namespace, "effect": "NoSchedule"}
            ],
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1"}, "limits": limits or {}},
                }
            ],
            **spec,
        },
    }


@dataclass
class SchedulerProcess:
    """One ``gpufleet scheduler`` process on ``kubeconfig`` (the administrator's by default)."""

    cp: ControlPlane
    settings: dict[str, Any]
    workdir: Path
    name: str = "gpufleet-scheduler"
    kubeconfig: Path | None = None
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    port: int = field(default_factory=free_port)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.jsonl"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self, wait_leading: bool = True) -> SchedulerProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        path = self.workdir / f"{self.name}.yaml"
        path.write_text(yaml.safe_dump(self.settings, sort_keys=False))
        command = [
            sys.executable,
            "-m",
            "gpufleet",
            "scheduler",
            "--config",
            str(path),
            "--kubeconfig",
            str(self.kubeconfig or self.cp.kubeconfig),
            "--bind-address",
            f"127.0.0.1:{self.port}",
            "--identity",
            self.name,
            *self.extra,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log_path.open("ab") as out, self.stderr_path.open("ab") as err:
            self.proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        try:
            self.cp.wait(lambda: self._alive() and self.http("/readyz") == 200, self.name, "/readyz")
        except ControlPlaneError as exc:  # the control plane's log has nothing of it: its own stderr
            raise ControlPlaneError(f"{self.name}: /readyz not ready: {exc}\n{self.stderr()}") from None
        if wait_leading:
            self.wait_leading()
        return self

    def _alive(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.stderr()}")
        return True

    def wait_leading(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._alive()
            if "leading: scheduling" in self.stderr():
                return
            time.sleep(0.1)
        raise AssertionError(f"{self.name} did not lead within {timeout_s:g} s:\n{self.stderr()}")

    def http(self, path: str) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except OSError:
            return 0

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as response:
            return str(response.read().decode())

    def decisions(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.startswith("{")]

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, and its exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc is not None else 0
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout_s)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
