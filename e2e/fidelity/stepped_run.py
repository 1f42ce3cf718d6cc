"""How a workload controller's stepped case runs on both sides (what ``e2e.fidelity.replicaset_run`` and
``e2e.fidelity.statefulset_run`` share): a workload on its own kwok nodes (``e2e.fidelity.controller_cases``)
and steps made on it at given times (a scale, a pod annotated or deleted), the steps and what they do each
set's own.

- The real side (``make_steps``): the workload created on the control plane, each step made ``at_s`` after
  its creation or once its pods are settled (where the workload wants them), whichever is later; at the end
  it waits until they are settled, ``QUIET_S`` more, and until they are settled again.
- gpufleet's side (``simulation``): the case's nodes and workload simulated for ``AFTER_S`` past the last
  step, each step made on the simulator's clock when the real side made it (``at_s`` where there is no real
  side).
- Both (``run_stepped_cases``): every case on the real side at once (``watches.side_by_side``), then each
  simulated by gpufleet with the real side's times: a ``SteppedResult``.

``steps_at`` (when gpufleet makes the steps) serves the Job controller's patches too
(``e2e.fidelity.job_run``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from e2e.controlplane import ControlPlane
from e2e.fidelity.case import load_documents
from e2e.fidelity.watches import CASE_TIMEOUT_S, RunError, Watches, side_by_side
from gpufleet.control.clock import Priority
from gpufleet.sim.simulation import Simulation

#: how long gpufleet's run goes on after the last step
AFTER_S = 30.0
#: how long the real side waits, once settled after its last step, for anything more the controllers do
QUIET_S = 1.5


class Timed(Protocol):
    """A step of a case, made ``at_s`` after the workload's creation (a Job's ``Patch`` too)."""

    @property
    def at_s(self) -> float: ...


class Step(Timed, Protocol):
    """A step of a stepped case; ``replicas``: the workload's ``spec.replicas`` set (None: the step does
    something else)."""

    @property
    def replicas(self) -> int | None: ...


S = TypeVar("S", bound=Step)
S_co = TypeVar("S_co", bound=Step, covariant=True)
O = TypeVar("O")  # noqa: E741 (a side's outcome)
R = TypeVar("R")


class SteppedCase(Protocol[S_co]):
    """A case of ``e2e.fidelity.replicaset_cases`` or ``statefulset_cases``."""

    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def replicas(self) -> int: ...

    @property
    def steps(self) -> tuple[S_co, ...]: ...

    def nodes(self) -> list[dict[str, Any]]: ...

    def workload(self) -> dict[str, Any]: ...


C = TypeVar("C", bound=SteppedCase[Any])


@dataclass
class SteppedResult(Generic[O]):
    """A case on both sides: gpufleet's outcome and its warnings on the scenario, the real side's (None: it
    failed, ``error`` says why), when the real side made each step (s after the workload's creation) and how
    long it took."""

    name: str
    gpufleet: O
    warnings: list[str]
    real: O | None = None
    stepped_s: tuple[float, ...] = ()
    error: str = ""
    real_s: float = 0.0

    @property
    def agrees(self) -> bool:
        return not self.error and self.real == self.gpufleet


def make_steps(
    cp: ControlPlane,
    watches: Watches,
    case: SteppedCase[S],
    settled: Callable[[Watches, str, int], bool],
    make: Callable[[S], None],
    waits: Callable[[S], bool] = lambda step: True,
) -> tuple[float, list[float]]:
    """The real side of a case (see the module's docstring): its pods ``settled`` (given the watches, the
    namespace and the replicas the workload wants) before each step that ``waits`` for them and at the end,
    each step made (``make``) under the watches' lock; when the workload was created and each step was made
    (``time.monotonic``)."""
    from lightkube import ApiError, codecs

    deadline = time.monotonic() + CASE_TIMEOUT_S
    ns, replicas = case.namespace, case.replicas
    made: list[float] = []
    try:
        cp.client().create(codecs.from_dict(case.workload()))
        created = time.monotonic()
        for step in case.steps:
            if waits(step):
                watches.wait(
                    f"{ns}: settled before {step}", partial(settled, watches, ns, replicas), deadline
                )
            time.sleep(max(0.0, created + step.at_s - time.monotonic()))
            with watches.changed:
                made.append(time.monotonic())
                make(step)
            replicas = replicas if step.replicas is None else step.replicas
    except ApiError as exc:
        raise RunError(f"{ns}: {exc}") from None
    watches.wait(f"{ns}: settled at the end", partial(settled, watches, ns, replicas), deadline)
    time.sleep(QUIET_S)
    watches.wait(f"{ns}: settled at the end", partial(settled, watches, ns, replicas), deadline)
    return created, made


def steps_at(steps: Sequence[Timed], stepped_s: Sequence[float] | None) -> list[float]:
    """When gpufleet makes the steps: the real side's times (``stepped_s``), or each step's ``at_s``."""
    return [s.at_s for s in steps] if stepped_s is None else list(stepped_s)


def simulation(
    case: SteppedCase[S],
    at: Sequence[float],
    make: Callable[[Simulation, S], None],
    documents: Sequence[dict[str, Any]] = (),
) -> Simulation:
    """gpufleet's side of a case, not yet run (see the module's docstring): each step made (``make``) at its
    time in ``at``; ``documents``: more of the scenario (a Deployment case's Rollouts)."""
    run = {
        "apiVersion": "gpufleet.io/v1alpha1",
        "kind": "Simulation",
        "metadata": {"name": case.namespace},
        "spec": {"duration": f"{(max(at) if at else 0.0) + AFTER_S:.0f}s"},
    }
    sim = Simulation(load_documents([run, *case.nodes(), case.workload(), *documents]))
    for step, at_s in zip(case.steps, at, strict=True):
        sim.loop.at(at_s, Priority.ARRIVAL, partial(make, sim, step))
    return sim


def run_stepped_cases(
    cp: ControlPlane,
    app: str,
    cases: Sequence[C],
    run_real: Callable[[ControlPlane, C, Watches], tuple[O, tuple[float, ...]]],
    run_gpufleet: Callable[[C, Sequence[float] | None], tuple[O, list[str]]],
    result: Callable[..., R],
) -> list[R]:
    """Every case on the real side at once (``watches.side_by_side``, watching the pods labelled ``app``
    and the nodes; ``run_real``: a case's outcome and when it made each step), then simulated by gpufleet
    (``run_gpufleet``, with the real side's times where it ran): a ``result`` (a ``SteppedResult``) each."""
    collections = {"pods": "/api/v1/pods?labelSelector=app%3D" + app, "nodes": "/api/v1/nodes"}
    nodes = [n for c in cases for n in c.nodes()]
    runs = [partial(run_real, cp, c) for c in cases]
    real = side_by_side(cp, collections, [c.namespace for c in cases], nodes, runs)
    results = []
    for case, side in zip(cases, real, strict=True):
        if side.value is None:
            results.append(result(case.name, *run_gpufleet(case, None), error=side.error))
            continue
        ours, stepped = side.value
        results.append(result(case.name, *run_gpufleet(case, stepped), ours, stepped, "", side.seconds))
    return results
