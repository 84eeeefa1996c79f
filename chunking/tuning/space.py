"""The search space: chunking axes from the registry's parameters plus retrieval axes.

A space is read from a JSON object (``--space SPACE.json``) or from the command line's
lists. Axes, each a list of values (or, for numbers, ``{"low": 100, "high": 800,
"step": 100}``):

- ``strategy``; ``size`` (each strategy's size limit: ``size``, ``max_size``,
  ``chunk_size``, ``window``…), ``overlap`` (a value in (0, 1) is a share of the size),
  ``unit``, ``threshold``: applied to the strategies that have them, as in a sweep;
- ``vary``: ``{"param": [values]}`` for any other strategy parameter;
- ``params``: parameters fixed for every strategy that has them;
- retrieval: ``retriever``, ``embedding``, ``context``, ``return`` and ``top_k``;
- ``model``: the embedding models searched (names as ``--model`` takes them). Without
  it every trial uses the search's one model; with it each point carries its model.

A *point* is one choice on every axis that applies to its strategy; the points on
paper are every such combination. A point is invalid when its strategy rejects it
(overlap not below the size, say): it is skipped and counted, never embedded.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config, get_strategy
from ..evaluation.techniques import Technique
from ..params import Strategy

#: Chunking axes with their own key (as in a sweep grid).
CHUNK_AXES = ("size", "overlap", "unit", "threshold")
#: Retrieval axes: the technique's four choices and the number of units returned.
RETRIEVAL_AXES = ("retriever", "embedding", "context", "return", "top_k")
#: The embedding-model axis (kept with the retrieval axes: it decides what is retrieved).
MODEL_AXIS = "model"
DEFAULT_TOP_K = 5
KNOWN_KEYS = ("strategy", *CHUNK_AXES, "vary", "params", *RETRIEVAL_AXES, MODEL_AXIS)


def _values(name: str, value: Any) -> tuple[Any, ...]:
    """An axis as a tuple: a list, one value, or a numeric range ``{low, high, step}``."""
    if isinstance(value, Mapping):
        try:
            low, high = value["low"], value["high"]
        except KeyError:
            raise ValueError(f'axis {name!r}: a range needs "low" and "high"') from None
        step = value.get("step", 1)
        numbers = [low, high, step]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in numbers):
            raise ValueError(f"axis {name!r}: low, high and step are numbers")
        if step <= 0 or high < low:
            raise ValueError(f"axis {name!r}: a range needs low ≤ high and a positive step")
        count = int((high - low) / step + 1e-9) + 1
        if count > 1000:
            raise ValueError(f"axis {name!r}: the range has {count} values; at most 1000")
        values = [low + i * step for i in range(count)]
        whole = all(float(v).is_integer() for v in numbers)
        return tuple(int(v) if whole else round(float(v), 10) for v in values)
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError(f"axis {name!r} is an empty list; give at least one value")
    return tuple(dict.fromkeys(values))


def _numbers(name: str, values: tuple[Any, ...], whole: bool) -> tuple[Any, ...]:
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"axis {name!r} takes numbers; got {v!r}")
        if whole and not float(v).is_integer():
            raise ValueError(f"axis {name!r} takes whole numbers; got {v!r}")
    return tuple(int(v) if whole else v for v in values)


@dataclass(frozen=True)
class Point:
    """One point of the space: a configuration and how it is retrieved, or why not."""

    values: Mapping[str, Any]
    config: Config | None
    technique: Technique | None
    top_k: int
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def model(self) -> str | None:
        """The point's embedding model when the space has a model axis, else None (the
        search's one model)."""
        value = self.values.get(MODEL_AXIS)
        return None if value is None else str(value)

    def label(self, *, retrieval: bool = True) -> str:
        """The configuration's label, with the technique and k when they vary."""
        if self.config is None:
            return _describe(self.values)
        parts = [self.config.label()]
        if retrieval and self.technique is not None and self.technique.name != "dense":
            parts.append(self.technique.name)
        if retrieval:
            parts.append(f"top {self.top_k}")
        if retrieval and self.model is not None:
            parts.append(self.model)
        return " · ".join(parts)


