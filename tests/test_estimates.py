"""Announced waits (chunking.embedding.timing and the estimates of .models): priors,
contention and calibration from measured runs, and ``chunk-explorer models --build``.

No test asserts how long anything takes: the records are written with chosen seconds,
or read back after a real run, and the machine's load is fixed where an estimate is
compared with another.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from chunking.cli import main
from chunking.embedding import models, registry, timing
from chunking.embedding.base import HashEmbedder
from chunking.embedding.models import (
    estimate_embedding_seconds,
    estimate_load_seconds,
    estimate_wait,
    get_embedder,
)
from chunking.embedding.registry import NamedModel, named_model
from chunking.embedding.timing import BUILD, EMBED, LOAD, Speed

SPEED = Speed(
    load_seconds=2.0, build_seconds=30.0, seconds_per_piece=1e-4, text_pieces=20, window_pieces=100
)


#: ``timing.contention`` itself (the fixture below replaces it in every test).
REAL_CONTENTION = timing.contention


@pytest.fixture(autouse=True)
def timings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A records file of the test's own, and a machine whose load is fixed."""
    path = tmp_path / "timings.json"
    monkeypatch.setenv(timing.TIMINGS_ENV, str(path))
    monkeypatch.setattr(timing, "contention", lambda threads=0: 1.0)
    return path


def test_the_records_live_in_the_user_cache_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(timing.TIMINGS_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert timing.timings_path() == Path("/somewhere/cache/chunk-explorer/timings.json")


def test_an_unmeasured_model_is_estimated_by_its_prior_scaled_by_the_load() -> None:
    assert timing.factor("m", LOAD) == 1.0
    assert timing.estimate("m", LOAD, 2.0) == 2.0
    assert timing.estimate("m", LOAD, 2.0, load=3.0) == 6.0


def test_measured_runs_calibrate_the_next_estimate(timings: Path) -> None:
    timing.record("m", LOAD, 2.0, 5.0, load=1.0)  # predicted 2 s, took 5 s
    assert timing.factor("m", LOAD) == pytest.approx(2.5)
    assert timing.estimate("m", LOAD, 2.0) == pytest.approx(5.0)
    # A run under contention is compared with the prior scaled by that contention.
    timing.record("n", LOAD, 2.0, 8.0, load=4.0)
    assert timing.factor("n", LOAD) == pytest.approx(1.0)
    # Kinds and models are calibrated apart.
    assert timing.factor("m", EMBED) == 1.0 and timing.factor("other", LOAD) == 1.0
    assert set(json.loads(timings.read_text("utf-8"))) == {"m", "n", timing.LAW_KEY}


def test_a_new_run_weighs_as_much_as_all_earlier_ones() -> None:
    timing.record("m", EMBED, 10.0, 10.0, load=1.0)
    timing.record("m", EMBED, 10.0, 30.0, load=1.0)
    # (10 * 0.5 + 30) / (10 * 0.5 + 10)
    assert timing.factor("m", EMBED) == pytest.approx(35 / 15)


def test_one_odd_run_cannot_make_estimates_absurd() -> None:
    timing.record("slow", LOAD, 1.0, 500.0, load=1.0)
    timing.record("fast", LOAD, 100.0, 1.0, load=1.0)
    assert timing.factor("slow", LOAD) == timing.FACTOR_RANGE[1]
    assert timing.factor("fast", LOAD) == timing.FACTOR_RANGE[0]


def test_short_runs_are_not_recorded_and_a_damaged_file_is_ignored(timings: Path) -> None:
    timing.record("m", LOAD, 1.0, timing.MIN_SECONDS / 2, load=1.0)
    assert not timings.exists()
    timings.write_text("{not json", encoding="utf-8")
    assert timing.factor("m", LOAD) == 1.0
    timing.record("m", LOAD, 1.0, 2.0, load=1.0)  # rewritten whole
    assert timing.factor("m", LOAD) == pytest.approx(2.0)


def test_a_session_takes_its_share_whatever_its_thread_count() -> None:
    # Linux shares the CPUs between sessions ("autogroup") first: a test suite's eight
    # threads in one session take from a job no more than one busy loop does, though
    # the load average counts them all (at a load of 10 the old law said 13.8 times).
    one_loop = timing.Demand((1.0,), 0.0, 2)
    suite = timing.Demand((8.0,), 0.0, 2)
    assert timing.share_slowdown(2, suite) == timing.share_slowdown(2, one_loop) == 2.0
    # six sessions of one busy loop each: 7 sessions share 2 CPUs
    apart = timing.Demand((1.0,) * 6, 0.0, 2)
    assert timing.share_slowdown(2, apart) == pytest.approx(7.0)
    assert timing.share_slowdown(1, apart) == pytest.approx(3.5)
    # work in the job's own session shares the session's CPUs with it: (2 + 4) / 2
    assert timing.share_slowdown(2, timing.Demand((), 4.0, 2)) == pytest.approx(3.0)
    # an idle machine, or a session that wants less than its share, costs nothing
    assert timing.share_slowdown(2, timing.Demand((), 0.0, 2)) == 1.0
    assert timing.share_slowdown(1, timing.Demand((0.5,), 0.0, 2)) == 1.0
    assert timing.share_slowdown(2, timing.Demand((0.5,), 0.0, 2)) == pytest.approx(4 / 3)


def test_threads_that_wait_for_each_other_lose_more_than_their_share() -> None:
    assert timing.scaled(1.0, 2.2) == 1.0
    assert timing.scaled(3.0) == 3.0
    assert timing.scaled(3.0, 2.2) == pytest.approx(5.4)
    torch, onnx = registry.named_models()[0], named_model("minilm-onnx-int8")
    assert onnx is not None
    assert torch.speed.thread_wait > onnx.speed.thread_wait > 1.0


def test_the_demand_is_read_from_the_sessions_of_this_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demand = timing.read_demand()
    if demand is None:
        pytest.skip("no /proc autogroups here")
    assert demand.cpus >= 1 and demand.own >= 0 and all(d > 0 for d in demand.others)
    # contention() reads it; where it cannot, the load average's tasks count one each
    monkeypatch.setattr(timing, "contention", REAL_CONTENTION)
    monkeypatch.setattr(timing, "read_demand", lambda: None)
    monkeypatch.setattr(timing, "_DEMAND", [])
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (6.0, 0.0, 0.0))
    assert timing.machine_demand().others == (1.0,) * 6


