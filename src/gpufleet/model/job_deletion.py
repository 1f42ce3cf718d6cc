"""The garbage collector's deletion of a Job being deleted and of its pods
(``pkg/controller/garbagecollector``, Kubernetes v1.34.10), from the finalizers the API server put on the Job
as it was deleted (``metadata.finalizers``, ``pkg/registry/generic/registry/store.go``:
``deletionFinalizersForGarbageCollection``):

- ``foregroundDeletion`` (``propagationPolicy: Foreground``): the collector deletes the Job's pods first
  (``processDeletingDependentsItem``: its dependents that block their owner's deletion, as the Job
  controller's pods do, ``blockOwnerDeletion``), each through its grace period, and removes the finalizer once
  none is left: the Job is gone. Until then the Job controller counts them as they end (``syncJob`` runs on
  a Job being deleted, without ``manageJob``).
- ``orphan`` (``Orphan``): the collector removes the Job from its pods' ``ownerReferences``
  (``orphanDependents``) and then the finalizer: the Job is gone at once, its pods run on, no longer its own
  (nothing counts or replaces them).
- neither (``Background``): the Job is gone once no finalizer holds it; the collector then deletes its pods
  (``attemptToDeleteItem``: their owner is absent), each through its grace period.

Other finalizers (a controller's own) hold the Job until that controller removes them, which nothing in a
simulation does: under ``Background`` its pods then run on (the collector waits for the Job to go); under
``Foreground`` or ``Orphan`` the collector does its part and the Job stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: ``metav1.FinalizerDeleteDependents`` and ``metav1.FinalizerOrphanDependents``
FOREGROUND_FINALIZER, ORPHAN_FINALIZER = "foregroundDeletion", "orphan"
#: ``metav1.DeletionPropagation``'s values
FOREGROUND, BACKGROUND, ORPHAN = "Foreground", "Background", "Orphan"


@dataclass(frozen=True)
class Deletion:
    """How the garbage collector deletes a Job being deleted: its ``policy`` (``FOREGROUND``, ``BACKGROUND``,
    ``ORPHAN``) and whether finalizers of other controllers ``held`` it (the Job stays in the run)."""

    policy: str
    held: bool

    @property
    def deletes_pods(self) -> bool:
        """Whether the collector deletes the Job's pods in the run (``Foreground``; ``Background`` once the
        Job is gone, which a finalizer of another's can keep from happening)."""
        return self.policy == FOREGROUND or (self.policy == BACKGROUND and not self.held)

    @property
    def disowns(self) -> bool:
        """Whether the Job's controller counts none of its pods in the run: they are orphaned (``Orphan``), or
        the Job is gone at once (``Background``, no other finalizer)."""
        return self.policy == ORPHAN or (self.policy == BACKGROUND and not self.held)

    @property
    def gone_at_once(self) -> bool:
        """Whether the Job is gone as the run starts (``Background`` or ``Orphan``, no other finalizer)."""
        return self.policy != FOREGROUND and not self.held


def deletion(finalizers: Sequence[str]) -> Deletion:
    """A Job being deleted with ``finalizers``: ``foregroundDeletion`` makes it ``Foreground``, ``orphan``
    ``Orphan`` (the API server puts at most one of them), else ``Background``; any other finalizer holds
    it."""
    policy = BACKGROUND
    if FOREGROUND_FINALIZER in finalizers:
        policy = FOREGROUND
    elif ORPHAN_FINALIZER in finalizers:
        policy = ORPHAN
    held = any(f not in (FOREGROUND_FINALIZER, ORPHAN_FINALIZER) for f in finalizers)
    return Deletion(policy, held)


def describe(gc: Deletion) -> str:
    """What gpufleet does with a Job being deleted the ``gc`` way: the warning its reader gives."""
    counted = "its controller creates and deletes none of its pods (syncJob skips manageJob)"
    if gc.policy == FOREGROUND:
        said = (
            f"foreground deletion: {counted}; the garbage collector deletes its pods, each through its grace "
            "period, and the Job counts them as they end"
        )
        return said + (
            "; other finalizers hold the Job: it stays" if gc.held else "; the Job is gone once they are"
        )
    if gc.policy == ORPHAN:
        return "orphan deletion: the garbage collector orphans its pods, which run on, uncounted" + (
            "; other finalizers hold the Job: it stays" if gc.held else ", and the Job is gone at once"
        )
    if gc.held:
        return (
            f"background deletion held by other finalizers, which nothing in the run removes: {counted} and "
            "counts them as they end; the garbage collector waits for the Job to go: its pods run on"
        )
    return (
        "background deletion: the Job is gone at once; the garbage collector deletes its pods, each through "
        "its grace period, uncounted"
    )
