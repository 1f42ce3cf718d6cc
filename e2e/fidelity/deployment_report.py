"""The Deployment controller's rollout section of the fidelity report (``e2e.fidelity.report``, a timeline
set's section: ``e2e.fidelity.timeline_report``): each case of ``e2e.fidelity.deployment_cases`` with its
strategy and note, the order each side made and removed pods in by version, the gaps between them, and
whether they agree."""

from __future__ import annotations

from e2e.fidelity.deployment_cases import DEPLOYMENT_CASES
from e2e.fidelity.timeline_report import timeline_section

DEPLOYMENTS = timeline_section(
    "Deployment rollouts",
    "Deployment and ReplicaSet controllers (kube-scheduler placing, kwok playing the pods)",
    "test_deployment_controller_fidelity.py",
    "strategy",
    {c.name: (c.kind, c.note) for c in DEPLOYMENT_CASES},
)
DEPLOYMENT_CONTROLLER_NOT_RUN = DEPLOYMENTS.not_run
deployment_summary = DEPLOYMENTS.summary
deployment_markdown = DEPLOYMENTS.markdown