def test_an_estimate_under_sessions_of_other_work_follows_their_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a load average of 6.3 from two busy sessions: the embedding's session gets a
    # third of the 2 CPUs (3 times as long, more for threads that wait); the old law
    # read the load average: 1 + 2.7 * (6.3 / 2 - 0.25), 8.8 times
    monkeypatch.setattr(timing, "contention", REAL_CONTENTION)
    monkeypatch.setattr(timing, "_DEMAND", [], raising=False)
    monkeypatch.setattr(timing.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(timing.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (6.3, 6.0, 5.0))
    two_sessions = timing.Demand((3.0, 3.0), 0.0, 2) if hasattr(timing, "Demand") else None
    monkeypatch.setattr(timing, "read_demand", lambda: two_sessions, raising=False)
    speed = named_model("minilm-onnx-int8").speed  # type: ignore[union-attr]
    idle = speed.embedding_seconds([speed.window_pieces] * 100)
    estimated = estimate_embedding_seconds("minilm-onnx-int8", 100)
    # a third of the CPUs: 3 times its share of the time, ONNX's threads losing 1.2 times
    # the excess (the load-average law said 8.8 times)
    assert estimated == pytest.approx(idle * (1 + 1.2 * (3 - 1)))


def test_records_of_another_contention_law_are_not_read(timings: Path) -> None:
    # a file written before the law changed: predicted with the square of the load
    timings.write_text(json.dumps({"m": {LOAD: {"predicted": 100.0, "measured": 5.0}}}))
    assert timing.factor("m", LOAD) == 1.0
    timing.record("m", LOAD, 2.0, 4.0, load=1.0)
    assert timing.factor("m", LOAD) == pytest.approx(2.0)


def test_embedding_cost_counts_pieces_up_to_the_window_and_each_text() -> None:
    assert SPEED.embedding_seconds([30, 1000]) == pytest.approx(1e-4 * (30 + 100 + 2 * 20))
    assert SPEED.embedding_seconds([]) == 0.0


def test_the_pieces_of_many_texts_are_counted_on_a_sample() -> None:
    counted: list[int] = []

    def count(texts: list[str]) -> list[int]:
        counted.append(len(texts))
        return [len(t.split()) for t in texts]

    few = ["one two three", "four five"]
    assert timing.piece_counts(few, count) == [3, 2]
    many = ["a b c d" * n for n in range(1, 2001)]  # 1 + 3n words, 7n characters
    estimated = timing.piece_counts(many, count)
    assert counted[-1] == timing.SAMPLE_TEXTS
    exact = [len(t.split()) for t in many]
    assert sum(estimated) == pytest.approx(sum(exact), rel=0.05)


def test_an_embedder_records_what_its_runs_took(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MIN_SECONDS", 0.0)
    embedder = HashEmbedder()
    embedder.name = "timed-hash"
    embedder.speed = SPEED
    texts = [f"text number {i}" for i in range(50)]
    embedder.embed(texts)
    record = json.loads(timing.timings_path().read_text("utf-8"))["timed-hash"][EMBED]
    pieces = embedder.count_tokens_batch(texts)
    assert record["idle"] == pytest.approx(SPEED.embedding_seconds(pieces))
    assert record["excess"] == 0.0  # the machine is idle here (the fixture)
    assert record["measured"] > 0
    # Cached texts cost nothing and record nothing.
    embedder.embed(texts)
    again = json.loads(timing.timings_path().read_text("utf-8"))["timed-hash"][EMBED]
    assert again == record


def test_a_fake_model_is_not_timed(timings: Path) -> None:
    get_embedder("hash").embed([f"untimed {i}" for i in range(500)])
    assert not timings.exists()
    assert estimate_load_seconds("hash") == 0.0
    assert estimate_embedding_seconds("hash", 1000) == 0.0


def test_a_loaded_model_costs_nothing_to_load_and_cached_texts_nothing_to_embed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real models keep their vectors on disk: start from an empty disk cache, and texts
    # no earlier run can have embedded.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    embedder = get_embedder("minilm-static")  # quick, real
    assert estimate_load_seconds("minilm-static") == 0.0
    run = uuid.uuid4().hex
    texts = [f"A sentence about the number {i} ({run})." for i in range(20)]
    before = estimate_embedding_seconds("minilm-static", texts)
    assert before > 0
    embedder.embed(texts[:10])
    after = estimate_embedding_seconds("minilm-static", texts)
    assert 0 < after < before
    embedder.embed(texts)
    assert estimate_embedding_seconds("minilm-static", texts) == 0.0
    assert estimate_embedding_seconds("minilm-static", texts + texts[:1]) == 0.0


def test_a_count_of_texts_is_estimated_at_the_models_window() -> None:
    speed = named_model("minilm-onnx-int8").speed  # type: ignore[union-attr]
    full = estimate_embedding_seconds("minilm-onnx-int8", 10)
    assert full == pytest.approx(speed.embedding_seconds([speed.window_pieces] * 10))
    short = estimate_embedding_seconds("minilm-onnx-int8", 10, mean_chars=100)
    assert short < full


def test_texts_are_estimated_by_their_word_pieces() -> None:
    from chunking.units import get_sizer

    prose = [f"The river was low that summer {n}, lower than anyone remembered." for n in "abc"]
    figures = [f"Q3 202{n}: 1,234.5 (EUR 0.98m), 17.2% y/y; 4,567.8 [n=12]." for n in "123"]
    ratio = estimate_embedding_seconds("minilm", figures) / estimate_embedding_seconds(
        "minilm", prose
    )
    sizer = get_sizer("model")
    speed = registry.named_models()[0].speed  # the bundled model in torch
    expected = speed.embedding_seconds([sizer.size(t) for t in figures]) / (
        speed.embedding_seconds([sizer.size(t) for t in prose])
    )
    assert ratio == pytest.approx(expected)
    # About as many characters, many more pieces: the figures cost more.
    assert sum(map(len, figures)) < sum(map(len, prose))
    assert sum(map(sizer.size, figures)) > 1.5 * sum(map(sizer.size, prose)) and ratio > 1.1


def test_a_derived_model_not_built_yet_adds_its_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    onnx = named_model("minilm-onnx-int8")
    assert onnx is not None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    assert not onnx.is_built()
    speed = onnx.speed
    assert onnx.ready_seconds() == pytest.approx(speed.build_seconds + speed.load_seconds)
    assert "built on first use (about" in onnx.availability().note
    timing.record(onnx.key, BUILD, 10.0, 30.0, load=1.0)
    assert onnx.ready_seconds() == pytest.approx(3 * (speed.build_seconds + speed.load_seconds))


def test_a_wait_names_its_parts() -> None:
    wait = models.Wait("minilm-onnx-int8", 2.2, 36.0, "491 chunks")
    assert wait.seconds == pytest.approx(38.2)
    assert wait.describe() == (
        "about 40 s (loading minilm-onnx-int8 about 2 s, embedding 491 chunks about 35 s)"
    )
    assert models.Wait("m", 0.0, 12.0, "9 texts").describe() == "about 10 s"
    texts = ["one text", "another text"]
    planned = estimate_wait("minilm-static", texts, "2 sentences")
    assert planned.what == "2 sentences" and planned.model == "minilm-static"
    assert planned.embed_seconds == estimate_embedding_seconds("minilm-static", texts)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.4, "under a second"), (3.4, "about 3 s"), (42, "about 40 s"), (200, "about 3 min")],
)
def test_waits_are_said_as_people_say_them(seconds: float, said: str) -> None:
    assert timing.about(seconds) == said


