"""A fractional GPU request: a share of one or more GPUs, by compute and by memory.

Three public ways to ask for part of a GPU are read into this one form (``kube.gpu_shares``):

* KAI Scheduler's pod annotations ``gpu-fraction`` (a share of one GPU, ``"0.5"``) and
  ``gpu-memory`` (MiB of one GPU). KAI turns a memory request into the matching share of the
  GPU it lands on, and a fraction reserves the same share of that GPU's memory.
* HAMi's extended resources: ``nvidia.com/gpu`` counts vGPUs (each on a different GPU),
  ``nvidia.com/gpumem`` (MiB) or ``nvidia.com/gpumem-percentage`` the memory of each, and
  ``nvidia.com/gpucores`` (percent of the GPU's compute) its compute. Compute and memory are
  independent: without ``gpucores`` a vGPU reserves no compute; without a memory request it
  takes all of the GPU's memory (HAMi's default).
* The Alibaba GPU trace's ``gpu_milli`` column (thousandths of one GPU), as the FGD paper's
  simulator reads it: compute only.

Memory isolation differs: HAMi's in-container library (HAMi-core) caps each vGPU at its memory, so
a process that needs more fails alone; KAI's fractions are a scheduling reservation with no cap, so
a process may take more than its share and make a neighbour on the same GPU fail.

A share is kept in thousandths ("milli") of one GPU's compute and of its memory, the unit of
the FGD paper's simulator. ``per_gpu`` resolves a request for one GPU model: a side given in
bytes is converted with that GPU's memory, a side not given follows the other (KAI) or is
explicit (HAMi).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MILLI = 1000


@dataclass(frozen=True)
class GpuShare:
    """A fractional GPU request: on each of ``count`` GPUs, a share of its compute and memory (as a node's
    GPUs are sized; the rest of the GPU left to other shares)."""

    count: int = 1  # GPUs, each shared (a different GPU for each)
    compute_milli: int | None = None  # thousandths of one GPU's compute; None: as much as memory
    memory_milli: int | None = None  # thousandths of one GPU's memory; None: see memory_bytes
    memory_bytes: float | None = None  # bytes of one GPU's memory; None with memory_milli None: as compute
    source: str = ""  # how the pod asked for it, for messages: "gpu-fraction: 0.5"
    isolated: bool = False  # memory limited to the share (HAMi-core); else neighbours' memory is shared

    def per_gpu(self, gpu_memory_bytes: float | None) -> tuple[int, int] | None:
        """(compute, memory) milli of each GPU on a node whose GPUs have ``gpu_memory_bytes``;
        None when the request is in bytes and the node does not say its GPU memory."""
        memory = self.memory_milli
        if memory is None and self.memory_bytes is not None:
            if not gpu_memory_bytes:
                return None
            memory = math.ceil(MILLI * self.memory_bytes / gpu_memory_bytes)
        compute = self.compute_milli if self.compute_milli is not None else memory
        if memory is None:
            memory = compute
        return (compute or 0), (memory or 0)

    @property
    def gpu_equivalent(self) -> float:
        """GPUs it takes for counting and pricing: its compute share (memory when compute is not given)."""
        per = self.compute_milli if self.compute_milli is not None else self.memory_milli
        return self.count * (per if per is not None else MILLI) / MILLI
