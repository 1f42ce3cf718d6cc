"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection`` does it.

A candidate takes the Lease when it is free (no holder) or expired (``renewTime`` +
``leaseDurationSeconds`` passed, on this process's clock since it last saw the Lease change), by a
replace at the resourceVersion it read, so of two candidates only one wins; the leader renews every
``retryPeriod`` and stops leading (the process exits, as kube-scheduler does) when it could not renew
within ``renewDeadline``. On a clean shutdown the leader gives the Lease up (``ReleaseOnCancel``:
holder emptied), so a standby takes over at once instead of after the lease duration.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from gpufleet.live.client import LiveError
from gpufleet.live.writes import Writes, now_micro
from gpufleet.model.scheduler_config import ProcessSettings


@dataclass
class LeaderElector:
    writes: Writes
    settings: ProcessSettings
    identity: str
    leading: threading.Event = field(default_factory=threading.Event)
    lost: threading.Event = field(default_factory=threading.Event)
    _observed: tuple[str, float] = (
        "",
        0.0,
    )  # (the Lease's renewTime as read, when this process saw it change)

    def _lease(self) -> dict[str, Any] | None:
        return self.writes.lease(self.settings.resource_namespace, self.settings.resource_name)

    def try_acquire_or_renew(self) -> bool:
        lease = self._lease()
        now = time.monotonic()
        spec_new = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.settings.lease_duration_s),
            "renewTime": now_micro(),
        }
        if lease is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self.settings.resource_name,
                    "namespace": self.settings.resource_namespace,
                },
                "spec": {**spec_new, "acquireTime": now_micro(), "leaseTransitions": 0},
            }
            return self.writes.put_lease(self.settings.resource_namespace, body, create=True)
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        renew = str(spec.get("renewTime") or "")
        if renew != self._observed[0]:
            self._observed = (renew, now)
        duration = float(spec.get("leaseDurationSeconds") or self.settings.lease_duration_s)
        if holder and holder != self.identity and now < self._observed[1] + duration:
            return False  # someone else holds it and it has not expired
        transitions = int(spec.get("leaseTransitions") or 0) + (holder != self.identity)
        acquire = spec.get("acquireTime") if holder == self.identity else now_micro()
        lease["spec"] = {**spec, **spec_new, "acquireTime": acquire, "leaseTransitions": transitions}
        return self.writes.put_lease(self.settings.resource_namespace, lease, create=False)

    def run(self, stop: threading.Event) -> None:
        """Campaign until leading, then renew until ``stop`` or until the Lease is lost."""
        period = self.settings.retry_period_s
        last_renewed = time.monotonic()
        while not stop.is_set():
            try:
                held = self.try_acquire_or_renew()
            except LiveError:
                held = False
            now = time.monotonic()
            if held:
                last_renewed = now
                self.leading.set()
            elif self.leading.is_set() and now - last_renewed > self.settings.renew_deadline_s:
                self.leading.clear()
                self.lost.set()
                return
            stop.wait(period)

    def release(self) -> None:
        """Give the Lease up (``ReleaseOnCancel``) if this process holds it."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self._lease()
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"] = {
                **lease["spec"],
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "renewTime": now_micro(),
            }
            self.writes.put_lease(self.settings.resource_namespace, lease, create=False)
        except LiveError:
            pass
