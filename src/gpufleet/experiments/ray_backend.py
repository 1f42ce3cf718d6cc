"""Runs on a Ray cluster (the optional ``ray`` extra: ``pip install 'gpufleet[ray]'``).

``ray`` is imported only here, and only when a sweep is given ``--ray ADDRESS`` or ``RAY_ADDRESS``
(as ``ray.init`` reads it: ``auto`` is the cluster this machine belongs to, ``local`` a new
instance on this machine, else ``HOST:PORT`` or ``ray://HOST:PORT``). Each run is
one Ray task calling the run's ``run`` (``runs.Run``) through ``runs.attempt``, so a run that raises
comes back ``Failed`` as it would from a local process; the trace and scenario files must be
readable at the same paths on every node (the paths are made absolute before they are sent).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from typing import Any

from gpufleet.experiments.runs import Failed, R, attempt

MISSING = "--ray: Ray is not installed; install the ray extra: pip install 'gpufleet[ray]'"


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


def connect(address: str) -> None:
    """Join the cluster at ``address`` (once per process); Ray's ``ConnectionError`` if none is there."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)


def execute_on_ray(specs: Sequence[R], address: str) -> Iterator[tuple[R, dict[str, Any] | Failed]]:
    """Each run's spec and result (or failure), in the order the cluster finishes them."""
    import ray

    connect(address)
    task = ray.remote(attempt)
    running: dict[Any, R] = {task.remote(spec): spec for spec in specs}
    try:
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                yield running.pop(ref), ray.get(ref)
    finally:
        for ref in running:
            ray.cancel(ref)
