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
    the raw words fetched at least at a time for it (more where ``words`` draws most: a refill then serves
    many calls, each a view of what was fetched)."""

    def __init__(self, rng: np.random.Generator, block: int = BLOCK):
        self.bits = rng.bit_generator
        self.block = block
        #: the 32-bit words fetched, in the stream's order (each raw word's low half first), read-only, and
        #: how many of them were used
        self._fetched: npt.NDArray[np.uint32] = np.zeros(0, dtype=np.uint32)
        self._used = 0

    def _fetch(self, n: int) -> None:
        """At least ``n`` words not used yet: those left, then ``block`` raw words or as many as they lack."""
        left = self._fetched[self._used :]
        raw = self.bits.random_raw(max(self.block, (n - len(left) + 1) // 2))
        fresh = raw.astype("<u8", copy=False).view("<u4")
        self._fetched = np.concatenate([left, fresh]) if len(left) else fresh
        self._fetched.flags.writeable = False
        self._used = 0

    def _word(self) -> int:
        if self._used == len(self._fetched):
            self._fetch(1)
        self._used += 1
        word: int = self._fetched.item(self._used - 1)
        return word

    def words(self, n: int) -> npt.NDArray[np.uint32]:
        """The next ``n`` 32-bit words: what ``Generator.integers(0, 2**32, size=n, dtype=np.uint32)``
        returns (a full 32-bit range takes the words as they come), without its checks per call; a
        read-only view."""
        if len(self._fetched) - self._used < n:
            self._fetch(n)
        used = self._used
        self._used = used + n
        return self._fetched[used : used + n]

    def integers(self, n: int) -> int:
        """A uniform draw from ``0 .. n-1``: what ``Generator.integers(n)`` returns."""
        if not 1 <= n <= RANGE32:
            raise ValueError(f"HostDraws draws below 2**32 only, not {n}")
        if n == 1:  # NumPy takes no word for an empty range
            return 0
        if n == RANGE32:
            return self._word()
        m = self._word() * n
        leftover = m & MASK32
        if leftover < n:
            threshold = (MASK32 - (n - 1)) % n
            while leftover < threshold:
                m = self._word() * n
                leftover = m & MASK32
        return m >> 32
