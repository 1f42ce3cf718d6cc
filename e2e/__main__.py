"""``python -m e2e build|up|down|status``: the test control plane for people (``make cluster-up``).

``up`` builds the components if needed, starts the control plane in the background on loopback
and prints the kubeconfig to use; ``down`` stops it and removes its data. Its state (process ids,
working directory) is kept in ``~/.cache/gpufleet/cluster.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path

from e2e.components import BuildError, build, cache_root
from e2e.controlplane import ControlPlane, ControlPlaneError

STATE = cache_root().parent / "cluster.json"


def _up() -> int:
    if STATE.exists():
        print(f"a control plane is already up (see {STATE}); `make cluster-down` stops it", file=sys.stderr)
        return 1
    cp = ControlPlane(build(), detached=True).start()
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(
        json.dumps(
            {
                "workdir": str(cp.workdir),
                "kubeconfig": str(cp.kubeconfig),
                "pids": {name: p.pid for name, p in cp.processes.items()},
            },
            indent=2,
        )
    )
    cp.processes.clear()  # they outlive this command; `down` stops them
    print(f"control plane up in {cp.started_s:.1f} s (kube-apiserver {cp.server}); logs in {cp.logs}")
    print(f"export KUBECONFIG={cp.kubeconfig}")
    print(f"kubectl: {cp.bins / 'kubectl'}")
    return 0


def _down() -> int:
    if not STATE.exists():
        print("no control plane is up", file=sys.stderr)
        return 0
    state = json.loads(STATE.read_text())
    for pid in state["pids"].values():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    shutil.rmtree(state["workdir"], ignore_errors=True)
    STATE.unlink()
    print("control plane stopped")
    return 0


def _status() -> int:
    if not STATE.exists():
        print("no control plane is up")
        return 1
    state = json.loads(STATE.read_text())
    alive = {name: Path(f"/proc/{pid}").exists() for name, pid in state["pids"].items()}
    for name, up in alive.items():
        print(f"{name}: {'running' if up else 'stopped'}")
    print(f"export KUBECONFIG={state['kubeconfig']}")
    return 0 if all(alive.values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m e2e", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("build", "up", "down", "status"))
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(build())
            return 0
        return {"up": _up, "down": _down, "status": _status}[args.command]()
    except (BuildError, ControlPlaneError) as exc:
        print(f"control plane: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
