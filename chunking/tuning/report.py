"""A search as one standalone HTML file (``chunk-explorer tune --html report.html``):
the verdict in plain words, the quality–cost chart and the trials table.

Every string goes through :func:`html.escape` or pandas' escaping ``to_html``; the
chart and the page come from :mod:`chunking.viz.tuning` and
:mod:`chunking.output.html_report` (plotly inlined, nothing loaded from the network).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from .objectives import COST_LABELS, OBJECTIVE_LABELS

if TYPE_CHECKING:
    from .search import TuneResult


def tune_report(result: TuneResult) -> str:
    """The HTML report of ``result``."""
    from ..output.html_report import figure_html, page
    from ..viz.tuning import front_chart

    options = result.options
    objective = OBJECTIVE_LABELS[options.objective]
    cost = COST_LABELS[options.cost]
    data = result.to_dict()
    chart = front_chart(data["trials"], objective, cost, winner=result.winner.label)
    verdict = "".join(f"<li>{html.escape(line)}</li>" for line in result.verdict())
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in result.warnings)
    table = result.trials_frame()[
        ["label", "technique", "top_k", "quality", "ci_low", "ci_high", "cost", "on_front"]
    ]
    table = table.assign(duplicate_of=[t.duplicate_of or "" for t in result.trials])
    body = (
        f"<h2>Is the winner real?</h2><ul>{verdict}</ul>"
        + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
        + figure_html(chart, "tune-front")
        + "<h2>Trials</h2>"
        + table.to_html(index=False, escape=True, classes="ce-table", border=0, na_rep="—")
    )
    caption = (
        f"{result.plan.describe()}. Objective {objective}, cost {cost}, sampler "
        f"{options.sampler}, seed {options.seed}; {len(result.tuning)} tuning and "
        f"{len(result.held_out)} held-out questions."
    )
    return page("Tuning report", body, caption=caption)
