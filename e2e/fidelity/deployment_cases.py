"""The Deployment controller's rollout fidelity cases: a Deployment's pod template changed (a rollout), run by
kube-controller-manager's Deployment and ReplicaSet controllers (``pkg/controller/deployment``:
``rolloutRolling``, ``rolloutRecreate``; Kubernetes 1.34.10) with kube-scheduler on kwok, and by gpufleet's
(``workloads.deployment``, ``sim.rollouts``: a gpufleet ``Rollout`` at the time the real side patched the
template) in its simulator; see ``e2e.fidelity.deployment_run``.

A case runs in a namespace of its own (``df-<name>``) on nodes of its own (``df-<name>-a``, ...), as
``e2e.fidelity.controller_cases`` builds them. Each template is a version (``v1``, ``v2``, ``v3``: the pods'
``version`` label and image tag; the selector is ``app`` alone); a step changes the template to another
version, as ``kubectl set image`` does. A Deployment's pods are gone at once when deleted, but for a case that
gives a grace period: its pods carry the label that has kwok honour it (``statefulset_cases.GRACE_LABEL``).

What is compared (``e2e.fidelity.timeline``), from the first step on (the pods before it are the case's start:
``replicas`` of v1): the order of the steps and of the pods' creations (``+v2``: a pod of version v2's
ReplicaSet made) and ends (``-v1``), with the time between them; the pods left, by version (``v2 pending``:
left unschedulable); how many pods the rollout made. A Deployment's ReplicaSets are synced each on its own
(the Deployment controller scales them, the ReplicaSet controller makes and deletes their pods, both from
their informers): within a burst (pod entries each at most ``BURST_S`` apart) the order is not one of
upstream's rules, and the burst is compared as a multiset (``BY_ENTRY``). A rolling update's steps come
apart where ``minReadySeconds`` holds the next one back (``IsPodAvailable``); without it nothing but the
controllers' latency spaces them, and all the entries between two steps are one burst. A ``Recreate``'s
entries keep their order: its new pods come once the old pods' grace period is over (``oldPodsRunning``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from e2e.fidelity import controller_cases
from e2e.fidelity.statefulset_cases import GRACE_LABEL
from e2e.fidelity.timeline import NAME, Outcome, TimelineCase

VERSION = "version"
FIRST = "v1"
ROLLING_UPDATE, RECREATE = "RollingUpdate", "Recreate"
#: when a case of ``minReadySeconds`` (5 s) changes its template: once its first pods are available, though
#: the real side makes them up to 2.5 s late under load (an old pod not yet available is one
#: ``cleanupUnhealthyReplicas`` scales down first: a real rollout begun at 6 s took v1's pods first)
AVAILABLE_S = 10.0


@dataclass(frozen=True)
class Step:
    """The template changed to ``version`` ``at_s`` after the Deployment's creation (once its pods are where
    they go and none is being deleted; ``settled`` False: mid-rollout, once a pod of the step before is
    Ready)."""

    at_s: float
    version: str
    settled: bool = True

    @property
    def replicas(self) -> int | None:
        """A template change keeps ``spec.replicas`` (``stepped_run.Step``)."""
        return None


def template_patch(version: str) -> dict[str, Any]:
    """The change of a step: the pods' ``version`` label and image, as a strategic merge patch of the pod
    template (the real side's ``kubectl patch``; gpufleet's ``Rollout`` merges it the same way)."""
    return {
        "metadata": {"labels": {VERSION: version}},
        "spec": {"containers": [{"name": "main", "image": f"registry.example.com/serve:{version}"}]},
    }


@dataclass(frozen=True)
class DeploymentCase(TimelineCase[Step]):
    PREFIX = "df"
    KIND = "Deployment"

    cpus: tuple[int, ...] = (8,)
    strategy: str = ROLLING_UPDATE
    max_surge: int | str | None = None  # None: the API server's default, 25 %
    max_unavailable: int | str | None = None

    @property
    def kind(self) -> str:
        """The strategy as the report's column writes it (``RollingUpdate 1/0``: maxSurge/maxUnavailable)."""
        if self.strategy == RECREATE:
            return RECREATE
        surge = "25%" if self.max_surge is None else self.max_surge
        unavailable = "25%" if self.max_unavailable is None else self.max_unavailable
        return f"{ROLLING_UPDATE} {surge}/{unavailable}"

    def workload(self) -> dict[str, Any]:
        """The Deployment: ``replicas`` pods of one CPU of version v1 on the case's nodes."""
        template = controller_cases.pod_template(self.namespace, {"app": NAME}, self.grace_s)
        template["metadata"]["labels"] = {
            "app": NAME,
            VERSION: FIRST,
            **({GRACE_LABEL: "honoured"} if self.grace_s else {}),
        }
        strategy: dict[str, Any] = {"type": self.strategy}
        rolling = {
            field: value
            for field, value in (("maxSurge", self.max_surge), ("maxUnavailable", self.max_unavailable))
            if value is not None
        }
        if rolling:
            strategy["rollingUpdate"] = rolling
        spec: dict[str, Any] = {
            "replicas": self.replicas,
            "selector": {"matchLabels": {"app": NAME}},
            "strategy": strategy,
            "template": template,
        }
        if self.min_ready_s:
            spec["minReadySeconds"] = self.min_ready_s
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": NAME, "namespace": self.namespace},
            "spec": spec,
        }

    def rollouts(self, at: list[float]) -> list[dict[str, Any]]:
        """gpufleet's side of the steps: a ``Rollout`` of each step's template at its time in ``at``."""
        return [
            {
                "apiVersion": "gpufleet.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {"name": f"step-{n}", "namespace": self.namespace},
                "spec": {"at": at_s, "deployment": NAME, "template": template_patch(step.version)},
            }
            for n, (step, at_s) in enumerate(zip(self.steps, at, strict=True), 1)
        ]


