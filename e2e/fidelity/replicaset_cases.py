"""The ReplicaSet controller's fidelity cases: a ReplicaSet (or a Deployment, through its ReplicaSet) scaled
and its pods annotated or deleted as a user or an autoscaler does, run by kube-controller-manager's
controllers (``pkg/controller/replicaset``, ``pkg/controller/deployment``, Kubernetes 1.34.10) with
kube-scheduler on kwok, and by gpufleet's (``workloads.replicaset``, ``Simulation.scale``) in its simulator;
see ``e2e.fidelity.replicaset_run``.

A case runs in a namespace of its own (``rf-<name>``) on nodes of its own (``rf-<name>-a``, ``-b``, ...),
as ``e2e.fidelity.controller_cases`` builds them. Its pods run until deleted
(``terminationGracePeriodSeconds: 0``: kwok removes a deleted pod at once).

What is compared is the end (``Outcome``): the pods left, each as the node it is on (its letter; empty for
a pending pod) and the step it was created after (0: before the first step; a step that makes pods makes
them after it), and how many pods were made in all. Which pods a scale-down deletes is
``controller.ActivePodsWithRanks``' order (``getPodsToDelete``): unassigned first, then Pending, not ready,
a lower ``controller.kubernetes.io/pod-deletion-cost``, more of the set's pods on the same node, ready for
less time (log2 buckets), more restarts, newer (log2 buckets); the cases are written so that these rules
decide alone, never the pods' random UIDs. The node rule counts the pods of the ReplicaSets that share the
set's controller (``getIndirectlyRelatedPods``): a Deployment's ReplicaSet ranks its pods by node, a
ReplicaSet no controller owns ranks none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from e2e.fidelity import controller_cases

NAME = "serve"
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


@dataclass(frozen=True)
class Step:
    """What is done ``at_s`` after the workload's creation (once its pods are where they go): its
    ``spec.replicas`` set (``replicas``), the pod on node ``annotate`` given a pod-deletion-cost of ``cost``,
    or the pod on node ``delete`` deleted."""

    at_s: float
    replicas: int | None = None
    annotate: str = ""
    cost: int = 0
    delete: str = ""


@dataclass(frozen=True)
class Outcome:
    """The pods left, each as (its node's letter, or empty where pending; the steps made before its
    creation), sorted; and how many pods were made."""

    left: tuple[tuple[str, int], ...]
    made: int


@dataclass(frozen=True)
class ReplicaSetCase:
    name: str
    note: str
    cpus: tuple[int, ...]  # each node's CPUs, for nodes a, b, c, ...
    replicas: int
    steps: tuple[Step, ...]
    expected: Outcome
    kind: str = "ReplicaSet"  # or Deployment

    @property
    def namespace(self) -> str:
        return f"rf-{self.name}"

    @property
    def key(self) -> str:
        """The workload as gpufleet files it (``<Kind>/<namespace>/<name>``)."""
        return f"{self.kind}/{self.namespace}/{NAME}"

    def node_name(self, letter: str) -> str:
        return controller_cases.node_name(self.namespace, letter)

    def letters(self) -> list[str]:
        return controller_cases.letters(self.cpus)

    def nodes(self) -> list[dict[str, Any]]:
        """The case's kwok nodes, labelled with the case."""
        return controller_cases.case_nodes(self.namespace, self.cpus)

    def workload(self) -> dict[str, Any]:
        """The ReplicaSet or Deployment: ``replicas`` pods of one CPU on the case's nodes, a preferred."""
        labels = {"app": NAME}
        return {
            "apiVersion": "apps/v1",
            "kind": self.kind,
            "metadata": {"name": NAME, "namespace": self.namespace},
            "spec": {
                "replicas": self.replicas,
                "selector": {"matchLabels": labels},
                "template": controller_cases.pod_template(self.namespace, labels),
            },
        }


REPLICASET_CASES: tuple[ReplicaSetCase, ...] = (
    ReplicaSetCase(
        "scale-up",
        "scaled up: the new pods are made at once, after the step",
        (8,),
        2,
        (Step(3, replicas=5),),
        Outcome((("a", 0), ("a", 0), ("a", 1), ("a", 1), ("a", 1)), 5),
    ),
    ReplicaSetCase(
        "pending-first",
        "rule 1: the pod no node has room for is deleted first",
        (2,),
        3,
        (Step(3, replicas=2),),
        Outcome((("a", 0), ("a", 0)), 3),
    ),
    ReplicaSetCase(
        "doubled-up",
        "rule 5: a Deployment's ReplicaSet deletes the pods on the node that holds more of its pods first",
        (3, 1),
        4,
        (Step(3, replicas=2),),
        Outcome((("a", 0), ("b", 0)), 4),
        kind="Deployment",
    ),
    ReplicaSetCase(
        "deployment-ranks-by-node",
        "rule 5 before rule 6: of a Deployment's pods, an old one doubled up on node a goes before the new"
        " one alone on node b",
        (2, 1),
        2,
        (Step(20, replicas=3), Step(25, replicas=2)),
        Outcome((("a", 0), ("b", 1)), 3),
        kind="Deployment",
    ),
    ReplicaSetCase(
        "replicaset-ranks-no-node",
        "a ReplicaSet no controller owns ranks no pod by node (getIndirectlyRelatedPods finds none): rule 6"
        " deletes the new pod alone on node b",
        (2, 1),
        2,
        (Step(20, replicas=3), Step(25, replicas=2)),
        Outcome((("a", 0), ("a", 0)), 3),
    ),
    ReplicaSetCase(
        "deletion-cost",
        "rule 4: the lower pod-deletion-cost goes first, an unannotated pod counting 0",
        (1, 1, 1),
        3,
        (
            Step(3, annotate="b", cost=-100),
            Step(3, annotate="c", cost=100),
            Step(5, replicas=2),
            Step(8, replicas=1),
        ),
        Outcome((("c", 0),), 3),
    ),
    ReplicaSetCase(
        "cost-over-rank",
        "rule 4 before rule 5: a pod of lower cost goes first though another node holds more of the set",
        (2, 1),
        3,
        (Step(3, annotate="b", cost=-1), Step(5, replicas=2)),
        Outcome((("a", 0), ("a", 0)), 3),
        kind="Deployment",
    ),
    ReplicaSetCase(
        "newer-ready-first",
        "rule 6: the pods ready for less time go first (ready 5 s against 25 s: other log2 buckets)",
        (8,),
        2,
        (Step(20, replicas=4), Step(25, replicas=2)),
        Outcome((("a", 0), ("a", 0)), 4),
    ),
    ReplicaSetCase(
        "deleted-pod-replaced",
        "a deleted pod is replaced at once, where there is room",
        (1, 1),
        2,
        (Step(3, delete="a"),),
        Outcome((("a", 1), ("b", 0)), 3),
    ),
    ReplicaSetCase(
        "scale-to-zero-and-back",
        "scaled to 0, every pod goes; scaled to 1 again, a new one is made",
        (2,),
        2,
        (Step(3, replicas=0), Step(6, replicas=1)),
        Outcome((("a", 2),), 3),
    ),
)
