"""The StatefulSet controller's section of the fidelity report (``e2e.fidelity.report``, a timeline set's
section: ``e2e.fidelity.timeline_report``): each case of ``e2e.fidelity.statefulset_cases`` with its policy
and note, the order each side made and removed pods in, the gaps between them, and whether they agree."""

from __future__ import annotations

from e2e.fidelity.statefulset_cases import STATEFULSET_CASES
from e2e.fidelity.timeline_report import timeline_section

STATEFULSETS = timeline_section(
    "StatefulSet controller",
    "StatefulSet controller (kube-scheduler placing, kwok playing the pods)",
    "test_statefulset_controller_fidelity.py",
    "policy",
    {c.name: (c.policy, c.note) for c in STATEFULSET_CASES},
)
STATEFULSET_CONTROLLER_NOT_RUN = STATEFULSETS.not_run
statefulset_summary = STATEFULSETS.summary
statefulset_markdown = STATEFULSETS.markdown
