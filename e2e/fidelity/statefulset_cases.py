"""The StatefulSet controller's fidelity cases: a StatefulSet scaled as an autoscaler does and a pod of it
deleted, run by kube-controller-manager's controller (``pkg/controller/statefulset``, Kubernetes 1.34.10)
with kube-scheduler on kwok, and by gpufleet's (``workloads.statefulset``, ``Simulation.scale``) in its
simulator; see ``e2e.fidelity.statefulset_run``.

A case runs in a namespace of its own (``sf-<name>``) on nodes of its own (``sf-<name>-a``, ...), as
``e2e.fidelity.controller_cases`` builds them. Its pods are gone at once when deleted
(``terminationGracePeriodSeconds: 0``), but for a case that gives a grace period: its pods carry the label
that has kwok honour it (``gpufleet.io/termination-grace: honoured``, ``e2e/kwok/stages.yaml``'s
``pod-delete-after-grace``: gone at their ``deletionTimestamp``).

What is compared (``Outcome``): the pods left, by name; the order the steps were made and the pods created
(``+<pod>``) and gone (``-<pod>``) in; how many pods were made. Under ``OrderedReady`` that order is the
controller's (``updateStatefulSet``: ``processReplica`` by ascending ordinal, each once the one before is
Running, Ready and available; ``processCondemned`` by descending ordinal, each once the one before is
gone). Under ``Parallel`` the controller creates and deletes in batches of 1, 2, 4, ... run concurrently
(``runForAll``, ``slowStartBatch``), and pods that end together are made again as each is seen gone, so
the order within a burst (pods created or gone within 2 s of each other, ``timeline.BURST_S``)
is not one of its rules: a burst is compared as a set, but for a pod gone and made again under its name
in it (first the pods' first entries, sorted, then their second). And, for each pod's creation or end in that
order, the time since the entry before it (the StatefulSet's creation for the first): ``gaps_s``, which
upstream's rules set: ``minReadySeconds`` between two creations under ``OrderedReady``, the grace period
between a pod's deletion and its end, no wait at all elsewhere (the steps' own times are the harness's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from e2e.fidelity import controller_cases
from e2e.fidelity.timeline import NAME, Outcome, TimelineCase

ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
#: the label that has kwok keep a deleted pod until its grace period is over (``e2e/kwok/stages.yaml``)
GRACE_LABEL = "gpufleet.io/termination-grace"


@dataclass(frozen=True)
class Step:
    """What is done ``at_s`` after the StatefulSet's creation (once its pods are where they go; ``settled``
    False: whatever they are doing, a pod being deleted still): its ``spec.replicas`` set (``replicas``; as
    an autoscaler does, through the scale), or the pod ``delete`` (its name) deleted with its own grace
    period."""

    at_s: float
    replicas: int | None = None
    delete: str = ""
    settled: bool = True


@dataclass(frozen=True)
class StatefulSetCase(TimelineCase[Step]):
    PREFIX = "sf"
    KIND = "StatefulSet"

    policy: str = ORDERED_READY
    start: int = 0  # spec.ordinals.start

    def workload(self) -> dict[str, Any]:
        """The StatefulSet: ``replicas`` pods of one CPU on the case's nodes."""
        labels = {"app": NAME}
        template = controller_cases.pod_template(self.namespace, labels, self.grace_s)
        if self.grace_s:
            template["metadata"]["labels"] = {**labels, GRACE_LABEL: "honoured"}
        spec: dict[str, Any] = {
            "replicas": self.replicas,
            "podManagementPolicy": self.policy,
            "selector": {"matchLabels": labels},
            "template": template,
        }
        if self.start:
            spec["ordinals"] = {"start": self.start}
        if self.min_ready_s:
            spec["minReadySeconds"] = self.min_ready_s
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": NAME, "namespace": self.namespace},
            "spec": spec,
        }


def _made(*ordinals: int) -> tuple[str, ...]:
    return tuple(f"+{NAME}-{o}" for o in ordinals)


def _gone(*ordinals: int) -> tuple[str, ...]:
    return tuple(f"-{NAME}-{o}" for o in ordinals)


def _pods(*ordinals: int) -> tuple[str, ...]:
    return tuple(sorted(f"{NAME}-{o}" for o in ordinals))