def _of(*labels: str, n: int) -> tuple[str, ...]:
    """``labels``, ``n`` times over."""
    return labels * n


DEPLOYMENT_CASES: tuple[DeploymentCase, ...] = (
    DeploymentCase(
        "defaults",
        "25 %/25 % of 4 (surge 1, 1 unavailable), pods available once Ready: the whole rollout one burst,"
        " 4 new pods made and 4 old deleted",
        4,
        (Step(3, "v2"),),
        Outcome(_of("v2", n=4), ("step 1", *_of("+v2", "-v1", n=4)), 4),
        (0,) * 8,
    ),
    DeploymentCase(
        "defaults-min-ready",
        "25 %/25 % of 4, minReadySeconds 5: 2 new and 1 old deleted at once, 2 old deleted and 2 new made"
        " once both are available, the last old one 5 s later",
        4,
        (Step(AVAILABLE_S, "v2"),),
        Outcome(
            _of("v2", n=4),
            ("step 1", "+v2", "-v1", "+v2", "+v2", "-v1", "+v2", "-v1", "-v1"),
            4,
        ),
        (0, 0, 0, 5, 0, 0, 0, 5),
        min_ready_s=5,
    ),
    DeploymentCase(
        "surge-1-unavailable-0",
        "maxSurge 1, maxUnavailable 0, minReadySeconds 5: one new pod at a time, an old one deleted once it"
        " is available",
        3,
        (Step(AVAILABLE_S, "v2"),),
        Outcome(_of("v2", n=3), ("step 1", "+v2", "+v2", "-v1", "+v2", "-v1", "-v1"), 3),
        (0, 5, 0, 5, 0, 5),
        max_surge=1,
        max_unavailable=0,
        min_ready_s=5,
    ),
    DeploymentCase(
        "surge-0-unavailable-1",
        "maxSurge 0, maxUnavailable 1, minReadySeconds 5: an old pod deleted first, its new one made at once,"
        " the next once that is available",
        3,
        (Step(AVAILABLE_S, "v2"),),
        Outcome(_of("v2", n=3), ("step 1", "+v2", "-v1", "+v2", "-v1", "+v2", "-v1"), 3),
        (0, 0, 5, 0, 5, 0),
        max_surge=0,
        max_unavailable=1,
        min_ready_s=5,
    ),
    DeploymentCase(
        "percentages-round",
        "50 %/50 % of 3, minReadySeconds 5: the surge rounds up to 2, the unavailable down to 1: 2 new pods"
        " and 1 old deleted at once, then the third new pod (5 pods at most), the 2 old ones once the new"
        " are available",
        3,
        (Step(AVAILABLE_S, "v2"),),
        Outcome(_of("v2", n=3), ("step 1", "+v2", "-v1", "+v2", "+v2", "-v1", "-v1"), 3),
        (0, 0, 0, 0, 5, 0),
        max_surge="50%",
        max_unavailable="50%",
        min_ready_s=5,
    ),
    DeploymentCase(
        "recreate",
        "Recreate, a grace period of 6 s: every old pod deleted, the new ones made once all are gone",
        3,
        (Step(3, "v2"),),
        Outcome(_of("v2", n=3), ("step 1", *_of("-v1", n=3), *_of("+v2", n=3)), 3),
        (6, 0, 0, 0, 0, 0),
        strategy=RECREATE,
        grace_s=6,
    ),
    DeploymentCase(
        "changed-mid-rollout",
        "maxSurge 1, maxUnavailable 0, minReadySeconds 5: changed to v3 while v2's surge pod is not"
        " available: v2's ReplicaSet scaled down first (cleanupUnhealthyReplicas), v3 rolled out",
        3,
        (Step(AVAILABLE_S, "v2"), Step(AVAILABLE_S + 3, "v3", settled=False)),
        Outcome(
            _of("v3", n=3),
            ("step 1", "+v2", "step 2", "+v3", "-v2", "+v3", "-v1", "+v3", "-v1", "-v1"),
            4,
        ),
        (0, 0, 0, 5, 0, 5, 0, 5),
        max_surge=1,
        max_unavailable=0,
        min_ready_s=5,
    ),
    DeploymentCase(
        "rollback",
        "maxSurge 1, maxUnavailable 0: rolled out to v2, then back to v1: v1's ReplicaSet scaled up again",
        3,
        (Step(3, "v2"), Step(6, "v1")),
        Outcome(
            _of("v1", n=3),
            ("step 1", *_of("+v2", "-v1", n=3), "step 2", *_of("+v1", "-v2", n=3)),
            6,
        ),
        (0,) * 12,
        max_surge=1,
        max_unavailable=0,
    ),
    DeploymentCase(
        "surge-unschedulable",
        "maxSurge 1, maxUnavailable 0 on a full node: the surge pod cannot be scheduled, no old pod is"
        " deleted, the rollout stalls",
        4,
        (Step(3, "v2"),),
        Outcome((*_of("v1", n=4), "v2 pending"), ("step 1", "+v2"), 1),
        (0,),
        max_surge=1,
        max_unavailable=0,
        cpus=(4,),
    ),
)
