"""Labels a new user reads: the times-retrieved colour bar ticks at whole numbers, the
result tables name their columns in words, and the size refusal names how to raise the
limit in the app too. (Compare's "gold spans missed", not "answers": tests/test_lens.py.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunking.documents.io import DocumentError, read_bytes
from chunking.output.html_report import evaluation_display
from chunking.viz.lens import lens_figure


@pytest.mark.parametrize(("counts", "step"), [([0, 1, 1, 0], 1), ([0, 3, 12, 27], 6)])
def test_the_times_retrieved_colour_bar_ticks_at_whole_numbers(counts, step) -> None:
    n = len(counts)
    figure = lens_figure(
        np.arange(2 * n, dtype=float).reshape(n, 2),
        np.zeros((1, 2)),
        counts,
        "retrieved",
        [f"chunk {i}" for i in range(n)],
        ["a question"],
        [0.1],
    )
    bar = figure.layout.coloraxis.colorbar
    assert bar.tick0 == 0 and bar.dtick == step and bar.tickformat == "d"
    assert figure.layout.coloraxis.cmax == max(1, max(counts))


def test_result_tables_name_their_columns_in_words() -> None:
    table = pd.DataFrame(
        {
            "strategy": ["recursive"],
            "size": [400],
            "unit": ["tokens"],
            "n_chunks": [12],
            "mean_tokens": [310.5],
            "recall_mean": [0.5],
        }
    )
    shown = evaluation_display(table)
    assert {"Strategy", "Size", "Unit", "Chunks", "Mean tokens"} <= set(shown.columns)
    assert not {"n_chunks", "mean_tokens", "strategy"} & set(shown.columns)


def test_the_size_refusal_says_how_to_raise_the_limit_in_the_app_too() -> None:
    with pytest.raises(DocumentError) as refused:
        read_bytes(b"word " * 400, "big.txt", max_bytes=1000)
    message = str(refused.value)
    assert "CHUNK_EXPLORER_MAX_MB" in message and "(CLI: --max-mb)" not in message
    assert "\n" not in message