STATEFULSET_CASES: tuple[StatefulSetCase, ...] = (
    StatefulSetCase(
        "ordered-scale-up",
        "OrderedReady, scaled from 0 to 3: ordinal 0, 1, 2, each once the one before is Running and Ready",
        0,
        (Step(2, replicas=3),),
        Outcome(_pods(0, 1, 2), ("step 1", *_made(0, 1, 2)), 3),
        (0, 0, 0),
    ),
    StatefulSetCase(
        "parallel-scale-up",
        "Parallel, scaled from 0 to 3: all at once, minReadySeconds 5 waited for by none",
        0,
        (Step(2, replicas=3),),
        Outcome(_pods(0, 1, 2), ("step 1", *_made(0, 1, 2)), 3),
        (0, 0, 0),
        policy=PARALLEL,
        min_ready_s=5,
    ),
    StatefulSetCase(
        "ordered-scale-down",
        "OrderedReady, scaled from 3 to 1: the highest ordinal first, the next once it is gone",
        3,
        (Step(3, replicas=1),),
        Outcome(_pods(0), (*_made(0, 1, 2), "step 1", *_gone(2, 1)), 3),
        (0, 0, 0, 0, 0),
    ),
    StatefulSetCase(
        "parallel-scale-down",
        "Parallel, scaled from 3 to 1: both condemned pods deleted at once",
        3,
        (Step(3, replicas=1),),
        Outcome(_pods(0), (*_made(0, 1, 2), "step 1", *_gone(1, 2)), 3),
        (0, 0, 0, 0, 0),
        policy=PARALLEL,
    ),
    StatefulSetCase(
        "ordinals-start",
        "ordinals.start 5: pods 5 and 6, then 7 when scaled to 3",
        2,
        (Step(3, replicas=3),),
        Outcome(_pods(5, 6, 7), (*_made(5, 6), "step 1", *_made(7)), 3),
        (0, 0, 0),
        start=5,
    ),
    StatefulSetCase(
        "min-ready-seconds",
        "OrderedReady with minReadySeconds 5, scaled from 0 to 3: each pod 5 s after the one before is Ready",
        0,
        (Step(2, replicas=3),),
        Outcome(_pods(0, 1, 2), ("step 1", *_made(0, 1, 2)), 3),
        (0, 5, 5),
        min_ready_s=5,
    ),
    StatefulSetCase(
        "deleted-pod-made-again",
        "pod 0 deleted with a grace period of 6 s: made again under its name once the old one is gone",
        2,
        (Step(3, delete=f"{NAME}-0"),),
        Outcome(_pods(0, 1), (*_made(0, 1), "step 1", *_gone(0), *_made(0)), 3),
        (0, 0, 6, 0),
        grace_s=6,
    ),
    StatefulSetCase(
        "ordered-scale-down-graceful",
        "OrderedReady, scaled from 3 to 1, a grace period of 6 s: pod 1 deleted only once pod 2 is gone",
        3,
        (Step(3, replicas=1),),
        Outcome(_pods(0), (*_made(0, 1, 2), "step 1", *_gone(2, 1)), 3),
        (0, 0, 0, 6, 6),
        grace_s=6,
    ),
    StatefulSetCase(
        "parallel-scale-down-graceful",
        "Parallel, scaled from 3 to 1, a grace period of 6 s: both deleted at once, gone together",
        3,
        (Step(3, replicas=1),),
        Outcome(_pods(0), (*_made(0, 1, 2), "step 1", *_gone(1, 2)), 3),
        (0, 0, 0, 6, 0),
        policy=PARALLEL,
        grace_s=6,
    ),
    StatefulSetCase(
        "ordered-scale-up-while-terminating",
        "OrderedReady: pod 0 deleted (grace 6 s), then scaled from 2 to 3: pod 2 waits for pod 0 to be gone,"
        " made again and Ready",
        2,
        (Step(3, delete=f"{NAME}-0"), Step(4, replicas=3, settled=False)),
        Outcome(_pods(0, 1, 2), (*_made(0, 1), "step 1", "step 2", *_gone(0), *_made(0, 2)), 4),
        (0, 0, 5, 0, 0),
        grace_s=6,
    ),
    StatefulSetCase(
        "parallel-scale-up-while-terminating",
        "Parallel: pod 0 deleted (grace 6 s), then scaled from 2 to 3: pod 2 at once, pod 0 once the old one"
        " is gone",
        2,
        (Step(3, delete=f"{NAME}-0"), Step(4, replicas=3, settled=False)),
        Outcome(_pods(0, 1, 2), (*_made(0, 1), "step 1", "step 2", *_made(2), *_gone(0), *_made(0)), 4),
        (0, 0, 0, 5, 0),
        policy=PARALLEL,
        grace_s=6,
    ),
    StatefulSetCase(
        "unschedulable-pod-condemned-first",
        "OrderedReady on 2 CPUs, scaled from 2 to 3 (pod 2 left unschedulable) then to 1: pod 2, the first"
        " unhealthy, deleted though not Running, then pod 1",
        2,
        (Step(2, replicas=3), Step(4, replicas=1)),
        Outcome(_pods(0), (*_made(0, 1), "step 1", *_made(2), "step 2", *_gone(2, 1)), 3),
        (0, 0, 0, 0, 0),
        cpus=(2,),
    ),
    StatefulSetCase(
        "ordered-scale-down-undone-while-terminating",
        "OrderedReady, grace 6 s: scaled from 3 to 1, then back to 3 while pod 2 is being deleted: pod 2 made"
        " again once gone, pod 1 kept",
        3,
        (Step(3, replicas=1), Step(4, replicas=3, settled=False)),
        Outcome(_pods(0, 1, 2), (*_made(0, 1, 2), "step 1", "step 2", *_gone(2), *_made(2)), 4),
        (0, 0, 0, 5, 0),
        grace_s=6,
    ),
    StatefulSetCase(
        "parallel-scale-down-undone-while-terminating",
        "Parallel, grace 6 s: scaled from 3 to 1, then back to 3 while pods 1 and 2 are being deleted: both"
        " made again once gone",
        3,
        (Step(3, replicas=1), Step(4, replicas=3, settled=False)),
        Outcome(_pods(0, 1, 2), (*_made(0, 1, 2), "step 1", "step 2", *_gone(1, 2), *_made(1, 2)), 5),
        (0, 0, 0, 5, 0, 0, 0),
        policy=PARALLEL,
        grace_s=6,
    ),
    StatefulSetCase(
        "min-ready-scale-down-first-unavailable",
        "OrderedReady with minReadySeconds 5, scaled from 0 to 3, then to 1 while pod 2 is Ready but not yet"
        " available: pod 2, the first unavailable, deleted at once, then pod 1",
        0,
        (Step(2, replicas=3), Step(13, replicas=1)),
        Outcome(_pods(0), ("step 1", *_made(0, 1, 2), "step 2", *_gone(2, 1)), 3),
        (0, 5, 5, 0, 0),
        min_ready_s=5,
    ),
)
