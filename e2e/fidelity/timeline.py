"""A workload's timeline, as the StatefulSet and Deployment fidelity sets (``e2e.fidelity.statefulset_run``,
``deployment_run``) compare it: the order the steps were made and the pods created (``+<label>``) and gone
(``-<label>``) in, for each pod entry the time since the entry before it (``gaps_s``), the pods left and how
many were made.

A pod's label is the set's: its name (a StatefulSet's pods), or its template's version (a Deployment's, whose
pods' names are random). Where a controller's creations and deletions run concurrently (a ``Parallel``
StatefulSet's ``runForAll``; a Deployment's ReplicaSets, each synced on its own), the order within a burst
(pod entries each at most ``BURST_S`` after the one before) is not one of upstream's rules: a burst is
compared in ``_canonical`` order, its entries keyed by pod (``BY_POD``: a pod gone and made again under its
name in the burst keeps that order) or by entry (``BY_ENTRY``: a burst compared as a multiset). Gaps agree
within ``TOLERANCE_S`` (``e2e.fidelity.statefulset_run`` says how both were measured)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from e2e.fidelity import controller_cases
from e2e.fidelity.stepped_run import SteppedResult
from gpufleet.model.pod import Pod
from gpufleet.sim.records import PodRecord
from gpufleet.sim.simulation import Simulation
from gpufleet.sim.status_watch import StatusWatch

#: how far the two sides' gaps may be apart
TOLERANCE_S = 2.0
#: how close pod entries are to be one burst: the real side's take a few tens of milliseconds each (up to a
#: few hundred on a loaded machine), and pods deleted together with a grace period end up to a second apart
#: more (``deletionTimestamp`` is whole seconds: 1.03 s seen); the cases keep what is to be ordered at least
#: 3 s apart
BURST_S = 2.0


def BY_POD(what: str) -> str:
    """A burst's entry keyed by the pod it is of: its label, without the ``+`` or ``-``."""
    return what[1:]


def BY_ENTRY(what: str) -> str:
    """A burst's entry keyed by itself."""
    return what


#: (when, what): a step (``step <n>``), a pod created (``+<label>``) or gone (``-<label>``)
Entry = tuple[float, str]


@dataclass(frozen=True)
class Outcome:
    """The pods left, by label, sorted; the order of the steps (``step <n>``, from 1) and of the pods'
    creations (``+<label>``) and ends (``-<label>``), a burst in ``_canonical`` order; how many pods were
    made."""

    left: tuple[str, ...]
    order: tuple[str, ...]
    made: int


S = TypeVar("S")
#: the workload's name in every case
NAME = "serve"


@dataclass(frozen=True)
class TimelineCase(Generic[S]):
    """A case of a set compared by timelines (``statefulset_cases``, ``deployment_cases``): ``replicas`` pods
    of its workload, named ``serve``, the ``steps`` done to it, the ``expected`` outcome and, for each pod's
    creation or end in ``expected.order``, the time since the entry before it as upstream's rules set it
    (``gaps_s``); in a namespace of its own (``<PREFIX>-<name>``) on nodes of its own, one of each of
    ``cpus`` CPUs (``controller_cases``)."""

    PREFIX: ClassVar[str]
    KIND: ClassVar[str]

    name: str
    note: str
    replicas: int
    steps: tuple[S, ...]
    expected: Outcome
    gaps_s: tuple[float, ...]
    min_ready_s: int = 0
    grace_s: int = 0
    cpus: tuple[int, ...] = (4,)

    @property
    def namespace(self) -> str:
        return f"{self.PREFIX}-{self.name}"

    @property
    def key(self) -> str:
        """The workload as gpufleet files it (``<KIND>/<namespace>/<NAME>``)."""
        return f"{self.KIND}/{self.namespace}/{NAME}"

    def nodes(self) -> list[dict[str, Any]]:
        return controller_cases.case_nodes(self.namespace, self.cpus)


@dataclass(frozen=True)
class Timeline:
    """A side's outcome, and for each pod's creation or end the time since the entry before it."""

    outcome: Outcome
    gaps_s: tuple[float, ...]


class TimelineResult(SteppedResult[Timeline]):
    """A case on both sides: each side's order, the gaps in it, the pods left and made."""

    @property
    def order_agrees(self) -> bool:
        return self.real is not None and self.real.outcome == self.gpufleet.outcome

    @property
    def gaps_agree(self) -> bool:
        return self.real is not None and gaps_agree(self.real.gaps_s, self.gpufleet.gaps_s)

    @property
    def agrees(self) -> bool:
        return not self.error and self.order_agrees and self.gaps_agree


def gaps_agree(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= TOLERANCE_S for x, y in zip(a, b, strict=True))


def _canonical(burst: list[str], key: Callable[[str], str]) -> list[str]:
    """A burst's entries in an order of no side's timing: each key's first entry in the burst (sorted), then
    each key's second (under ``BY_POD``, a pod gone, then made again under its name), and so on."""
    seen: dict[str, int] = {}
    keyed = []
    for what in burst:
        nth = seen[key(what)] = seen.get(key(what), -1) + 1
        keyed.append((nth, what))
    return [what for _, what in sorted(keyed)]


def timeline(
    entries: list[Entry], left: list[str], bursts: Callable[[str], str] | None, burst_s: float = BURST_S
) -> Timeline:
    """A side's ``Timeline`` from its entries (times since the workload's creation; those at one time in the
    order they came) and the pods it left; ``bursts``: each burst (pod entries each at most ``burst_s``
    after the one before) put in ``_canonical`` order, keyed so (``BY_POD``, ``BY_ENTRY``; None: the entries
    in their order)."""
    entries = sorted(entries, key=lambda entry: entry[0])
    gaps, before = [], 0.0
    for at, what in entries:
        if not what.startswith("step"):
            gaps.append(at - before)
        before = at
    grouped: list[list[Entry]] = []
    for at, what in entries:
        burst = grouped[-1] if grouped else None
        if (
            burst
            and bursts is not None
            and "step" not in (what[:4], burst[-1][1][:4])
            and at - burst[-1][0] <= burst_s
        ):
            burst.append((at, what))
        else:
            grouped.append([(at, what)])
    key = bursts or BY_ENTRY  # (without bursts each group is one entry)
    order = tuple(what for burst in grouped for what in _canonical([w for _, w in burst], key))
    made = sum(what.startswith("+") for what in order)
    return Timeline(Outcome(tuple(sorted(left)), order, made), tuple(gaps))


def listen(sim: Simulation, namespace: str, entries: list[Entry], label: Callable[[Pod], str]) -> None:
    """Have ``entries`` note each pod of ``namespace`` created (``PodLifecycle.record``) and each gone
    (``Simulation.owner_finished`` with the pod deleted: bound or not), as its ``label``, at the simulator's
    time, in the order they come."""
    record, owner_finished = sim.lifecycle.record, sim.owner_finished

    def recorded(pod: Pod, scheduler: str, watch: StatusWatch | None = None) -> PodRecord:
        if pod.namespace == namespace:
            entries.append((sim.loop.now, f"+{label(pod)}"))
        return record(pod, scheduler, watch)

    def finished(pod: Pod, succeeded: bool) -> None:
        if pod.namespace == namespace and sim.records[pod.key].deleted_s is not None:
            entries.append((sim.loop.now, f"-{label(pod)}"))
        owner_finished(pod, succeeded)

    setattr(sim.lifecycle, "record", recorded)  # noqa: B010 (replaced on this instance alone)
    setattr(sim, "owner_finished", finished)  # noqa: B010
