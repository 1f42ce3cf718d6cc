"""The nearest-rank percentile, the one definition every gpufleet figure uses.

Of ``n`` values sorted ascending ``x[1] <= ... <= x[n]``, the p-th percentile is
``x[ceil(p * n / 100)]`` (rank at least 1): always one of the values, never an
interpolation, so a p99 over 10 pods is the slowest pod. It lives in the model layer so that
the report (``report.latency``) and the live measurements (``live.startup``) share it.
"""

from __future__ import annotations

from collections.abc import Sequence


def nearest_rank(values: Sequence[float], p: int) -> float:
    """The ``p``-th percentile (0 < p <= 100) of ``values`` by the nearest-rank method.

    ``values`` need not be sorted; it must not be empty. The rank ``ceil(p * n / 100)`` is
    computed in integers, so no float rounding moves it.
    """
    if not values:
        raise ValueError("nearest_rank of no values")
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {p}")
    ordered = sorted(values)
    rank = max(1, -(-p * len(ordered) // 100))
    return float(ordered[rank - 1])
