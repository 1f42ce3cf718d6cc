"""The node lifecycle's fidelity cases: nodes whose kubelet stops, as kube-controller-manager 1.34.10 learns
of it (``pkg/controller/nodelifecycle``: NotReady, the ``node.kubernetes.io/unreachable`` taints, the pods'
Ready condition; ``pkg/controller/tainteviction``: the pods deleted after what they tolerate;
``pkg/controller/replicaset``: their replacements) and as gpufleet models it (``sim.unreachable_nodes``, a
``node-loss`` fault (response ``lost``) on a node of no pool); see ``e2e.fidelity.node_failure_run``.

A case runs in a namespace of its own (``nf-<name>``) on nodes of its own (``nf-<name>-a``, ``-b``, ..., each
with 4 CPUs), all in a zone of its own (``topology.kubernetes.io/zone``: the namespace), so that the NoExecute
taints of one case never wait on another's in a zone's rate limiter. The nodes that fail (``down``) are
played by a kwok of their own (``DOWN_KWOK``), which the run kills: their Lease and status are no longer
renewed, as a kubelet that stopped. Its bare pods (``pods``) are each bound to the node they name (a
``nodeSelector`` on the node's name label); its ReplicaSet (``replicas`` > 0) prefers node a (a preferred
node affinity) and may go to any of the case's nodes. The pods ask for one CPU each, run until deleted and
keep the default ``terminationGracePeriodSeconds`` (30 s): a deletion the kubelet does not confirm stays
Terminating.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from e2e.fidelity.controller_cases import CASE_LABEL, KWOK_NODE, PREFERRED_LABEL
from gpufleet.kube.manifests import node_manifest
from gpufleet.model.node import Node
from gpufleet.model.node_readiness import UNREACHABLE_TAINT_KEY

#: the kwok that plays the nodes that fail (``ControlPlane.start_kwok``): they are annotated with its name
DOWN_KWOK = "kwok-down"
ZONE_LABEL = "topology.kubernetes.io/zone"
NODE_LABEL = "gpufleet.io/fidelity-node"
NAME = "serve"
#: a pod's tolerations: None, none of its own (``DefaultTolerationSeconds`` adds 300 s); else the seconds of
#: its ``node.kubernetes.io/unreachable:NoExecute`` toleration (-1: forever, no ``tolerationSeconds``)
FOREVER = -1


@dataclass(frozen=True)
class CasePod:
    """A bare pod of the case, bound to node ``node`` (a letter)."""

    name: str
    node: str
    tolerates_s: int | None = None


@dataclass(frozen=True)
class NodeFailureCase:
    name: str
    note: str
    nodes: int  # how many nodes: a, b, ...
    down: tuple[str, ...]  # the letters of those whose kubelet stops
    pods: tuple[CasePod, ...] = ()
    replicas: int = 0  # a ReplicaSet's pods (tolerating ``replica_tolerates_s``), node a preferred
    replica_tolerates_s: int | None = None

    @property
    def namespace(self) -> str:
        return f"nf-{self.name}"

    def node_name(self, letter: str) -> str:
        return f"{self.namespace}-{letter}"

    def letters(self) -> list[str]:
        return [chr(ord("a") + k) for k in range(self.nodes)]

    def letter(self, node: str | None) -> str:
        """The letter of the case's node ``node`` (empty: none of them, or no node)."""
        return next((x for x in self.letters() if self.node_name(x) == node), "")

    def toleration_s(self) -> list[int]:
        """The finite ``tolerationSeconds`` its pods were given (not the 300 s of the default)."""
        given = [p.tolerates_s for p in self.pods] + ([self.replica_tolerates_s] if self.replicas else [])
        return [s for s in given if s is not None and s != FOREVER]

    def node_manifests(self) -> list[dict[str, Any]]:
        """The case's kwok nodes, in its zone; those ``down`` played by ``DOWN_KWOK``."""
        return [
            node_manifest(
                Node(
                    self.node_name(letter),
                    labels={
                        CASE_LABEL: self.namespace,
                        NODE_LABEL: self.node_name(letter),
                        ZONE_LABEL: self.namespace,
                        **({PREFERRED_LABEL: "yes"} if letter == "a" else {}),
                    },
                    capacity={"cpu": 4000, "memory": 64 * 2**30, "pods": 110},
                ),
                {**KWOK_NODE, **({"kwok.x-k8s.io/node": DOWN_KWOK} if letter in self.down else {})},
            )
            for letter in self.letters()
        ]

    def workloads(self) -> list[dict[str, Any]]:
        """The bare pods, then the ReplicaSet (where ``replicas``)."""
        pods = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": p.name, "namespace": self.namespace, "labels": {"case": self.name}},
                "spec": _pod_spec({NODE_LABEL: self.node_name(p.node)}, p.tolerates_s),
            }
            for p in self.pods
        ]
        if not self.replicas:
            return pods
        preferred = {"key": PREFERRED_LABEL, "operator": "In", "values": ["yes"]}
        spec = _pod_spec({CASE_LABEL: self.namespace}, self.replica_tolerates_s)
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": {"matchExpressions": [preferred]}}
                ]
            }
        }
        labels = {"case": self.name, "app": NAME}
        replica_set = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": NAME, "namespace": self.namespace},
            "spec": {
                "replicas": self.replicas,
                "selector": {"matchLabels": {"app": NAME}},
                "template": {"metadata": {"labels": labels}, "spec": spec},
            },
        }
        return [*pods, replica_set]


