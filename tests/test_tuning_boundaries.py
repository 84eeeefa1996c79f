"""Tune on boundary F1 or B: each trial's chunk starts scored against a gold segmentation
drawn by hand (the boundary helper's scoring), no question, no model, and no interval
(a boundary score is one number per document, not a mean over questions: nothing is
resampled, and the JSON and the verdict say so)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from chunking.cli import main
from chunking.core import run
from chunking.documents.io import read_path
from chunking.evaluation.boundaries import chunk_starts, score_boundaries
from chunking.evaluation.gold import Gold, gold_from_marked, read_gold
from chunking.tuning.objectives import (
    ALL_OBJECTIVES,
    OBJECTIVES,
    boundary_score,
    is_boundary,
    needs_retrieval,
)
from chunking.tuning.search import NO_INTERVALS, TuneOptions, tune
from chunking.tuning.space import Space

ROOT = Path(__file__).resolve().parents[1]
ESSAY = ROOT / "sample_docs" / "long_essay.txt"
ESSAY_GOLD = ROOT / "sample_gold" / "long_essay.gold.json"
PARAGRAPHS = [
    "Cats purr when they are content and sleep for most of the day.",
    "Fish swim in clean water and need a filter in their tank.",
    "Parrots can learn words and live for several decades.",
    "Dogs need a walk every day and enjoy playing fetch outside.",
]
MARKED = "\n<<<BOUNDARY>>>\n".join(PARAGRAPHS) + "\n"


@pytest.fixture(scope="module")
def essay() -> tuple[str, Gold]:
    text = read_path(ESSAY).text
    return text, read_gold(ESSAY_GOLD, text)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tune", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_boundary_objectives_are_searchable_but_not_offered_for_questions() -> None:
    assert {"boundary_f1", "boundary_b"} <= set(ALL_OBJECTIVES)
    assert not set(OBJECTIVES) & {"boundary_f1", "boundary_b"}  # the Tune page's list
    assert is_boundary("boundary_f1") and not is_boundary("recall")
    assert not needs_retrieval("boundary_b") and needs_retrieval("recall")
    with pytest.raises(ValueError, match="not a boundary objective"):
        boundary_score("a b", [2], [], "recall")


def test_boundary_score_is_the_boundary_helpers_f1_and_b(essay) -> None:
    text, gold = essay
    from chunking import Config

    chunks = run(text, Config.create("recursive", size=400, unit="tokens"))
    reference = score_boundaries(
        text, gold.boundaries, chunk_starts(chunks, len(text)), tolerance=20
    )
    assert boundary_score(text, gold.boundaries, chunks, "boundary_f1", 20) == reference.f1
    assert boundary_score(text, gold.boundaries, chunks, "boundary_b") == pytest.approx(
        score_boundaries(text, gold.boundaries, chunk_starts(chunks, len(text))).b
    )
    assert 0 < reference.f1 < 1


def test_chunks_cut_where_the_person_cut_score_one() -> None:
    text, gold = gold_from_marked(MARKED, "pets")
    space = Space.from_dict(
        {"strategy": ["paragraph", "fixed"], "size": [20, 80], "unit": ["chars"]}
    )
    for objective in ("boundary_f1", "boundary_b"):
        result = tune(
            {"pets": text},
            (),
            space,
            None,
            TuneOptions(sampler="grid", objective=objective, cost="chunks"),
            gold={"pets": gold.boundaries},
        )
        assert result.winner.tuning.mean == 1.0
        assert result.trial(result.winner.label).config.strategy == "paragraph"
        assert min(t.quality for t in result.trials) < 1.0  # fixed windows cut elsewhere


def test_every_trial_is_scored_as_the_boundary_helper_scores_it_and_has_no_interval(essay) -> None:
    text, gold = essay
    space = Space.from_dict(
        {"strategy": ["recursive", "sentence"], "size": [100, 400], "unit": ["tokens"]}
    )
    options = TuneOptions(sampler="grid", objective="boundary_f1", cost="chunks", tolerance=20)
    result = tune({"essay": text}, (), space, None, options, gold={"essay": gold.boundaries})
    assert len(result.trials) >= 3
    for trial in result.trials:
        chunks = run(text, trial.config)
        expected = score_boundaries(
            text, gold.boundaries, chunk_starts(chunks, len(text)), tolerance=20
        )
        assert trial.quality == pytest.approx(expected.f1)
        assert trial.costs["chunks"] == len(chunks)
        assert math.isnan(trial.interval.low) and math.isnan(trial.interval.high)
        assert trial.evaluation is None  # nothing retrieved, nothing embedded
    best = max(t.quality for t in result.trials if t.duplicate_of is None)
    assert result.winner.tuning.mean == best
    assert result.difference is None and result.difference_baseline is None
    assert math.isnan(result.detectable_difference)
    assert result.texts_requested == 0 and not result.tuning and not result.held_out
    data = result.to_dict()
    assert data["statistics"] == NO_INTERVALS and data["stability"] is None
    assert data["gold"] == {
        "documents": 1,
        "boundaries": len(gold.boundaries),
        "tolerance": 20,
        "tolerance_unit": "chars",
    }
    assert any("No interval" in line for line in result.verdict())


def test_the_tolerance_counts_near_cuts_for_f1(essay) -> None:
    text, gold = essay
    # fixed windows cut at whatever character comes: near the gold boundaries, rarely on them
    space = Space.from_dict({"strategy": ["fixed"], "size": [300], "unit": ["chars"]})

    def f1(tolerance: int) -> float:
        options = TuneOptions(
            sampler="grid", objective="boundary_f1", cost="chunks", tolerance=tolerance
        )
        found = tune({"e": text}, (), space, None, options, gold={"e": gold.boundaries})
        return found.winner.tuning.mean

    assert f1(0) < f1(200)


def test_a_boundary_search_needs_gold_a_cost_it_can_weigh_and_no_retrieval_axes(essay) -> None:
    text, gold = essay
    space = Space.from_dict({"strategy": ["recursive"], "size": [200]})
    with pytest.raises(ValueError, match="gold segmentation"):
        tune({"e": text}, (), space, None, TuneOptions(objective="boundary_f1", cost="chunks"))
    with pytest.raises(ValueError, match="the cost tokens_sent needs questions"):
        TuneOptions(objective="boundary_b")
    varied = Space.from_dict({"strategy": ["recursive"], "size": [200], "top_k": [3, 5]})
    with pytest.raises(ValueError, match="should not vary top_k"):
        tune(
            {"e": text},
            (),
            varied,
            None,
            TuneOptions(objective="boundary_b", cost="chunks"),
            gold={"e": gold.boundaries},
        )


def test_cli_json_and_text_say_there_is_no_interval(capsys, tmp_path) -> None:
    base = ["--document", str(ESSAY), "--gold", str(ESSAY_GOLD), "--sampler", "grid"]
    grid = ["--strategy", "recursive", "paragraph", "--size", "100", "400", "--unit", "tokens"]
    html = tmp_path / "report.html"
    code, out, err = _run(
        capsys, *base, *grid, "--objective", "boundary_f1", "--tolerance", "1sentence",
        "--format", "json", "--out", str(tmp_path / "out"), "--html", str(html),
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["objective"] == "boundary_f1" and data["cost"] == "chunks"  # the default
    assert data["statistics"].startswith("none:")
    assert data["gold"]["tolerance_unit"] == "sentences" and data["gold"]["tolerance"] == 1
    assert all(t["ci_low"] is None and t["ci_high"] is None for t in data["trials"])
    assert data["winner"]["ci_low"] is None and data["difference"] is None
    assert data["stability"] is None and data["detectable_difference"] is None
    assert data["questions"] == {"tuning": 0, "held_out": 0}
    assert json.loads((tmp_path / "out" / "tune.json").read_text())["statistics"] == NO_INTERVALS
    assert "No interval" in html.read_text(encoding="utf-8")
    code, out, err = _run(capsys, *base, *grid, "--objective", "boundary_b")
    assert code == 0, err
    assert "boundary B (no interval)" in out and "No interval and no test" in out
    assert "agree with each other at B" in out  # the human band to read B against


def test_cli_reads_a_marked_gold_file(capsys, tmp_path) -> None:
    marked = tmp_path / "pets.txt"
    marked.write_text(MARKED, encoding="utf-8")
    code, out, err = _run(
        capsys, "--document", str(marked), "--gold", str(marked), "--objective", "boundary_f1",
        "--strategy", "paragraph", "--size", "80", "--unit", "chars", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["winner"]["quality"] == 1.0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--objective", "boundary_f1", "--cost", "tokens_sent"], "the cost tokens_sent needs"),
        (["--objective", "boundary_f1", "--no-gold"], "give --document FILE --gold GOLD.json"),
        (["--objective", "boundary_b", "--questions", "q.csv"], "needs no questions"),
        (["--objective", "recall"], "--gold is the reference of --objective boundary_f1"),
        (["--objective", "boundary_f1", "--tolerance", "near"], "--tolerance expects"),
    ],
)
def test_cli_refuses_in_one_line(capsys, extra, message) -> None:
    argv = ["--document", str(ESSAY), "--gold", str(ESSAY_GOLD), *extra]
    if "--no-gold" in argv:
        argv = [a for a in argv if a not in ("--gold", str(ESSAY_GOLD), "--no-gold")]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert err.startswith("chunk-explorer: error:")


def test_cli_refuses_gold_drawn_on_another_text(capsys) -> None:
    other = ROOT / "sample_docs" / "technical_guide.md"
    code, _, err = _run(
        capsys, "--document", str(other), "--gold", str(ESSAY_GOLD), "--objective", "boundary_f1"
    )
    assert code == 2 and "drawn on another text" in err


def test_no_model_is_loaded_for_a_boundary_objective() -> None:
    program = (
        "import sys\n"
        "from chunking.cli import main\n"
        f"code = main(['tune', '--document', {str(ESSAY)!r}, '--gold', {str(ESSAY_GOLD)!r},"
        " '--objective', 'boundary_b', '--size', '200', '400', '--format', 'json'])\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'chunking.embedding.models')"
        " if m in sys.modules]\n"
        "print('LOADED', code, heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert "LOADED 0 []" in done.stderr, done.stderr[-2000:]
