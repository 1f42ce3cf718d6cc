"""What the scheduler may ask about a node's GPUs as devices: which whole GPUs are free, and how
they are linked. The device level (``gpus.devices``, or a live cluster's device plugin) answers;
the scheduler only reads it, so its decisions stay pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpufleet.gpus.topology.link_graph import LinkGraph


class DeviceView(Protocol):
    def free_gpus(self, node: int) -> tuple[list[int], LinkGraph | None] | None:
        """Free whole-GPU indices of node ``node`` and its link graph (None: all links alike);
        None when its GPUs are not whole devices (MIG, time-slicing) or not known."""
        ...
