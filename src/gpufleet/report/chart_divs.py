"""Plotly figures as HTML divs of one page: plotly.js inlined with the page's first chart only.

A figure is a plain Plotly figure dict (``data``, ``layout``); `ChartDivs` turns each into a ``<div>``
with ``plotly.io.to_html`` (``include_plotlyjs=True`` for the first, ``False`` after), so a page
works offline and carries the library once. Plotly is the optional ``charts`` extra, imported
only here, when a page draws; without it each chart is a line saying how to get it, and the rest
of the page is written as usual. Div ids count up per page, so the same summary gives the same page.
"""

from __future__ import annotations

from html import escape
from types import ModuleType
from typing import Any

NO_PLOTLY = "charts need the `charts` extra: pip install 'gpufleet[charts]'"
#: Plotly's options for every chart: no logo, no link to Plotly's cloud, the chart follows the page width.
CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}


def load_plotly_io() -> ModuleType:
    """``plotly.io``, imported on first use (ImportError without the ``charts`` extra)."""
    import plotly.io

    module: ModuleType = plotly.io
    return module


class ChartDivs:
    """The charts of one page, in order: `div` of the first carries plotly.js, the others use it."""

    def __init__(self) -> None:
        self.count = 0
        self._plotly: ModuleType | None = None
        self._missing = False

    def div(self, figure: dict[str, Any]) -> str:
        """``figure`` as an HTML block (``<div class="chart">``), or the line saying Plotly is missing."""
        plotly_io = self._load()
        if plotly_io is None:
            return f'<p class="muted no-chart">{escape(NO_PLOTLY)}</p>'
        self.count += 1
        html: str = plotly_io.to_html(
            figure,
            config=CONFIG,
            include_plotlyjs=self.count == 1,
            full_html=False,
            div_id=f"chart-{self.count}",
            default_height=f"{figure['layout']['height']}px",
        )
        return f'<div class="chart">{html}</div>'

    def _load(self) -> ModuleType | None:
        if self._plotly is None and not self._missing:
            try:
                self._plotly = load_plotly_io()
            except ImportError:
                self._missing = True
        return self._plotly
