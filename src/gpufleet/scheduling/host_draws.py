"""The seeded draws of ``selectHost``: which of the equally best nodes a pod gets.

kube-scheduler's ``selectHost`` (``pkg/scheduler/schedule_one.go``) picks uniformly among the
top-scoring nodes; gpufleet draws that index from a seeded NumPy generator, as
``Generator.integers(n)`` would. That call costs about 2 µs, a tenth of a whole scheduling cycle on a
cached cluster, so ``HostDraws`` reproduces it from the bit generator's raw 64-bit words, drawn in
blocks: NumPy's ``random_bounded_uint64`` for a range below 2**32 takes 32-bit words (the low half of
each 64-bit word first, then its high half, ``next_uint32``) and reduces each with Lemire's
multiply-and-reject method (``buffered_bounded_lemire_uint32``, ``numpy/random/src/distributions``).
The numbers are the same as ``Generator.integers(n)``'s on the same generator (tested), provided
nothing else draws from that generator; ``words`` gives what ``integers(0, 2**32, size=n,
dtype=np.uint32)`` would, in the same stream (the FGD paper's Random policy draws both).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BLOCK = 256  # raw 64-bit words fetched at a time
MASK32 = 0xFFFFFFFF
RANGE32 = MASK32 + 1  # the widest range drawn


class HostDraws:
    """``Generator.integers(n)`` of a generator it alone draws from, for ``1 <= n <= 2**32``; ``block``:
    the raw words fetched at a time for it (one where ``words`` draws most: it takes those not used
    yet one by one)."""

    def __init__(self, rng: np.random.Generator, block: int = BLOCK):
        self.bits = rng.bit_generator
        self.block = block
        self._words: list[int] = []  # 32-bit words still to use, the next one last

    def _word(self) -> int:
        if not self._words:
            raw: list[int] = self.bits.random_raw(self.block).tolist()
            self._words = [half for w in reversed(raw) for half in (w >> 32, w & MASK32)]
        return self._words.pop()

    def words(self, n: int) -> npt.NDArray[np.uint32]:
        """The next ``n`` 32-bit words: what ``Generator.integers(0, 2**32, size=n, dtype=np.uint32)``
        returns (a full 32-bit range takes the words as they come), without its checks per call."""
        pending = self._words  # (the next one last)
        if len(pending) >= n:
            taken = pending[len(pending) - n :]
            del pending[len(pending) - n :]
            return np.array(taken[::-1], dtype=np.uint32)
        head, rest = pending[::-1], n - len(pending)
        pending.clear()
        raw = self.bits.random_raw((rest + 1) // 2).astype("<u8", copy=False).view("<u4")  # low half first
        if len(raw) > rest:  # (an odd count: the last word's high half is the next word)
            pending.append(int(raw[-1]))
            raw = raw[:rest]
        return np.concatenate([np.array(head, dtype=np.uint32), raw]) if head else raw

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
