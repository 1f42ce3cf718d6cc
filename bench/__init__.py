"""Scheduler throughput benchmarks, run as ``python -m bench`` (``make bench``).

They print figures (pods placed per second, milliseconds per gang, peak memory) and check
outcomes (every pod bound, every gang whole); they never assert on time.
"""
