"""The workload controllers' fidelity sets (Job, ReplicaSet, StatefulSet, node lifecycle, Deployment rollouts)
as the suite runs them: on one control plane, partly at once (``run_controller_sets``), and, beside the tests
that follow the kube-scheduler fidelity run, on a control plane of their own (``InBackground``).

Most of the sets' time is waiting for controllers and grace periods (about 120 s on two cores, 97 s of it the
node lifecycle set), so the suite starts them once the CPU-bound kube-scheduler run is over and runs the
live tests meanwhile; the sets' tests come last and find them done."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from e2e.controlplane import ControlPlane


def run_controller_sets(cp: ControlPlane) -> dict[str, dict[str, Any]]:
    """Every set's results (its ``run_*_cases``' results by case name) by set, on ``cp``: the StatefulSet set
    first, alone (it compares gaps of seconds from the StatefulSet's creation, which the other sets' load on
    the API server stretched past its tolerance), then the Job, ReplicaSet and node lifecycle sets at once,
    the Deployment set once the Job and ReplicaSet sets are done (beside the node lifecycle's waits: its gaps
    of seconds stretched past the tolerance beside all three): each in namespaces and on kwok nodes of its
    own, its pods pinned there (``nodeSelector``), the node lifecycle's in zones of their own, so none waits
    on another."""
    from e2e.fidelity.deployment_cases import DEPLOYMENT_CASES
    from e2e.fidelity.deployment_run import run_deployment_cases
    from e2e.fidelity.job_cases import JOB_CASES
    from e2e.fidelity.job_run import run_job_cases
    from e2e.fidelity.node_failure_cases import NODE_FAILURE_CASES
    from e2e.fidelity.node_failure_run import run_node_failure_cases
    from e2e.fidelity.replicaset_cases import REPLICASET_CASES
    from e2e.fidelity.replicaset_run import run_replicaset_cases
    from e2e.fidelity.statefulset_cases import STATEFULSET_CASES
    from e2e.fidelity.statefulset_run import run_statefulset_cases

    stateful = run_statefulset_cases(cp, STATEFULSET_CASES)
    runs: dict[str, Callable[[], list[Any]]] = {
        "nodes": lambda: run_node_failure_cases(cp, NODE_FAILURE_CASES),
        "jobs": lambda: run_job_cases(cp, JOB_CASES),
        "replicasets": lambda: run_replicaset_cases(cp, REPLICASET_CASES),
    }
    with ThreadPoolExecutor(len(runs) + 1) as pool:
        futures = {name: pool.submit(run) for name, run in runs.items()}

        def deployments() -> list[Any]:
            wait([futures["jobs"], futures["replicasets"]])
            return run_deployment_cases(cp, DEPLOYMENT_CASES)

        futures["deployments"] = pool.submit(deployments)
        results = {name: {r.name: r for r in future.result()} for name, future in futures.items()}
    return {**results, "statefulsets": {r.name: r for r in stateful}}


class InBackground:
    """``run_controller_sets`` in a thread of its own, on a control plane started from ``bins`` for it and
    removed after (in the same thread: its components die with the thread that started them,
    ``PR_SET_PDEATHSIG``); its components' logs are copied to ``logs`` first, whatever the outcome, as the
    sets' tests judge the results after the control plane is gone. ``result()`` waits for it and raises what
    it raised."""

    def __init__(self, bins: Path, logs: Path) -> None:
        self._results: dict[str, dict[str, Any]] | None = None
        self._error: BaseException | None = None
        self._bins, self._logs = bins, logs
        self._thread = threading.Thread(target=self._run, name="controller sets", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        cp = ControlPlane(self._bins)
        try:
            cp.start()
            self._results = run_controller_sets(cp)
        except BaseException as exc:  # given to the caller of ``result``
            self._error = exc
        finally:
            shutil.rmtree(self._logs, ignore_errors=True)
            cp.keep_logs(self._logs)
            cp.remove()

    def result(self) -> dict[str, dict[str, Any]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._results is not None
        return self._results
