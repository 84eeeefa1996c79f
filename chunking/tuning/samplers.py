"""Samplers: which point of the space to evaluate next.

``grid`` walks every point on paper in order; ``random`` walks them in a seeded random
order; ``tpe`` asks Optuna's Tree-structured Parzen Estimator
(:class:`optuna.samplers.TPESampler`, seeded), which draws every axis and learns from
the quality each trial reports. A sampler is asked for a draw (axis name → value) and
told the quality it got (``None`` for a point that could not run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

SAMPLERS = ("grid", "random", "tpe")


def check_sampler(name: str) -> str:
    if name not in SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; choose one of: {', '.join(SAMPLERS)}")
    return name


class Sampler(Protocol):
    def ask(self) -> dict[str, Any] | None:
        """The next draw, or None when the sampler has nothing more to offer."""

    def tell(self, quality: float | None) -> None:
        """The quality of the last draw (None: it could not run)."""


class OrderSampler:
    """The points on paper in a fixed order (``grid``) or a seeded shuffle (``random``)."""

    def __init__(self, paper: Sequence[Mapping[str, Any]], seed: int | None = None) -> None:
        order = (
            np.arange(len(paper))
            if seed is None
            else np.random.default_rng(seed).permutation(len(paper))
        )
        self._queue = [dict(paper[int(i)]) for i in order]
        self._next = 0

    def ask(self) -> dict[str, Any] | None:
        if self._next >= len(self._queue):
            return None
        self._next += 1
        return self._queue[self._next - 1]

    def tell(self, quality: float | None) -> None:
        pass


def _primitive(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class TPESampler:
    """Optuna's TPE over every axis (categorical), maximising the quality."""

    def __init__(self, axes: Mapping[str, Sequence[Any]], seed: int, startup: int = 10) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.ERROR)
        self._optuna = optuna
        self._axes = {k: list(v) for k, v in axes.items()}
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(1, startup))
        self._study = optuna.create_study(direction="maximize", sampler=sampler)
        self._trial: Any = None

    def ask(self) -> dict[str, Any] | None:
        self._trial = self._study.ask()
        draw = {}
        for name, values in self._axes.items():
            if all(_primitive(v) for v in values):
                draw[name] = self._trial.suggest_categorical(name, values)
            else:  # lists (separators…) are drawn by their JSON text
                texts = [json.dumps(v) for v in values]
                draw[name] = json.loads(self._trial.suggest_categorical(name, texts))
        return draw

    def tell(self, quality: float | None) -> None:
        if self._trial is None:
            return
        if quality is None or quality != quality:  # NaN
            self._study.tell(self._trial, state=self._optuna.trial.TrialState.FAIL)
        else:
            self._study.tell(self._trial, float(quality))
        self._trial = None


def make_sampler(
    name: str,
    paper: Sequence[Mapping[str, Any]],
    axes: Mapping[str, Sequence[Any]],
    seed: int,
    budget: int,
) -> Sampler:
    """The sampler ``name`` over the points ``paper`` (``axes``: every axis's values)."""
    check_sampler(name)
    if name == "grid":
        return OrderSampler(paper)
    if name == "random":
        return OrderSampler(paper, seed)
    return TPESampler(axes, seed, startup=min(10, max(3, budget // 3)))
