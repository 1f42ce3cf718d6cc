"""The upstream components of the test control plane, built from their Go modules into a cache.

The Go modules in ``e2e/controlplane/`` pin one Kubernetes release (``KUBERNETES_VERSION``) and the
etcd, kwok and kube-state-metrics that go with it; ``go.sum`` commits every dependency. A build
compiles each component's upstream ``main`` package with ``go build`` (the version stamped into the
binary with ``-ldflags -X``, as Kubernetes' ``hack/lib/version.sh`` does, else it reports
``v0.0.0``) into ``~/.cache/gpufleet/controlplane/<key>/bin`` (``GPUFLEET_CACHE`` moves the cache).
The key hashes the modules and this recipe, so a fresh clone with the same ``go.sum`` reuses the
binaries and a changed pin builds anew. Nothing built is ever written inside the clone.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

E2E = Path(__file__).resolve().parent
MODULES = E2E / "controlplane"
KUBERNETES_VERSION = "v1.34.10"
RECIPE_VERSION = "1"  # bump when the build flags change


@dataclass(frozen=True)
class Component:
    binary: str
    package: str
    module: Path  # the Go module directory that pins it


def _kubernetes_ldflags() -> str:
    major, minor = KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    stamps = []
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        stamps += [
            f"-X {pkg}.gitVersion={KUBERNETES_VERSION}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return " ".join(["-s", "-w", *stamps])


COMPONENTS = (
    Component("etcd", "go.etcd.io/etcd/server/v3", MODULES),
    Component("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", MODULES),
    Component("kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", MODULES),
    Component("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", MODULES),
    Component("kubectl", "k8s.io/kubernetes/cmd/kubectl", MODULES),
    Component("kube-state-metrics", "k8s.io/kube-state-metrics/v2", MODULES),
    Component("kwok", "sigs.k8s.io/kwok/cmd/kwok", MODULES / "kwok"),
)


class BuildError(RuntimeError):
    """The components could not be built (no Go, a module the proxy refuses, a compile error)."""


def cache_root() -> Path:
    base = os.environ.get("GPUFLEET_CACHE") or str(Path.home() / ".cache" / "gpufleet")
    return Path(base) / "controlplane"


def cache_key() -> str:
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    for module in sorted({c.module for c in COMPONENTS}):
        for name in ("go.mod", "go.sum"):
            digest.update((module / name).read_bytes())
    digest.update(_kubernetes_ldflags().encode())
    return digest.hexdigest()[:16]


def bin_dir() -> Path:
    return cache_root() / cache_key() / "bin"


def built() -> Path | None:
    """The cached binaries, if a complete build for these modules exists."""
    d = bin_dir()
    return d if all((d / c.binary).is_file() for c in COMPONENTS) else None


def go_binary() -> str | None:
    return shutil.which("go")


def build(say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> Path:
    """Build every missing component into the cache (under a lock: one build at a time) and return
    the directory that holds them."""
    if (done := built()) is not None:
        return done
    go = go_binary()
    if go is None:
        raise BuildError("the Go toolchain is not on PATH (needed once to build the control plane)")
    target = bin_dir()
    target.mkdir(parents=True, exist_ok=True)
    with open(target.parent / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [c for c in COMPONENTS if not (target / c.binary).is_file()]
        if missing:
            say(
                f"building the control plane (Kubernetes {KUBERNETES_VERSION}) into {target}: "
                f"{len(missing)} components; a cold build takes about 6 minutes on two cores"
            )
        for n, c in enumerate(missing, 1):
            started = time.monotonic()
            say(f"  [{n}/{len(missing)}] go build {c.package} -> {c.binary}")
            partial = target / f".{c.binary}.partial"
            flags = _kubernetes_ldflags() if c.module == MODULES else "-s -w"
            env = {**os.environ, "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"}
            proc = subprocess.run(
                [go, "build", "-trimpath", "-ldflags", flags, "-o", str(partial), c.package],
                cwd=c.module,
                env=env,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                partial.unlink(missing_ok=True)
                raise BuildError(f"go build {c.package} failed:\n{proc.stderr.strip()[-4000:]}")
            partial.rename(target / c.binary)
            say(f"      done in {time.monotonic() - started:.0f} s")
    return target


#: The cluster-autoscaler release the autoscaling fidelity cases run against.
CLUSTER_AUTOSCALER_VERSION = "1.34.5"
CLUSTER_AUTOSCALER_REFUSED = (
    "the Go module proxy refuses k8s.io/autoscaler/cluster-autoscaler at every version "
    "(403 'This module version is not available'), so `make test` cannot build it"
)


def cluster_autoscaler() -> Path | None:
    """A cluster-autoscaler binary built with its ``kwok`` cloud provider, if one was given: the path
    in ``GPUFLEET_CLUSTER_AUTOSCALER``, or ``<cache>/cluster-autoscaler-<version>/cluster-autoscaler``.

    It cannot be built here like the other components (``CLUSTER_AUTOSCALER_REFUSED``); one built
    by hand from the autoscaler repository's ``cluster-autoscaler-<version>`` source
    (``go build -tags kwok``) is used where it is found.
    """
    named = os.environ.get("GPUFLEET_CLUSTER_AUTOSCALER")
    path = (
        Path(named)
        if named
        else cache_root().parent / f"cluster-autoscaler-{CLUSTER_AUTOSCALER_VERSION}" / "cluster-autoscaler"
    )
    return path if path.is_file() and os.access(path, os.X_OK) else None
