"""The frame of gpufleet's HTML pages (the summary report, compare's and whatif's): the stylesheet,
the page itself, sections, notes, figure cards and tables of already formatted cells.

A page has no external reference: its style is inline, and its charts (`chart_divs`) carry the
plotly.js library inline once. Every text cell is HTML-escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
  background:#f6f8fa;margin:0}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:16px;margin:0 0 12px}
h3{font-size:14px;margin:16px 0 8px}
section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin:16px 0}
.muted{color:#656d76}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:12px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:8px 14px;min-width:110px}
.card .v{font-size:20px;font-weight:600}
.card .k{color:#656d76;font-size:12px}
.chart{margin:8px 0}
.scroll{max-height:520px;overflow:auto}
table{border-collapse:collapse;width:100%;font-size:12px}
th,td{border-bottom:1px solid #eaeef2;padding:4px 6px;text-align:left;vertical-align:top}
th{position:sticky;top:0;background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.msg{min-width:240px;max-width:420px}
table.narrow{width:auto}
table.fit{table-layout:fixed}
table.fit th,table.fit td{overflow-wrap:anywhere;white-space:normal}
table.fit th{font-size:11px}
td .sub{display:block;color:#656d76;font-size:11px}
.phase-Pending{color:#9a6700;font-weight:600}
.phase-Failed{color:#cf222e;font-weight:600}
.phase-Running{color:#1a7f37}
footer{color:#656d76;font-size:12px;margin:24px 0}
""".strip()


def page(title: str, header: str, sections: Sequence[str], source: str) -> str:
    """The whole page: ``header`` (HTML) under the title, the sections, a footer naming the source
    every figure on it comes from."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        f"<header>\n<h1>{escape(title)}</h1>\n{header}\n</header>\n"
        + "\n".join(sections)
        + f"\n<footer>Every figure comes from {escape(source)}.</footer>"
        + "\n</main>\n</body>\n</html>\n"
    )


def section(heading: str, content: str) -> str:
    return f"<section>\n<h2>{escape(heading)}</h2>\n{content}\n</section>"


def muted(text: str) -> str:
    return f'<p class="muted">{escape(text)}</p>'


def cards(figures: Sequence[tuple[str, str]]) -> str:
    """A row of cards, each a figure (already formatted) over its label."""
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="v">{escape(value)}</div>'
            f'<div class="k">{escape(label)}</div></div>'
            for label, value in figures
        )
        + "</div>"
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]], css: str = "", numeric_from: int = 1) -> str:
    """A table of already formatted cells; cells from column ``numeric_from`` on are right-aligned."""
    head_html = "".join(f"<th>{escape(column)}</th>" for column in head)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="num">{escape(cell)}</td>' if i >= numeric_from else f"<td>{escape(cell)}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}>\n<thead><tr>{head_html}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"
