"""Node selector terms from their manifest form (``v1.NodeSelectorTerm``, ``v1.PreferredSchedulingTerm``),
built as written: checking them is the manifest reader's (``kube.node_affinity``) or the scheduler
configuration's (``ValidateNodeAffinityArgs``) job. A term that upstream's selector parser would
refuse still matches no node (``SelectorTerm.parse_errors``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.model.pod import PreferredTerm, Requirement, SelectorTerm


def _requirements(raw: object) -> tuple[Requirement, ...]:
    entries = raw if isinstance(raw, list) else []
    return tuple(
        Requirement(
            str(e.get("key") or ""),
            str(e.get("operator") or ""),
            tuple(str(v) for v in e.get("values") or ()),
        )
        for e in entries
        if isinstance(e, Mapping)
    )


def node_selector_term(raw: Mapping[str, Any]) -> SelectorTerm:
    """One ``nodeSelectorTerms`` entry: its ``matchExpressions`` and ``matchFields``."""
    return SelectorTerm(_requirements(raw.get("matchExpressions")), _requirements(raw.get("matchFields")))


def node_selector_terms(raw: Mapping[str, Any]) -> tuple[SelectorTerm, ...]:
    """A ``NodeSelector``'s terms (any of them may match)."""
    terms = raw.get("nodeSelectorTerms")
    return tuple(
        node_selector_term(t) for t in (terms if isinstance(terms, list) else []) if isinstance(t, Mapping)
    )


def preferred_term(raw: Mapping[str, Any]) -> PreferredTerm:
    """A ``PreferredSchedulingTerm``: its weight and preference."""
    preference = raw.get("preference")
    weight = raw.get("weight")
    return PreferredTerm(
        weight if isinstance(weight, int) else 0,
        node_selector_term(preference if isinstance(preference, Mapping) else {}),
    )
