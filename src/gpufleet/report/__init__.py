"""The report layer: it turns a summary dict (`gpufleet.summary/v1`) into files people read.

HTML pages, terminal tables and the schema check all take the summary as a plain, JSON-able
dict. Every figure they show comes from the summary, which is derived from the event log;
nothing here counts anything separately.
"""

from gpufleet.report.html import render_html
from gpufleet.report.latency import latency_figures
from gpufleet.report.run_summary import finished_summary
from gpufleet.report.schema import SummaryInvalid, load_summary_schema, validate_summary
from gpufleet.report.table import print_summary, summary_table

__all__ = [
    "SummaryInvalid",
    "finished_summary",
    "latency_figures",
    "load_summary_schema",
    "print_summary",
    "render_html",
    "summary_table",
    "validate_summary",
]
