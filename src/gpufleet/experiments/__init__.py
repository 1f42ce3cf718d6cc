"""Experiments: many trace replays at once, and what they add up to.

``gpufleet compare`` (``compare``, ``compare_html``) runs every (trace, policy, seed) of the FGD
paper's protocol and writes one report with statistics over the seeds; ``gpufleet sweep``
(``grid``, ``sweep``) runs a parameter grid, streaming a line per run to ``results.jsonl`` and
resuming where an interrupted sweep stopped. Both run their replays through ``runs`` in parallel
processes, or on a Ray cluster (``ray_backend``, an optional extra).
"""
