"""What a language-model run will cost before it starts, and the run itself.

:func:`estimate` counts the calls (and how many are cached already), the tokens read and
written (cl100k tokens: close to most models' own counts) and the time, from the model's
:class:`~chunking.llm.client.Speed` scaled by what earlier runs measured: every run
records its estimated and measured seconds per model (``speed.json`` in the cache
folder), so the next estimate is calibrated on this machine.

:func:`run_requests` asks the requests in order with progress and cancel; an error
(unreachable endpoint, timeout, malformed answer) stops the run and keeps every answer
given so far (they are cached, so running again continues where it stopped).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model import Progress
from ..units import get_sizer
from .cache import write_json
from .client import LLM, LLMError, Request

#: Asked between requests; a true answer stops the run (cancel).
ShouldStop = Callable[[], bool]
#: Tokens a chat template adds around a prompt.
TEMPLATE_TOKENS = 12
#: Bounds of the calibration factor, so that one odd run cannot make estimates absurd.
FACTOR_RANGE = (0.1, 10.0)

_CALIBRATION_LOCK = threading.Lock()


def _calibration_path(llm: LLM) -> Path | None:
    """``speed.json`` in the model's cache folder; None for a model without a cache
    (its estimates stay uncalibrated)."""
    directory = getattr(getattr(llm, "cache", None), "directory", None)
    return Path(directory) / "speed.json" if directory is not None else None


def _read_calibration(path: Path) -> dict[str, dict[str, float]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def speed_factor(llm: LLM) -> float:
    """Measured over estimated seconds of this model's earlier runs (1 when unmeasured)."""
    path = _calibration_path(llm)
    record = _read_calibration(path).get(llm.name, {}) if path is not None else {}
    try:
        estimated, measured = float(record["estimated"]), float(record["measured"])
    except (KeyError, TypeError, ValueError):
        return 1.0
    if estimated <= 0 or measured <= 0:
        return 1.0
    low, high = FACTOR_RANGE
    return min(max(measured / estimated, low), high)


def record_speed(llm: LLM, estimated: float, measured: float) -> None:
    """Add a run's uncalibrated estimate and measured seconds to the model's record."""
    path = _calibration_path(llm)
    if path is None or estimated <= 0 or measured <= 0:
        return
    with _CALIBRATION_LOCK:
        data = _read_calibration(path)
        record = data.get(llm.name, {})
        try:
            total_estimated = float(record.get("estimated", 0.0)) + estimated
            total_measured = float(record.get("measured", 0.0)) + measured
        except (TypeError, ValueError, AttributeError):
            total_estimated, total_measured = estimated, measured
        data[llm.name] = {"estimated": total_estimated, "measured": total_measured}
        write_json(path, data)


def request_tokens(request: Request) -> int:
    """Tokens a request reads (cl100k count of its texts plus the chat template)."""
    sizer = get_sizer("tokens")
    return sizer.size(request.system) + sizer.size(request.prompt) + TEMPLATE_TOKENS


def _raw_seconds(llm: LLM, request: Request) -> float:
    return llm.speed.seconds(request_tokens(request), request.expected_tokens)


@dataclass(frozen=True)
class Estimate:
    """The cost of a run: calls to make, calls already cached, tokens, time."""

    model: str
    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    seconds: float

    def describe(self) -> str:
        """``"12 calls to M (3 cached), about 4,200 tokens read and 600 written, about 1 min"``."""
        cached = f" ({self.cached} cached, free)" if self.cached else ""
        return (
            f"{self.calls} call{'s' if self.calls != 1 else ''} to {self.model}{cached}, "
            f"about {self.input_tokens:,} tokens read and {self.output_tokens:,} written, "
            f"about {duration(self.seconds)}"
        )


def estimate(llm: LLM, requests: Sequence[Request]) -> Estimate:
    """What asking ``requests`` will cost; cached answers cost nothing."""
    todo = [r for r in requests if not llm.is_cached(r)]
    raw = sum(_raw_seconds(llm, r) for r in todo)
    return Estimate(
        llm.name,
        calls=len(requests),
        cached=len(requests) - len(todo),
        input_tokens=sum(request_tokens(r) for r in todo),
        output_tokens=sum(r.expected_tokens for r in todo),
        seconds=raw * speed_factor(llm),
    )


def duration(seconds: float) -> str:
    """``"45 s"``, ``"3 min 20 s"``, ``"1 h 5 min"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@dataclass
class Run:
    """The answers of a run (None where it stopped before them) and what it took."""

    answers: list[str | None]
    estimate: Estimate
    seconds: float
    asked: int
    error: str | None = None
    cancelled: bool = False

    @property
    def done(self) -> int:
        return sum(a is not None for a in self.answers)

    @property
    def complete(self) -> bool:
        return self.done == len(self.answers)

    def describe(self) -> str:
        """How the run went, with the measured time next to the estimate."""
        text = (
            f"{self.done} of {len(self.answers)} answers in {duration(self.seconds)} "
            f"(estimated {duration(self.estimate.seconds)}; {self.asked} asked, "
            f"{self.done - self.asked} from the cache)"
        )
        if self.cancelled:
            text += "; cancelled, the answers so far are kept"
        if self.error:
            text += f"; stopped: {self.error}"
        return text

    def check(self) -> list[str]:
        """Every answer, or :class:`LLMError` saying what stopped the run and that the
        answers so far are kept (cached: running again continues)."""
        if self.complete:
            return [a or "" for a in self.answers]
        why = self.error or "cancelled"
        raise LLMError(
            f"{why} ({self.done} of {len(self.answers)} answers kept in the cache; run "
            "again to continue)"
        )


def run_requests(
    llm: LLM,
    requests: Sequence[Request],
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> Run:
    """Ask ``requests`` in order; stop at the first error or when ``should_stop()``."""
    planned = estimate(llm, requests)
    answers: list[str | None] = [None] * len(requests)
    run = Run(answers, planned, 0.0, 0)
    raw_estimated = measured = 0.0
    began = time.perf_counter()
    for i, request in enumerate(requests):
        if should_stop is not None and should_stop():
            run.cancelled = True
            break
        try:
            answer = llm.complete(request)
        except LLMError as exc:
            run.error = str(exc)
            break
        answers[i] = answer.text
        if not answer.cached:
            run.asked += 1
            raw_estimated += _raw_seconds(llm, request)
            measured += answer.seconds
        if progress is not None:
            progress(i + 1, len(requests), "answers")
    run.seconds = time.perf_counter() - began
    record_speed(llm, raw_estimated, measured)
    return run


def cached_answers(llm: LLM, requests: Sequence[Request]) -> list[str | None]:
    """The answers already known for ``requests`` (None where the model was not asked
    yet): what a stopped or cancelled run kept, shown without calling the model."""
    cache = getattr(llm, "cache", None)
    if cache is None:
        return [None] * len(requests)
    found = (cache.get(llm.name, r.system, r.prompt) for r in requests)
    return [a.text if a is not None else None for a in found]
