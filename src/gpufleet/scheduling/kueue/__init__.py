"""Kueue-style tenant queues: quota per ClusterQueue and cohort, admission, and preemption.

Pure decision code (state in, decisions out), after ``kubernetes-sigs/kueue: pkg/scheduler``:

* :mod:`.workload` -- a workload as admission sees it (its pod sets, its queue order);
* :mod:`.quota` -- usage per ClusterQueue and what each may take, alone or from its cohort;
* :mod:`.flavors` -- flavor assignment, pod set by pod set, and the ``QuotaReserved`` message;
* :mod:`.preemption` -- candidates and the minimal set to evict (reclaim, within the queue), classical
  or fair sharing's;
* :mod:`.fair_sharing` -- fair sharing's dominant resource share, how shares compare, its strategies;
* :mod:`.fair_ordering` -- fair sharing's order of the queues to preempt from;
* :mod:`.tournament` -- fair sharing's order of a cycle's heads;
* :mod:`.admission` -- one scheduling cycle over the queues' heads.

The simulator drives it from ``gpufleet.control.kueue_queues``.
"""
