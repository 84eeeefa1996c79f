"""``chunk-explorer tune`` end to end on one chroma-eval corpus with minilm-static."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from chunking.cli import main
from chunking.config import Config

CORPUS = "chatlogs"
GRID = ["--size", "200", "400", "--overlap", "0", "50", "--unit", "tokens"]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["tune", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _base(chroma_dir: Path) -> list[str]:
    return ["--dataset", str(chroma_dir), "--corpus-id", CORPUS, "--model", "minilm-static"]


def _without_timings(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    data.pop("seconds")
    data.pop("estimate_seconds")
    for trial in data["trials"]:
        trial["costs"].pop("seconds")
    return data


def test_tune_writes_every_key_and_file(capsys, chroma_dir, tmp_path) -> None:
    out = tmp_path / "out"
    html = tmp_path / "report.html"
    argv = [*_base(chroma_dir), "--strategy", "recursive", "token", *GRID]
    argv += ["--sampler", "grid", "--seed", "3", "--format", "json"]
    code, stdout, err = _run(capsys, *argv, "--out", str(out), "--html", str(html))
    assert code == 0, err
    data = json.loads(stdout)
    for key in (
        "trials",
        "front",
        "winner",
        "runner_up",
        "baseline",
        "difference",
        "detectable_difference",
        "stability",
        "questions",
        "seed",
    ):
        assert key in data, key
    assert data["seed"] == 3 and data["on_paper"] == 8 and data["to_run"] == 8
    assert data["questions"]["tuning"] + data["questions"]["held_out"] == 56
    assert data["questions"]["held_out"] == round(0.3 * 56)
    for trial in data["trials"]:
        assert set(trial) >= {
            "label",
            "config",
            "quality",
            "ci_low",
            "ci_high",
            "cost",
            "on_front",
            "duplicate_of",
        }
        assert trial["ci_low"] <= trial["quality"] <= trial["ci_high"]
    assert data["front"] == [t["label"] for t in data["trials"] if t["on_front"]]
    best = max(data["trials"], key=lambda t: t["quality"])
    assert data["winner"]["label"] == best["label"]
    for key in ("winner", "runner_up", "baseline"):
        assert set(data[key]) >= {"label", "quality", "ci_low", "ci_high", "held_out"}
        assert set(data[key]["held_out"]) == {"quality", "ci_low", "ci_high"}
    assert data["baseline"]["label"] == "recursive · 400 tokens"
    assert set(data["difference"]) == {"mean", "ci_low", "ci_high", "p_value", "distinguishable"}
    assert data["difference"]["distinguishable"] == (
        (data["difference"]["ci_low"] > 0 or data["difference"]["ci_high"] < 0)
        and data["difference"]["p_value"] < 0.05
    )
    assert data["detectable_difference"] > 0
    assert data["stability"]["splits"] == 200
    assert json.loads((out / "tune.json").read_text()) == data | {
        "seconds": json.loads((out / "tune.json").read_text())["seconds"]
    }
    trials = pd.read_parquet(out / "trials.parquet")
    assert list(trials["label"]) == [t["label"] for t in data["trials"]]
    per_question = pd.read_parquet(out / "per_question.parquet")
    assert list(per_question.columns) == ["label", "question_id", "split", "score"]
    assert set(per_question["split"]) == {"tuning", "held_out"}
    assert len(per_question[per_question["split"] == "tuning"]) == 8 * data["questions"]["tuning"]
    page = html.read_text(encoding="utf-8")
    assert "Is the winner real?" in page and data["winner"]["label"] in page


def test_the_same_seed_gives_the_same_json(capsys, chroma_dir) -> None:
    argv = [*_base(chroma_dir), *GRID, "--sampler", "tpe", "--trials", "2", "--seed", "5"]
    first = _run(capsys, *argv, "--format", "json")
    second = _run(capsys, *argv, "--format", "json")
    assert first[0] == second[0] == 0
    assert _without_timings(json.loads(first[1])) == _without_timings(json.loads(second[1]))


def test_the_text_output_and_the_dry_run(capsys, chroma_dir) -> None:
    code, stdout, _ = _run(
        capsys,
        *_base(chroma_dir),
        "--size",
        "40",
        "400",
        "--overlap",
        "0",
        "50",
        "--unit",
        "tokens",
        "--sampler",
        "grid",
        "--dry-run",
    )
    assert code == 0
    assert stdout.startswith("4 on paper, 3 to run (1 invalid, 0 with the same chunks)")
    assert "- skipped strategy=recursive size=40 overlap=50" in stdout
    code, stdout, _ = _run(capsys, *_base(chroma_dir), "--size", "200", "400", "--sampler", "grid")
    assert code == 0
    assert "Is the winner real?" in stdout and "Front: " in stdout


def test_tune_on_my_own_document_with_a_question_file(capsys, tmp_path) -> None:
    text = "\n\n".join(
        f"Fact {i}: the {w} box holds {i} apples."
        for i, w in enumerate(["red", "blue", "green", "white", "black", "pink"])
    )
    (tmp_path / "notes.md").write_text(text, encoding="utf-8")
    rows = [
        {
            "question": f"How many apples are in the {w} box?",
            "references": [
                {
                    "content": f"the {w} box holds {i} apples",
                    "start_index": text.index(f"the {w} box"),
                    "end_index": text.index(f"the {w} box") + len(f"the {w} box holds {i} apples"),
                }
            ],
        }
        for i, w in enumerate(["red", "blue", "green", "white", "black", "pink"])
    ]
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(Config.create("recursive", size=50, unit="chars").to_json())
    code, stdout, err = _run(
        capsys,
        "--baseline",
        str(baseline),
        "--document",
        str(tmp_path / "notes.md"),
        "--questions",
        str(questions),
        "--size",
        "30",
        "80",
        "--unit",
        "chars",
        "--sampler",
        "grid",
        "--model",
        "minilm-static",
        "--format",
        "json",
        "--holdout",
        "0",
    )
    assert code == 0, err
    data = json.loads(stdout)
    assert data["questions"] == {"tuning": 6, "held_out": 0}
    assert data["winner"]["held_out"] is None
    assert data["baseline"]["label"] == "recursive · 50 chars"
    assert data["baseline"]["config"]["params"]["size"] == 50


def test_a_space_file_with_a_range(capsys, chroma_dir, tmp_path) -> None:
    space = tmp_path / "space.json"
    space.write_text(
        json.dumps(
            {
                "strategy": ["recursive", "sentence"],
                "size": {"low": 100, "high": 400, "step": 100},
                "overlap": [0, 0.5],
                "unit": ["tokens"],
                "top_k": [3, 5],
            }
        )
    )
    code, stdout, _ = _run(
        capsys, *_base(chroma_dir), "--space", str(space), "--dry-run", "--format", "json"
    )
    assert code == 0
    data = json.loads(stdout)
    assert data["dry_run"] and data["on_paper"] == 2 * 4 * 2 * 2
    assert data["invalid"] == 0 and data["to_run"] == math.ceil(32 / 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--holdout", "1.5"], "--holdout"),
        (["--space", "missing.json"], "missing.json"),
        (["--space", "x.json", "--size", "100"], "not both"),
        (["--strategy", "nope"], "unknown strategy"),
        (["--trials", "0"], "--trials"),
        (["--seed", "-1"], "--seed"),
        (["--size", "10", "--overlap", "50"], "no valid point"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, chroma_dir, argv, message) -> None:
    code, _, err = _run(capsys, *_base(chroma_dir), *argv, "--dry-run")
    assert code == 2
    assert err.startswith("chunk-explorer: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
