"""The Evaluate page's results table puts the lens's miss reasons in view: right after
the configuration's name and its recall, before the model and the other scores."""

from __future__ import annotations

import pandas as pd

from chunking.evaluation.sweep import TABLE_COLUMNS, labelled_table
from pages.evaluate_results import lens_first

LENS = ["cut by a boundary", "truncated", "out-ranked", "never retrieved %"]


def _shown() -> pd.DataFrame:
    row = {column: 1.0 for column in TABLE_COLUMNS}
    row.update(strategy="recursive", unit="tokens", model="m", technique="dense", threshold=None)
    shown = labelled_table(pd.DataFrame([row], columns=list(TABLE_COLUMNS)))
    for column in LENS:
        shown[column] = ["0"]
    return shown


def test_the_miss_reasons_follow_the_configuration_and_its_recall() -> None:
    shown = _shown()
    ordered = lens_first(shown, LENS)
    assert list(ordered.columns[:9]) == ["Strategy", "Size", "Overlap", "Unit", "Recall", *LENS]
    assert sorted(ordered.columns) == sorted(shown.columns)  # nothing lost or added
    rest = [c for c in shown.columns if c not in ordered.columns[:9]]
    assert list(ordered.columns[9:]) == rest  # the others keep their order
    assert rest[:2] == ["Model", "Technique"]


def test_without_a_lens_only_the_recall_moves_forward() -> None:
    shown = _shown().drop(columns=LENS)
    ordered = lens_first(shown, [])
    assert list(ordered.columns[:5]) == ["Strategy", "Size", "Overlap", "Unit", "Recall"]
    assert sorted(ordered.columns) == sorted(shown.columns)
