"""Judging one pod of a fidelity case: gpufleet against the real kube-scheduler.

Per pod, two judgements:

- the decision (``decision_agrees``): kube-scheduler bound the pod at its first attempt to one of
  the nodes gpufleet ranks best (one node where the choice is determined, else any of the tied
  ones); or both failed it with the same message, verbatim, in the ``FailedScheduling`` Event and
  in the ``PodScheduled`` condition, and then both preempted alike (the nominated node among
  gpufleet's equally ranked candidates, the same victims deleted) or neither did; or neither has a
  scheduler for it. (Where a preemptor then lands, or that it still does not fit, the end judges.)
- the end (``end_agrees``): after the last pod, the pod is bound to the same node in the simulator
  as in the real cluster, or pending in both with the same message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from e2e.fidelity.gpufleet_side import SimulatedPod
from e2e.fidelity.real import FinalPod, RealStep
from gpufleet.scheduling.messages import NO_SCHEDULER
from gpufleet.scheduling.scheduler import Decision


@dataclass(frozen=True)
class Verdict:
    agrees: bool
    why: str = ""  # what differs


def real_summary(step: RealStep) -> dict[str, Any]:
    return {
        "node": step.node,
        "bound_at_first_attempt": step.bound_first,
        "event_message": step.event_message,
        "condition_message": step.condition_message,
        "nominated": step.nominated,
        "preempted": list(step.preempted),
    }


def decision_summary(decision: Decision | str) -> dict[str, Any]:
    if isinstance(decision, str):
        return {"message": decision}
    if decision.nodes:
        return {"nodes": list(decision.nodes)}
    out: dict[str, Any] = {"message": decision.message}
    if decision.nominations:
        out["nominations"] = [{"node": n, "victims": list(v)} for n, v in decision.nominations]
    return out


def decision_agrees(step: RealStep, decision: Decision | str) -> Verdict:
    if isinstance(decision, str):  # no gpufleet scheduler serves it
        if step.node is None and step.condition_message is None:
            return Verdict(True)
        return Verdict(False, f"gpufleet: {decision}; kube-scheduler decided it")
    if decision.nodes:
        if step.bound_first and step.node in decision.nodes:
            return Verdict(True)
        if step.node is not None and step.bound_first:
            return Verdict(
                False, f"bound to {step.node}, not one of gpufleet's best {', '.join(decision.nodes)}"
            )
        return Verdict(
            False, f"gpufleet binds it to {', '.join(decision.nodes)}; kube-scheduler: {step.event_message}"
        )
    wrong = []
    if step.event_message != decision.message:
        wrong.append("the Event's message differs")
    if step.condition_message != decision.message:
        wrong.append("the PodScheduled condition's message differs")
    if decision.nominations:
        victims = dict(decision.nominations)
        if step.nominated not in victims:
            wrong.append(f"nominated {step.nominated}, not one of {', '.join(victims)}")
        else:
            if set(step.preempted) != set(victims[step.nominated]):
                gpufleet = sorted(victims[step.nominated])
                wrong.append(f"preempted {sorted(step.preempted)}, gpufleet {gpufleet} on {step.nominated}")
    elif step.nominated or step.preempted or step.node:
        went = f"nominated {step.nominated}, preempted {list(step.preempted)}, node {step.node}"
        wrong.append(f"kube-scheduler went on: {went}")
    return Verdict(not wrong, "; ".join(wrong))


def end_agrees(final: FinalPod | None, simulated: SimulatedPod | None) -> Verdict:
    if final is None or simulated is None:
        if final is None and simulated is None:
            return Verdict(True)
        gone = "the real cluster" if final is None else "the simulator"
        return Verdict(False, f"the pod is gone in {gone} only")
    if final.node != simulated.node:
        return Verdict(
            False, f"real on {final.node or 'no node'}, simulated on {simulated.node or 'no node'}"
        )
    if final.node is not None:
        return Verdict(True)
    if final.condition_message is None:  # nothing decided it: no scheduler has its name
        unserved = simulated.message is not None and simulated.message.startswith(NO_SCHEDULER)
        return Verdict(
            unserved, "" if unserved else f"undecided in the real cluster; simulated: {simulated.message}"
        )
    if final.condition_message != simulated.message:
        return Verdict(False, "pending in both, with different messages")
    return Verdict(True)