def _describe(values: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


@dataclass(frozen=True)
class Space:
    """Every axis of a search; see the module docstring."""

    strategies: tuple[str, ...] = ("recursive",)
    axes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    vary: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    retrieval: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Space:
        if not isinstance(data, Mapping):
            raise ValueError('a space is a JSON object such as {"strategy": ["recursive"]}')
        unknown = [k for k in data if k not in KNOWN_KEYS]
        if unknown:
            raise ValueError(
                f"unknown key {unknown[0]!r} in the space; keys are: {', '.join(KNOWN_KEYS)}"
            )
        strategies = tuple(str(s) for s in _values("strategy", data.get("strategy", "recursive")))
        specs = [get_strategy(s) for s in strategies]
        axes: dict[str, tuple[Any, ...]] = {}
        for name in CHUNK_AXES:
            if data.get(name) is None:
                continue
            values = _values(name, data[name])
            if name == "size":
                values = _numbers(name, values, whole=True)
            elif name in ("overlap", "threshold"):
                values = _numbers(name, values, whole=False)
                if name == "overlap":
                    for v in values:
                        if v >= 1 and not float(v).is_integer():
                            raise ValueError(
                                f"overlap {v:g} is neither a whole number nor a share in (0, 1)"
                            )
            else:
                values = tuple(str(v) for v in values)
            axes[name] = values
        vary = data.get("vary", {})
        fixed = data.get("params", {})
        for key, value in (("vary", vary), ("params", fixed)):
            if not isinstance(value, Mapping):
                raise ValueError(f'"{key}" in a space is an object of parameter names')
        for name in (*vary, *fixed):
            if not any(name in spec.param_names for spec in specs):
                raise ValueError(
                    f"no strategy in the space ({', '.join(strategies)}) has a parameter {name!r}"
                )
        retrieval: dict[str, tuple[Any, ...]] = {}
        for name in (*RETRIEVAL_AXES, MODEL_AXIS):
            if data.get(name) is not None:
                values = _values(name, data[name])
                if name == "top_k":
                    values = _numbers(name, values, whole=True)
                    if min(values) < 1:
                        raise ValueError("axis 'top_k': k must be at least 1")
                else:
                    values = tuple(str(v) for v in values)
                    if name == "context" and "llm" in values:
                        raise ValueError(
                            "the llm context is not searched (each trial would call a "
                            "language model); evaluate it with chunk-explorer evaluate"
                        )
                retrieval[name] = values
        return cls(
            strategies,
            axes,
            {k: _values(k, v) for k, v in vary.items()},
            dict(fixed),
            retrieval,
        )

    def to_dict(self) -> dict[str, Any]:
        """The space as :meth:`from_dict` reads it."""
        data: dict[str, Any] = {"strategy": list(self.strategies)}
        data.update({k: list(v) for k, v in self.axes.items()})
        if self.vary:
            data["vary"] = {k: list(v) for k, v in self.vary.items()}
        if self.fixed:
            data["params"] = dict(self.fixed)
        data.update({k: list(v) for k, v in self.retrieval.items()})
        return data

    # -------------------------------------------------------------- axes and points

    def axes_of(self, strategy: str) -> dict[str, tuple[Any, ...]]:
        """The axes that apply to ``strategy``, in order, with their values."""
        spec = get_strategy(strategy)
        names = spec.param_names
        out: dict[str, tuple[Any, ...]] = {}
        if "size" in self.axes and spec.limit_param:
            out["size"] = self.axes["size"]
        if "overlap" in self.axes and "overlap" in names:
            out["overlap"] = self.axes["overlap"]
        if "unit" in self.axes and "unit" in names:
            param = spec.param("unit")
            choices = param.choices or ()
            usable = tuple(u for u in self.axes["unit"] if u in choices or param.matches_pattern(u))
            if usable:
                out["unit"] = usable
        if "threshold" in self.axes and "threshold" in names:
            out["threshold"] = self.axes["threshold"]
        for name, values in self.vary.items():
            if name in names:
                out[name] = values
        out.update(self.retrieval_axes())
        return out

    def retrieval_axes(self) -> dict[str, tuple[Any, ...]]:
        return {k: v for k, v in self.retrieval.items() if len(v) > 0}

    def sampler_axes(self) -> dict[str, tuple[Any, ...]]:
        """Every axis over all strategies (a sampler draws each; a strategy reads the
        ones it has): ``strategy`` first."""
        out: dict[str, tuple[Any, ...]] = {"strategy": self.strategies}
        for strategy in self.strategies:
            for name, values in self.axes_of(strategy).items():
                merged = out.get(name, ())
                out[name] = tuple(dict.fromkeys((*merged, *values)))
        return out

    def paper(self) -> list[dict[str, Any]]:
        """Every point on paper, as its axis values (``strategy`` first)."""
        points = []
        for strategy in self.strategies:
            axes = self.axes_of(strategy)
            for combination in itertools.product(*axes.values()):
                points.append({"strategy": strategy, **dict(zip(axes, combination, strict=True))})
        return points

    def relevant(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values a strategy reads out of a draw over every axis."""
        strategy = values["strategy"]
        axes = self.axes_of(strategy)
        return {"strategy": strategy, **{k: values[k] for k in axes if k in values}}

    def point(self, values: Mapping[str, Any]) -> Point:
        """The configuration and technique of a point, or the reason it is invalid."""
        strategy = str(values["strategy"])
        spec = get_strategy(strategy)
        top_k = int(values.get("top_k", DEFAULT_TOP_K))
        try:
            params = self._params(spec, values)
            config = Config.create(strategy, **params)
            technique = Technique.parse(
                str(values.get("retriever", "dense")),
                str(values.get("embedding", "naive")),
                str(values.get("context", "none")),
                str(values.get("return", "chunk")),
            )
            technique.check(config)
        except ValueError as exc:
            return Point(dict(values), None, None, top_k, f"{_describe(values)}: {exc}")
        return Point(dict(values), config, technique, top_k)

    def _params(self, spec: Strategy, values: Mapping[str, Any]) -> dict[str, Any]:
        params = {k: v for k, v in self.fixed.items() if k in spec.param_names}
        limit = spec.limit_param
        if "size" in values and limit:
            params[limit] = values["size"]
        if "overlap" in values:
            overlap = values["overlap"]
            if 0 < overlap < 1:
                base = params.get(limit or "", spec.defaults().get(limit or "", 0))
                overlap = round(overlap * base)
            params["overlap"] = int(overlap)
        for name in ("unit", "threshold", *self.vary):
            if name in values and name in spec.param_names:
                params[name] = values[name]
        return params


def load_space(path: str | Path) -> Space:
    """Read a space from a JSON file; ``ValueError`` naming the file otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        return Space.from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def space_from_lists(
    strategies: Sequence[str] | None = None,
    sizes: Sequence[int] | None = None,
    overlaps: Sequence[float] | None = None,
    units: Sequence[str] | None = None,
    **retrieval: Sequence[Any] | None,
) -> Space:
    """A space from command-line lists (None: the axis is not searched)."""
    data: dict[str, Any] = {"strategy": list(strategies or ["recursive"])}
    for name, values in (("size", sizes), ("overlap", overlaps), ("unit", units)):
        if values:
            data[name] = list(values)
    data.update({k: list(v) for k, v in retrieval.items() if v})
    return Space.from_dict(data)