def _pod_spec(node_selector: dict[str, str], tolerates_s: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeSelector": node_selector,
        "containers": [
            {
                "name": "main",
                "image": "registry.example.com/serve:v1",
                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
            }
        ],
    }
    if tolerates_s is not None:
        toleration: dict[str, Any] = {
            "key": UNREACHABLE_TAINT_KEY,
            "operator": "Exists",
            "effect": "NoExecute",
        }
        if tolerates_s != FOREVER:
            toleration["tolerationSeconds"] = tolerates_s
        spec["tolerations"] = [toleration]
    return spec


NODE_FAILURE_CASES: tuple[NodeFailureCase, ...] = (
    NodeFailureCase(
        "default-tolerations",
        "a pod of no toleration of its own: DefaultTolerationSeconds gives it 300 s, so it stays past the"
        " run, its Ready condition False from the node's NotReady (MarkPodsNotReady)",
        2,
        ("a",),
        (CasePod("p", "a"),),
    ),
    NodeFailureCase(
        "toleration-seconds",
        "pods tolerating unreachable:NoExecute for 10 s and 30 s are deleted that long after the taint, and"
        " stay Terminating (no kubelet confirms it)",
        2,
        ("a",),
        (CasePod("p10", "a", 10), CasePod("p30", "a", 30)),
    ),
    NodeFailureCase(
        "tolerated-forever",
        "a pod tolerating unreachable:NoExecute without tolerationSeconds is never deleted; a pod on the"
        " node that stays up is not touched",
        2,
        ("a",),
        (CasePod("forever", "a", FOREVER), CasePod("elsewhere", "b")),
    ),
    NodeFailureCase(
        "replicaset",
        "a ReplicaSet's pods tolerating 10 s: deleted 10 s after the taint, replaced at once on the node"
        " that is up (the down one tainted NoSchedule), the old ones left Terminating",
        2,
        ("a",),
        replicas=2,
        replica_tolerates_s=10,
    ),
    NodeFailureCase(
        "two-down-in-a-zone",
        "two nodes of a zone of three fail: the zone's rate limiter (--node-eviction-rate 0.1) taints the"
        " second NoExecute 10 s after the first, or at its NotReady if that is later",
        3,
        ("a", "b"),
        (CasePod("on-a", "a", 0), CasePod("on-b", "b", 0)),
    ),
)
