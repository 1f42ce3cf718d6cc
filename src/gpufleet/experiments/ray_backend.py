"""Runs on a Ray cluster (the optional ``ray`` extra: ``pip install 'gpufleet[ray]'``).

``ray`` is imported only here, and only when a sweep is given ``--ray ADDRESS`` or ``RAY_ADDRESS``
(as ``ray.init`` reads it: ``auto`` is the cluster this machine belongs to, ``local`` a new
instance on this machine, else ``HOST:PORT`` or ``ray://HOST:PORT``). Each run is
one Ray task calling the run's ``run`` (``runs.Run``) through ``runs.attempt``, so a run that raises
comes back ``Failed`` as it would from a local process; the trace and scenario files must be
readable at the same paths on every node (the paths are made absolute before they are sent).

A result says where it ran (``runs.RAN_ON``: the Ray node's id, as ``ray.get_runtime_context()
.get_node_id()`` gives it, and the host's name: several nodes on one machine share a host). A run
whose worker process or node dies (a system failure, in Ray's words: ``WorkerCrashedError``,
``NodeDiedError``) is run again on another node, up to ``MAX_RETRIES`` times (Ray's ``max_retries``,
whose default is 3 too; ``retry_exceptions`` stays off: a run that raises would raise again, and comes
back ``Failed`` without a retry). A run still lost after its retries comes back ``Failed`` with Ray's
error, so the others go on and the next sweep does it again. See docs/sweep-on-ray.md.
"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from gpufleet.experiments.runs import RAN_ON, Failed, R, Run, attempt

MISSING = "--ray: Ray is not installed; install the ray extra: pip install 'gpufleet[ray]'"
#: How many times Ray runs a task again when its worker or node dies (Ray's own default is 3).
MAX_RETRIES = 3


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


def connect(address: str) -> None:
    """Join the cluster at ``address`` (once per process); Ray's ``ConnectionError`` if none is there."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)


@contextlib.contextmanager
def session(address: str) -> Iterator[None]:
    """This process joined to the cluster at ``address`` for the block (``connect``'s errors on
    entering), and left at its end if the block joined it. What Ray prints by itself meanwhile (a
    node marked dead, a worker that died: on stdout, as Ray's driver does) goes to stderr, so that
    stdout keeps only the command's result (``-o json``)."""
    import ray

    joined = not ray.is_initialized()
    connect(address)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if joined:
            ray.shutdown()


def placement() -> dict[str, str]:
    """Where this process runs: the Ray node's id and the host's name."""
    import ray

    return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname()}


def attempt_on_node(run: Run) -> dict[str, Any] | Failed:
    """``runs.attempt`` in a Ray task: a result carries ``RAN_ON``, a failure names the node."""
    outcome = attempt(run)
    where = placement()
    if isinstance(outcome, Failed):
        return Failed(f"{outcome.error} (on Ray node {where['node_id']}, {where['host']})")
    return {**outcome, RAN_ON: where}


def _lost(exc: Exception) -> Failed:
    """A run Ray gave up on (its retries spent, or cancelled), as one line."""
    first = next((line for line in str(exc).splitlines() if line.strip()), "")
    return Failed(f"{type(exc).__name__}: {first}")


def execute_on_ray(specs: Sequence[R], address: str) -> Iterator[tuple[R, dict[str, Any] | Failed]]:
    """Each run's spec and result (or failure), in the order the cluster finishes them."""
    import ray
    from ray.exceptions import RayError

    connect(address)
    task = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(attempt_on_node)
    running: dict[Any, R] = {task.remote(spec): spec for spec in specs}
    try:
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                spec = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except RayError as exc:
                    outcome = _lost(exc)
                yield spec, outcome
    finally:
        for ref in running:
            ray.cancel(ref)
