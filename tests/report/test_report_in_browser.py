"""The HTML pages in a real headless browser (Debian's chromium driven by Playwright): the summary
report of a simulated example with autoscaling and Traffic, and compare's page of scenario variants.

Each page loads from a file with no console error; every chart is drawn (Plotly's ``.main-svg`` with
its traces), its tick labels inside the chart and the x axis's title below them; a hover shows a
tooltip; compare's table fits a 1280 px wide window, long variant names wrapped. A screenshot of
each page is left in the test's ``tmp_path``. Without chromium (and no way to install it) or
Playwright, the tests are skipped with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, _unavailable, simulated
from gpufleet.experiments.scenario_compare import scenario_compare_document
from gpufleet.experiments.scenario_compare_html import render_scenario_compare_html
from gpufleet.experiments.scenario_runs import ScenarioSpec
from gpufleet.report import render_html

WIDTH = 1280
EXAMPLE = ROOT / "examples" / "seed-003" / "hpa-warm-nodes.yaml"
LONG_VARIANT = "bursts+warm-pool-of-two-l4-nodes+scale-down-unneeded-time-20m+expander-least-waste"

#: Per Plotly chart: whether it has a .main-svg, how many traces it drew, how many tick labels lie
#: outside the chart (Plotly hides those that do not fit: no box), and how far the x axis's title's
#: top is below the lowest x tick label's bottom.
CHARTS_JS = """() => [...document.querySelectorAll('div.js-plotly-plot')].map(div => {
  const box = div.getBoundingClientRect();
  const rect = el => el.getBoundingClientRect();
  const ticks = [...div.querySelectorAll('.xtick text, .ytick text')].map(rect).filter(r => r.width > 0);
  const outside = ticks.filter(r => r.left < box.left - 1 || r.right > box.right + 1
                                 || r.top < box.top - 1 || r.bottom > box.bottom + 1).length;
  const xticks = [...div.querySelectorAll('.xtick text')].map(rect).filter(r => r.width > 0)
    .map(r => r.bottom);
  const title = div.querySelector('.g-xtitle text');
  return {id: div.id, svg: div.querySelector('.main-svg') !== null,
          traces: div.querySelectorAll('g.trace').length, outside,
          titleGap: title && xticks.length ? rect(title).top - Math.max(...xticks) : null};
})"""

#: How many lines the text of an element takes.
LINES_JS = (
    "el => { const r = document.createRange(); r.selectNodeContents(el); return r.getClientRects().length; }"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless chromium (installed with APT where missing, as root), driven by Playwright."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is in the dev extra")
    from e2e.chromium import ChromiumUnavailable, chromium

    try:
        executable = chromium()
    except ChromiumUnavailable as exc:
        _unavailable(str(exc), "chromium")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable))
        yield launched
        launched.close()


def open_page(browser: Any, html: str, folder: Path) -> tuple[Any, list[str]]:
    """The page written to ``folder/report.html`` and opened at 1280 px, its charts drawn, and the
    console errors (and uncaught exceptions) it logged."""
    path = folder / "report.html"
    path.write_text(html)
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    charts = html.count('<div class="chart">')
    page.wait_for_function(f"document.querySelectorAll('div.chart .main-svg').length >= {charts}")
    return page, errors


def check_charts(page: Any, expected: int) -> None:
    charts = page.evaluate(CHARTS_JS)
    assert len(charts) == expected
    for chart in charts:
        assert chart["svg"] and chart["traces"] >= 1, chart
        assert chart["outside"] == 0, chart  # every tick label inside its chart
        assert chart["titleGap"] is None or chart["titleGap"] >= 0, chart  # the x title below the ticks


def hover_text(page: Any, chart: Any, mark: str) -> str:
    """Move the mouse onto the chart's first ``mark`` (a CSS selector) and read the tooltip."""
    chart.scroll_into_view_if_needed()
    box = chart.locator(mark).first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = chart.locator(".hoverlayer .hovertext").first
    tooltip.wait_for(state="visible")
    return str(tooltip.text_content())


def section_chart(page: Any, heading: str) -> Any:
    section = page.locator("section", has=page.locator("h2", has_text=heading))
    return section.locator("div.js-plotly-plot").first


def test_the_report_of_a_simulation_with_autoscaling_and_traffic_draws_in_a_browser(
    browser: Any, tmp_path: Path
) -> None:
    summary = simulated([EXAMPLE])
    assert summary["timeline"]["nodes_by_pool"] and summary["traffic"]
    html = render_html(summary)
    page, errors = open_page(browser, html, tmp_path)
    # GPUs, pending, waterfall, serving (when the summary has Traffic timelines), node start chain,
    # nodes per pool, nodes by state, replicas, node allocation
    serving = sum(1 for entry in summary["traffic"].values() if entry.get("timeline"))
    check_charts(page, 8 + serving)
    text = hover_text(page, section_chart(page, "Pending to working"), "g.trace.bars path")
    assert "pending to working" in text and "default/ai-inference" in text
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH


def scenario_document() -> dict[str, Any]:
    """compare.json of two variants (one with a long name) over two seeds, the runs carrying makespan
    and waits by job size beside the usual figures."""
    specs = [
        ScenarioSpec(variant, (Path(f"/{variant}.yaml"),), (), seed, variant)
        for variant in ("bursts", LONG_VARIANT)
        for seed in (1, 2)
    ]
    results = [
        {
            "cost": 10.0 + 5 * i,
            "pending_to_working_p50_s": 30.0 + i,
            "pending_to_working_p95_s": 400.0 - 90 * i,
            "pods_started": 12,
            "pods_pending": 0,
            "pods_failed": 0,
            "gpu_hours_provisioned": 8.0 + i,
            "gpu_utilization_pct": 61.5 - i,
            "gpu_working_pct": 50.0 - i,
            "request_p95_wait_s": 2.5 + i,
            "makespan_s": 7200.0 + 60 * i,
            "job_wait_p95_s_by_gpus": {"1": 12.0 + i, "8": 3700.0 - 100 * i},
            "end_time_s": 7300.0,
            "node_pools": ["l4"],
            "wall_seconds": 0.5,
        }
        for i in range(4)
    ]
    return scenario_compare_document(specs, results)


def test_compares_page_fits_a_1280_px_window_and_draws_its_chart(browser: Any, tmp_path: Path) -> None:
    document = scenario_document()
    html = render_scenario_compare_html(json.loads(json.dumps(document)))
    page, errors = open_page(browser, html, tmp_path)
    check_charts(page, 1)
    table = page.locator("table.stats")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth")
    name = table.locator("td", has_text=LONG_VARIANT)
    assert name.evaluate("td => td.scrollWidth <= td.clientWidth")  # not cut, not overflowing
    assert name.evaluate(LINES_JS) > 1  # wrapped
    headings = table.locator("th").all_text_contents()
    assert "makespan" in headings and "job wait p95 by gpus: 8" in headings
    chart = section_chart(page, "Cost against p95")
    assert hover_text(page, chart, "g.trace.scatter path.point").startswith(
        "bursts: cost 12.50 (10.00–15.00), p95 5m 55s"
    )
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
    assert errors == []