# ------------------------------------------------------------ chunk-explorer models --build


def _derived(tmp_path: Path, name: str, *, extra_package: str | None = None) -> NamedModel:
    """A derived model whose build writes a folder (the command's flow, not a model)."""
    folder = tmp_path / name

    def load(key: str, note: str, progress: models.Progress | None) -> HashEmbedder:
        if progress is not None:
            progress(0, 2, "building")
            progress(2, 2, "done")
        folder.mkdir()
        return HashEmbedder()

    return NamedModel(
        name,
        name,
        "fake",
        "a model for the command's test",
        64,
        256,
        ("numpy", *([extra_package] if extra_package else [])),
        (),
        "pip install nothing",
        load,
        SPEED,
        folder.is_dir,
    )


def test_models_build_builds_what_is_missing_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    derived = _derived(tmp_path, "derived-a")
    monkeypatch.setattr(registry, "_MODELS", (registry.named_models()[0], derived))
    assert main(["models", "--build"]) == 0
    err = capsys.readouterr().err
    assert "derived-a: building (about" in err
    assert "derived-a: building\n" in err  # the build's own step, one line each
    assert "derived-a: built in" in err
    assert "minilm" not in err  # the bundled model has nothing to build
    assert main(["models", "--build"]) == 0
    assert "derived-a: already built" in capsys.readouterr().err


