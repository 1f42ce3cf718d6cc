"""Known differences: cases where gpufleet deliberately decides otherwise than kube-scheduler, each
with the reason (the README's "Known differences" lists them with the same cases). Their pods are
compared and reported like any other, but not counted against agreement."""

from __future__ import annotations

KNOWN_DIFFERENCES: dict[str, str] = {
    "examples/priority/gang-preemption.yaml": (
        "gang-aware DefaultPreemption, a deliberate divergence: gpufleet plans every rank of a PodGroup "
        "at once (as Volcano and KAI do), kube-scheduler preempts for each pod alone, so where candidate "
        "nodes tie the ranks may end on other nodes"
    ),
}
