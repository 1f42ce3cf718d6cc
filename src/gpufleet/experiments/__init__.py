"""Experiments: many trace replays or scenario simulations at once, and what they add up to.

``gpufleet compare`` (``compare``, ``compare_html``) runs every (trace, policy, seed) of the FGD
paper's protocol and writes one report with statistics over the seeds; with scenarios
(``scenario_compare``, ``scenario_compare_html``) it simulates every (variant, seed) and plots
cost against p95 pending time. ``gpufleet sweep`` (``grid``, ``scenario_grid``, ``sweep``) runs a
parameter grid of replays or of a scenario's fields (``overrides``), streaming a line per run to
``results.jsonl`` and resuming where an interrupted sweep stopped. All run through ``runs`` (a
replay's run there, a simulation's in ``scenario_runs``) in parallel processes, or on a Ray
cluster (``ray_backend``, an optional extra).
"""
