"""The flavor assigner's preemption oracle: would preemption make room for a request in one flavor?

Mirrors ``kubernetes-sigs/kueue: pkg/scheduler/preemption/preemption_oracle.go``
(``SimulatePreemption``): the preemption targets for ``val`` of one (flavor, resource) alone; none is
``NoCandidates``, targets in the preemptor's own ClusterQueue ``Preempt``, only in other queues
``Reclaim``; and the borrowing level (``FindHeightOfLowestSubtreeThatFits``) once the targets' usage
is gone, or as things stand where there are none.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.model.kueue import ClusterQueue, FairSharing, FlavorResource
from gpufleet.scheduling.kueue.flavors import Granular, Oracle, Possibility
from gpufleet.scheduling.kueue.preemption import preemption_targets
from gpufleet.scheduling.kueue.quota import QuotaSnapshot
from gpufleet.scheduling.kueue.workload import Admitted, Workload


def preemption_oracle(
    workload: Workload,
    cq: ClusterQueue,
    admitted: Sequence[Admitted],
    snapshot: QuotaSnapshot,
    fair_sharing: FairSharing | None = None,
) -> Oracle:
    """The oracle for ``workload`` in ``cq``, simulating on ``snapshot`` (left as it was), with fair
    sharing's preemption where ``fair_sharing`` is given."""
    by_key = {a.workload.key: a for a in admitted}

    def simulate(fr: FlavorResource, val: int) -> Granular:
        targets = preemption_targets(workload, cq, {fr: val}, admitted, snapshot, fair_sharing)
        if not targets:
            return Possibility.NO_CANDIDATES, snapshot.lowest_subtree_that_fits(cq.name, fr, val)[0]
        gone = [by_key[t.key] for t in targets]
        for victim in gone:
            snapshot.add(victim.workload.cluster_queue, victim.usage, -1)
        borrow = snapshot.lowest_subtree_that_fits(cq.name, fr, val)[0]
        for victim in gone:
            snapshot.add(victim.workload.cluster_queue, victim.usage)
        own = any(victim.workload.cluster_queue == cq.name for victim in gone)
        return (Possibility.PREEMPT if own else Possibility.RECLAIM), borrow

    return simulate
