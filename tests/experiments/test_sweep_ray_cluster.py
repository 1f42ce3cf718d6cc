"""gpufleet sweep --ray on a multi-node Ray cluster on this machine, started as users start one: a head
(``ray start --head --num-cpus=0``: it runs no run) and two worker nodes (``ray start --address=HEAD
--num-cpus=1``), each ``ray start`` its own session of processes, temp dir and ports, with token
authentication (Ray 2.60's; the token is made for the module). Separate ``ray start`` processes rather
than ``ray.cluster_utils.Cluster``: those nodes would be children of the test's own process, while
here a node is what a user's machine runs, and one node's processes (its session) are killed without
touching the others. Ray replaces 127.0.0.1 with this machine's address for its nodes and listens on
every interface; nothing leaves the machine. The sweeps run as ``python -m gpufleet sweep`` processes,
as a user runs them: a grid's runs spread over both workers and each line says where it ran, a worker
node killed mid-sweep loses no run (Ray runs it again on the other: ``ray_backend.MAX_RETRIES``), and
a sweep interrupted on the cluster resumes with only the runs it lacks."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from e2e.controlplane import free_ports

import gpufleet
from conftest import wait_until
from gpufleet.experiments.sweep import RESULTS

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None or not Path("/proc/self/stat").exists(),
    reason="needs ray (the dev extra has it: make test) and Linux's /proc",
)
BURSTS = Path(__file__).parents[2] / "examples" / "experiments" / "bursts.yaml"
RAY = Path(sys.executable).with_name("ray")
#: Two warm-node settings by five seeds: ten simulations of a fraction of a second each, enough that a
#: sweep is still running when its first line is written, however fast the machine.
SEEDS = 5
RUNS = sorted((warm, seed) for warm in (0, 1) for seed in range(1, SEEDS + 1))
#: An interrupted sweep runs four times as many: a Ctrl-C sent when the first line appears lands
#: before the last run is done even on a loaded machine, where the signal takes a while to act.
INTERRUPTED_SEEDS = 4 * SEEDS
#: Generous: starting a node or a sweep takes seconds on a loaded two-core machine.
TIMEOUT_S = 180.0
#: Ray's head marks a node dead after 5 failed health checks 3 s apart, and runs a dead node's tasks
#: again only then; checks every 0.5 s, 3 failures, mark a killed node dead in about 1.5 s (a check
#: still waits 10 s for an answer, Ray's default, so a slow node on a loaded machine is not taken
#: for dead). Users set the same variables on their head node for a faster failover.
HEALTH_CHECKS = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}
#: The title of a Ray worker process while it does a run (``ray::`` and the task's function).
RUNNING = "ray::attempt_on_node"


@dataclass(frozen=True)
class RayNode:
    """One ``ray start``: its processes are the session it leads (``start_new_session``), the raylet's
    workers included."""

    session: int
    temp_dir: Path

    def processes(self) -> dict[int, list[str]]:
        """The node's live processes and their command lines (a Ray process's title for a worker)."""
        found: dict[int, list[str]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getsid(int(entry.name)) != self.session:
                    continue
                stat = (entry / "stat").read_text()
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except (OSError, ProcessLookupError):
                continue
            if stat.rsplit(")", 1)[1].split()[0] != "Z":
                found[int(entry.name)] = argv
        return found

    def node_id(self) -> str:
        """The Ray node id its raylet was started with."""
        for argv in self.processes().values():
            if argv[0].endswith("/raylet"):
                return next(a.removeprefix("--node_id=") for a in argv if a.startswith("--node_id="))
        raise AssertionError(f"no raylet in session {self.session}")

    def doing_a_run(self) -> bool:
        return any(argv[0].startswith(RUNNING) for argv in self.processes().values())

    def kill(self) -> None:
        """SIGKILL to every process of the node, as when its machine dies; back once they are gone."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(f"the processes of session {self.session} gone", lambda: not self.processes(), 30)

    def stop(self) -> None:
        """The node killed (a test cluster keeps nothing) and its temp dir removed."""
        self.kill()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@dataclass
