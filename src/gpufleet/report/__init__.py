"""The report layer: it turns a summary dict (`gpufleet.summary/v1`) into files people read.

HTML pages, terminal tables and the schema check all take the summary as a plain, JSON-able
dict. Every figure they show comes from the summary, which is derived from the event log;
nothing here counts anything separately. The names below are imported when first used (PEP 562),
so that a command that prints no report does not pay for the HTML and chart code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from gpufleet.report.html import render_html as render_html
    from gpufleet.report.latency import latency_figures as latency_figures
    from gpufleet.report.run_summary import finished_summary as finished_summary
    from gpufleet.report.schema import (
        SummaryInvalid as SummaryInvalid,
    )
    from gpufleet.report.schema import (
        load_summary_schema as load_summary_schema,
    )
    from gpufleet.report.schema import (
        validate_summary as validate_summary,
    )
    from gpufleet.report.table import print_summary as print_summary
    from gpufleet.report.table import summary_table as summary_table

#: each exported name and the module that holds it
_WHERE = {
    "SummaryInvalid": "schema",
    "finished_summary": "run_summary",
    "latency_figures": "latency",
    "load_summary_schema": "schema",
    "print_summary": "table",
    "render_html": "html",
    "summary_table": "table",
    "validate_summary": "schema",
}

__all__ = sorted(_WHERE)

__getattr__ = lazy_getattr(__name__, _WHERE)
