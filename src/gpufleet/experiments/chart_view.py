"""The data ranges an inline-SVG chart of the compare reports shows, mapped onto its canvas.

Canvas size, paddings and tick choice are the summary report's (``report.html``), so the compare
pages look like it: a left axis of round ticks with grid lines, a base line with ticks below, and
the axes' titles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from gpufleet.report.html import CHART_H, CHART_W, PAD_BOTTOM, PAD_LEFT, PAD_RIGHT, PAD_TOP, nice_ticks


@dataclass(frozen=True)
class ChartView:
    """Data ranges ``x0..x1`` and ``y0..y1``; points outside are clipped."""

    x0: float
    x1: float
    y0: float
    y1: float

    def px(self, x: float) -> float:
        return PAD_LEFT + (x - self.x0) / (self.x1 - self.x0) * (CHART_W - PAD_LEFT - PAD_RIGHT)

    def py(self, y: float) -> float:
        return CHART_H - PAD_BOTTOM - (y - self.y0) / (self.y1 - self.y0) * (CHART_H - PAD_TOP - PAD_BOTTOM)

    def path(self, points: Sequence[tuple[float, float | None]]) -> str:
        """SVG path commands through the points in view, broken where a value is missing."""
        commands: list[str] = []
        pen_down = False
        for x, y in points:
            if y is None or x < self.x0 or x > self.x1:
                pen_down = False
                continue
            y = min(max(y, self.y0), self.y1)
            commands.append(f"{'L' if pen_down else 'M'}{self.px(x):.1f} {self.py(y):.1f}")
            pen_down = True
        return "".join(commands)

    def axes(self, x_title: str, y_title: str, x_ticks: int = 12) -> list[str]:
        """Grid lines, ticks and titles, as SVG elements."""
        left, right, base = PAD_LEFT, CHART_W - PAD_RIGHT, CHART_H - PAD_BOTTOM
        parts = []
        for tick in nice_ticks(self.y0, self.y1):
            y = self.py(tick)
            parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eaeef2"/>')
            parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
        parts.append(f'<line x1="{left}" y1="{base}" x2="{right}" y2="{base}" stroke="#8c959f"/>')
        for tick in nice_ticks(self.x0, self.x1, target=x_ticks):
            x = self.px(tick)
            parts.append(f'<text x="{x:.1f}" y="{base + 16}" text-anchor="middle">{tick:g}</text>')
        mid_y, mid_x = (PAD_TOP + base) / 2, (left + right) / 2
        parts.append(
            f'<text x="14" y="{mid_y:.1f}" text-anchor="middle" transform="rotate(-90 14 {mid_y:.1f})">'
            f"{escape(y_title)}</text>"
        )
        parts.append(f'<text x="{mid_x:.1f}" y="{CHART_H - 6}" text-anchor="middle">{escape(x_title)}</text>')
        return parts