class LocalRayCluster:
    address: str
    env: dict[str, str]
    head: RayNode
    workers: list[RayNode]
    sweeps: list[subprocess.Popen[str]] = field(default_factory=list)

    def sweep(self, grid: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
        """``gpufleet sweep --ray`` on this cluster, started (not waited for)."""
        command = [sys.executable, "-m", "gpufleet", "sweep", "--grid", str(grid), "--out", str(out)]
        started = subprocess.Popen(
            [*command, "--ray", self.address, "--no-progress", *extra],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.sweeps.append(started)
        return started


#: the components whose ports would otherwise be fixed and shared by nodes on one machine
COMPONENTS = ("dashboard-agent-listen", "dashboard-agent-grpc", "metrics-export", "runtime-env-agent")


def _ray_start(env: dict[str, str], ports: Sequence[int], *args: str) -> tuple[subprocess.Popen[str], Path]:
    """``ray start`` with its own session, temp dir (short: Ray's socket paths must fit in 107
    characters) and ``ports`` for its ``COMPONENTS``."""
    temp_dir = Path(tempfile.mkdtemp(prefix="gf-ray-"))
    command = [
        str(RAY),
        "start",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp_dir}",
        "--object-store-memory=100000000",
        "--include-log-monitor=false",
        "--disable-usage-stats",
        *(f"--{name}-port={port}" for name, port in zip(COMPONENTS, ports, strict=True)),
        *args,
    ]
    started = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return started, temp_dir


def _node(started: subprocess.Popen[str], temp_dir: Path) -> RayNode:
    output, _ = started.communicate(timeout=TIMEOUT_S)
    node = RayNode(started.pid, temp_dir)
    if started.returncode != 0:
        node.stop()
        raise AssertionError(f"ray start failed ({started.returncode}): {output[-2000:]}")
    return node


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LocalRayCluster]:
    src = str(Path(gpufleet.__file__).parents[1])  # the workers import the gpufleet under test
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    env |= {"RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.pathsep.join([src, env.get("PYTHONPATH", "")])}
    env |= HEALTH_CHECKS
    # every port of the three nodes drawn at once: the head's, its dashboard's, then each node's components
    port, dashboard, *components = free_ports(2 + 3 * len(COMPONENTS))
    per_node = [components[k : k + len(COMPONENTS)] for k in range(0, len(components), len(COMPONENTS))]
    nodes: list[RayNode] = []
    try:
        head_args = ("--head", f"--port={port}", "--num-cpus=0", "--include-dashboard=false")
        nodes.append(_node(*_ray_start(env, per_node[0], *head_args, f"--dashboard-port={dashboard}")))
        address = f"--address=127.0.0.1:{port}"
        starting = [_ray_start(env, ports, address, "--num-cpus=1") for ports in per_node[1:]]
        for started in starting:
            nodes.append(_node(*started))
        cluster = LocalRayCluster(f"127.0.0.1:{port}", env, nodes[0], nodes[1:])
        yield cluster
        for sweep in cluster.sweeps:  # one a failed test left running
            sweep.kill()
            sweep.communicate()
    finally:
        for node in reversed(nodes):
            node.stop()


def _grid(folder: Path, seeds: int = SEEDS) -> Path:
    """Two warm-node settings by ``seeds`` seeds of the bursts example."""
    shutil.copy(BURSTS, folder / "bursts.yaml")
    grid = folder / "grid.yaml"
    grid.write_text(
        f"scenario: bursts.yaml\nparameters:\n  NodePool/a10.spec.warm: [0, 1]\nseeds: 1-{seeds}\n"
    )
    return grid


def _lines(out: Path) -> list[dict[str, Any]]:
    path = out / RESULTS
    if not path.exists():
        return []
    return [json.loads(t) for t in path.read_text().splitlines() if t.endswith("}")]


def _runs(lines: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    return sorted((line["parameters"]["NodePool/a10.spec.warm"], line["seed"]) for line in lines)


def _finished(sweep: subprocess.Popen[str]) -> tuple[str, str]:
    stdout, stderr = sweep.communicate(timeout=TIMEOUT_S)
    assert sweep.returncode == 0, stderr
    return stdout, stderr


def test_a_sweep_interrupted_on_the_cluster_resumes_with_only_the_missing_runs(
    tmp_path: Path, ray_cluster: LocalRayCluster
) -> None:
    grid, out = _grid(tmp_path, INTERRUPTED_SEEDS), tmp_path / "out"
    runs = sorted((warm, seed) for warm in (0, 1) for seed in range(1, INTERRUPTED_SEEDS + 1))
    sweep = ray_cluster.sweep(grid, out)
    wait_until("a run done", lambda: _lines(out), TIMEOUT_S)
    sweep.send_signal(signal.SIGINT)  # Ctrl-C: the runs in flight are cancelled, written lines stay
    sweep.communicate(timeout=TIMEOUT_S)
    before = (out / RESULTS).read_text()
    done = len(_lines(out))
    assert 1 <= done < len(runs)
    stdout, notes = _finished(ray_cluster.sweep(grid, out, "-o", "json"))
    assert f"{len(runs) - done} runs done, {done} already in results.jsonl" in notes
    assert (out / RESULTS).read_text().startswith(before)
    lines = _lines(out)
    assert _runs(lines) == runs
    groups = json.loads(stdout)
    assert [g["variant"] for g in groups] == ["warm=0", "warm=1"]
    for group in groups:  # -o json: per variant, the Ray nodes its runs ran on and their seeds
        assert sorted(seed for node in group["ran_on"] for seed in node["seeds"]) == group["seeds"]
        assert {node["node_id"] for node in group["ran_on"]} <= {line["ran_on"]["node_id"] for line in lines}


def test_runs_spread_over_the_workers_and_a_worker_killed_mid_sweep_loses_no_run(
    tmp_path: Path, ray_cluster: LocalRayCluster
) -> None:
    workers = {worker.node_id(): worker for worker in ray_cluster.workers}
    out = tmp_path / "out"
    sweep = ray_cluster.sweep(_grid(tmp_path), out)

    def victim() -> RayNode | None:
        """The worker that did the first run, once it is doing another."""
        lines = _lines(out)
        worker = workers[lines[0]["ran_on"]["node_id"]] if lines else None
        return worker if worker is not None and worker.doing_a_run() else None

    wait_until("the first run's worker doing another", victim, TIMEOUT_S).kill()
    shown, _ = _finished(sweep)  # the table, then the notes
    assert f"{len(RUNS)} runs done, 0 already in results.jsonl" in shown
    lines = _lines(out)
    assert _runs(lines) == RUNS  # every run once: the one the killed worker was doing was done again
    assert {line["ran_on"]["node_id"] for line in lines} == set(workers)
    assert {line["ran_on"]["host"] for line in lines} == {socket.gethostname()}
    assert all(node_id in shown for node_id in workers)  # runs by Ray node: HOST NODE_ID (RUNS), ...
