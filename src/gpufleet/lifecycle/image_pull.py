"""Image pulls on one node: one at a time, first come first served, skipped when present.

Source: DESIGN.md (``Simulation.spec.registry.bandwidth`` is the image pull bandwidth per
node; "the kubelet pulls one image at a time, as with its default
``serializeImagePulls``"; the ``gpufleet.io/image-size`` annotation) and seed 000 (a node
that is Ready but still pulling a large CUDA image serves nothing yet). The kubelet's
serial puller takes pull requests from one queue in arrival order; an image already on the
node is not pulled (``imagePullPolicy: IfNotPresent``). A request for an image whose pull
is queued or running waits for that pull instead of pulling it again. Images are never
garbage-collected and a pull is not cancelled when the pod that asked for it goes away.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class ImagePuller:
    """One node's kubelet pulling images at ``bandwidth`` bytes per second, one at a time.

    ``images`` are on the node from the start. Times passed in must not decrease.
    """

    def __init__(self, bandwidth: float, images: Iterable[str] = ()) -> None:
        if not (math.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError(f"bandwidth must be a positive number of bytes per second: {bandwidth!r}")
        self.bandwidth = bandwidth
        self._images = set(images)
        #: Queued or running pulls, image -> when it lands on the node, in queue order.
        self._pulls: dict[str, float] = {}
        #: When the last queued pull finishes.
        self._busy_until = 0.0
        self._clock = 0.0

    def request(self, now: float, image: str, size_bytes: float) -> float:
        """When ``image`` (``size_bytes`` bytes) is on the node for a pod asking for it at ``now``."""
        if not (math.isfinite(size_bytes) and size_bytes >= 0):
            raise ValueError(f"image size must be a non-negative number of bytes: {size_bytes!r}")
        self._run_until(now)
        if image in self._images:
            return now
        if image not in self._pulls:
            self._busy_until = max(now, self._busy_until) + size_bytes / self.bandwidth
            self._pulls[image] = self._busy_until
        return self._pulls[image]

    def pulling(self, now: float, image: str) -> bool:
        """Whether a pull of ``image`` is queued or running at ``now``: a request for it waits for it."""
        self._run_until(now)
        return image in self._pulls

    def images(self, now: float) -> frozenset[str]:
        """The images on the node at ``now`` (pulls finished by then included)."""
        self._run_until(now)
        return frozenset(self._images)

    def _run_until(self, now: float) -> None:
        if now < self._clock:
            raise ValueError(f"time went backwards: {now!r} < {self._clock!r}")
        self._clock = now
        # Pulls finish in queue order, which is the dict's insertion order.
        while self._pulls:
            image, ready = next(iter(self._pulls.items()))
            if ready > now:
                break
            del self._pulls[image]
            self._images.add(image)
