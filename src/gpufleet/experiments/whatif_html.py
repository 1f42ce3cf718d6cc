"""``gpufleet whatif``'s ``report.html``: the key figures side by side and every pending pod's outcome.

One self-contained page in the look of ``compare``'s (``compare_html.compare_page``); each side's own
report (``baseline/report.html``, ``changed/report.html``) has the timelines and the pods' stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.experiments.compare_html import compare_page, stats_table
from gpufleet.experiments.whatif_view import figure_rows, for_how_long, pod_rows
from gpufleet.report.page import section


def render_whatif_html(document: Mapping[str, Any]) -> str:
    span = for_how_long(document["duration_s"])
    facts = (
        f"Snapshot {', '.join(document['snapshot'])} simulated "
        f"{span if document['duration_s'] is None else 'for ' + span} "
        f"(seed {document['seed']}) as it is and with {', '.join(document['changes'])}. "
        "Each side's full report: baseline/report.html and changed/report.html."
    )
    figures = stats_table(["figure", "baseline", "changed"], figure_rows(document), 3)
    pods = stats_table(["pod", "GPUs", "baseline", "changed"], pod_rows(document["pods"]), 4, ("28%", "4em"))
    sections = [
        section("Key figures", figures),
        section("The snapshot's pending pods (those whose outcome differs first)", pods),
    ]
    return compare_page("gpufleet whatif", facts, sections, document["schema"], "whatif.json")