def test_models_build_fails_with_the_reason_when_a_package_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _derived(tmp_path, "derived-b", extra_package="no_such_package_here")
    monkeypatch.setattr(registry, "_MODELS", (missing,))
    assert main(["models", "--build"]) == 1
    err = capsys.readouterr().err
    assert "derived-b: not built: needs no_such_package_here: pip install nothing" in err
    assert not (tmp_path / "derived-b").exists()


def test_a_write_and_a_map_count_their_own_work_after_the_embedding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chunking.embedding.models import estimate_map_seconds, estimate_write_seconds

    # a library imported already costs only its records; one not imported its import too
    few, many = estimate_write_seconds(100, "json"), estimate_write_seconds(10_000, "json")
    assert 0 < few < many
    assert estimate_write_seconds(100, "not_imported_here") > few + 0.5
    assert 0 < estimate_map_seconds(100) < estimate_map_seconds(5_000)
    # on a loaded machine they take longer, but less than the embedding's threads lose
    idle = estimate_write_seconds(1_000, "json")
    monkeypatch.setattr(timing, "contention", REAL_CONTENTION)
    monkeypatch.setattr(timing, "machine_demand", lambda: timing.Demand((1.0,) * 6, 0.0, 2))
    loaded = estimate_write_seconds(1_000, "json")
    assert loaded == pytest.approx(3.5 * idle)  # one of 7 sessions' threads on 2 CPUs
    assert timing.contention(threads=1) < timing.contention()  # 3.5 against 7


def test_a_wait_includes_the_work_after_the_embedding() -> None:
    from chunking.embedding.models import Wait

    wait = Wait("minilm", 5.0, 30.0, "359 chunks", then="writing them", then_seconds=12.0)
    assert wait.seconds == pytest.approx(47.0)
    assert wait.describe() == (
        "about 45 s (loading minilm about 5 s, embedding 359 chunks about 30 s, "
        "writing them about 10 s)"
    )
    assert "writing" not in Wait("minilm", 5.0, 30.0, "359 chunks").describe()
