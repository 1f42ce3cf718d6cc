"""The seeded draws of ``selectHost``: which of the equally best nodes a pod gets.

kube-scheduler's ``selectHost`` (``pkg/scheduler/schedule_one.go``) picks uniformly among the
top-scoring nodes; gpufleet draws that index from a seeded NumPy generator, as
``Generator.integers(n)`` would. That call costs about 2 µs, a tenth of a whole scheduling cycle on a
cached cluster, so ``HostDraws`` reproduces it from the bit generator's raw 64-bit words, drawn in
blocks: NumPy's ``random_bounded_uint64`` for a range below 2**32 takes 32-bit words (the low half of
each 64-bit word first, then its high half, ``next_uint32``) and reduces each with Lemire's
multiply-and-reject method (``buffered_bounded_lemire_uint32``, ``numpy/random/src/distributions``).
The numbers are the same as ``Generator.integers(n)``'s on the same generator (tested), provided
nothing else draws from that generator.
"""

from __future__ import annotations

import numpy as np

BLOCK = 256  # raw 64-bit words fetched at a time
MASK32 = 0xFFFFFFFF
RANGE32 = MASK32 + 1  # the widest range drawn


class HostDraws:
    """``Generator.integers(n)`` of a generator it alone draws from, for ``1 <= n <= 2**32``."""

    def __init__(self, rng: np.random.Generator):
        self.bits = rng.bit_generator
        self._words: list[int] = []  # 32-bit words still to use, the next one last

    def _word(self) -> int:
        if not self._words:
            raw: list[int] = self.bits.random_raw(BLOCK).tolist()
            self._words = [half for w in reversed(raw) for half in (w >> 32, w & MASK32)]
        return self._words.pop()

    def integers(self, n: int) -> int:
        """A uniform draw from ``0 .. n-1``: what ``Generator.integers(n)`` returns."""
        if not 1 <= n <= RANGE32:
            raise ValueError(f"HostDraws draws below 2**32 only, not {n}")
        if n == 1:  # NumPy takes no word for an empty range
            return 0
        if n == RANGE32:
            return self._word()
        m = (self._words.pop() if self._words else self._word()) * n
        leftover = m & MASK32
        if leftover < n:
            threshold = (MASK32 - (n - 1)) % n
            while leftover < threshold:
                m = self._word() * n
                leftover = m & MASK32
        return m >> 32
