"""What the commands share: the document and strategy flags, the configuration they
settle, the language-model flags, and where output goes.

Every command module builds on this one; it imports no other command. Problems are
raised as ``ValueError`` with a one-line message, which :func:`chunking.cli.main`
prints and turns into exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, BinaryIO, TextIO

from ..analysis.recommend import overlap_for, recommend
from ..config import Config, get_strategy, strategies
from ..documents.io import MAX_BYTES_DEFAULT, Document, read_path
from ..llm.client import LLM, LOCAL_MODEL, make_llm
from ..llm.cost import Estimate
from ..model import STEPS, Progress
from ..params import Strategy

PROG = "chunk-explorer"
AUTO = "auto"
EXIT_USAGE = 2

#: Flags that set a strategy parameter of the same name.
PARAM_FLAGS = ("size", "overlap", "unit", "model")


# ------------------------------------------------------------ document and strategy


def strategy_options() -> argparse.ArgumentParser:
    """The document and strategy flags shared by ``split``, ``stats``, ``enrich`` and ``run``."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("file", metavar="FILE", help="the document to chunk")
    names = ", ".join(strategies())
    options.add_argument(
        "--strategy",
        "-s",
        metavar="NAME",
        help=f"one of: {names}; or '{AUTO}' (default) to use the recommended strategy",
    )
    options.add_argument("--size", metavar="N", help="maximum chunk size (parameter 'size')")
    options.add_argument(
        "--overlap", metavar="N", help="units shared by consecutive chunks ('overlap')"
    )
    options.add_argument("--unit", metavar="UNIT", help="chars, words or tokens ('unit')")
    options.add_argument(
        "--model", metavar="NAME_OR_PATH", help="embedding model ('model', semantic strategy)"
    )
    options.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set any strategy parameter; VALUE is read as JSON when it parses "
        "(numbers, true/false, lists), else as text. Repeatable.",
    )
    options.add_argument(
        "--config",
        metavar="CONFIG.json",
        help="a configuration exported by the app; other flags override it",
    )
    options.add_argument(
        "--encoding",
        metavar="NAME",
        help="decode a text file with this encoding (e.g. cp1252, latin-1, cp1251) instead "
        "of detecting it; the detected encoding and its confidence are reported",
    )
    options.add_argument(
        "--password",
        metavar="TEXT",
        help="the password of an encrypted PDF (there is no prompt)",
    )
    options.add_argument(
        "--pdf-order",
        choices=("layout", "stream"),
        default="layout",
        help="a PDF's reading order: columns read one after the other (layout, default) "
        "or the order of its content stream",
    )
    options.add_argument(
        "--keep-furniture",
        action="store_true",
        help="keep a PDF's running headers, footers and page numbers in the text",
    )
    options.add_argument(
        "--max-mb",
        type=float,
        default=MAX_BYTES_DEFAULT / 2**20,
        metavar="N",
        help="refuse files larger than N MB (default %(default)g)",
    )
    return options


# ------------------------------------------------------------------- configuration


def parse_param(item: str) -> tuple[str, Any]:
    """``"key=value"`` as ``(key, value)``; the value is JSON when it parses.

    >>> parse_param('separators=["a", "b"]')
    ('separators', ['a', 'b'])
    >>> parse_param("keep_separator=start")
    ('keep_separator', 'start')
    """
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--param expects KEY=VALUE (for example size=500); got {item!r}")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def overrides(args: argparse.Namespace) -> dict[str, tuple[str, Any]]:
    """Parameters set on the command line: name -> (the flag that set it, value)."""
    found: dict[str, tuple[str, Any]] = {}
    for item in args.param:
        key, value = parse_param(item)
        found[key] = (f"--param {key}", value)
    for name in PARAM_FLAGS:
        value = getattr(args, name)
        if value is not None:
            found[name] = (f"--{name}", value)
    return found


def load_config(path: str) -> Config:
    """Read a configuration exported as JSON (``Config.to_json``)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ValueError(f"config file {path} was not found; check the path") from None
    except OSError as exc:
        raise ValueError(f"config file {path} cannot be read: {exc.strerror or exc}") from None
    try:
        return Config.from_json(text)
    except ValueError as exc:
        raise ValueError(
            f"config file {path} is {exc}"
            if str(exc).startswith("not ")
            else f"config file {path}: {exc}"
        ) from None


def build_config(
    strategy: str,
    base: Mapping[str, Any],
    overrides: Mapping[str, tuple[str, Any]],
    *,
    rescale_overlap: bool = False,
) -> Config:
    """Validate ``base`` parameters updated with command-line ``overrides``.

    With ``rescale_overlap`` (a recommended configuration), changing the size without
    choosing an overlap keeps the overlap at the recommended share of the new size.
    """
    spec = get_strategy(strategy)
    for name, (source, _) in overrides.items():
        if name not in spec.param_names:
            raise ValueError(_no_such_param(spec, name, source))
    params = dict(base)
    params.update({name: value for name, (_, value) in overrides.items()})
    limit = spec.limit_param
    if rescale_overlap and limit is not None and limit in overrides and "overlap" not in overrides:
        overlap = overlap_for(spec, spec.param(limit).coerce(params[limit]))
        if overlap is not None:
            params["overlap"] = overlap
    return Config.create(strategy, **params)


def _no_such_param(spec: Strategy, name: str, source: str) -> str:
    allowed = ", ".join(spec.param_names) or "none"
    return (
        f"strategy {spec.name!r} has no parameter {name!r} (from {source}); "
        f"its parameters are: {allowed} (see '{PROG} strategies')"
    )


def max_bytes(args: argparse.Namespace) -> int:
    """``--max-mb`` in bytes, checked."""
    if not math.isfinite(args.max_mb) or args.max_mb <= 0:
        raise ValueError(f"--max-mb must be a positive number of megabytes; got {args.max_mb:g}")
    return max(1, int(args.max_mb * 2**20))


def chosen_config(
    args: argparse.Namespace, overrides: Mapping[str, tuple[str, Any]]
) -> Config | None:
    """The configuration named by ``--config`` and/or ``--strategy`` with ``overrides``;
    None when neither names one (or the strategy is ``auto``)."""
    if args.config is not None:
        loaded = load_config(args.config)
        if args.strategy not in (None, loaded.strategy):
            raise ValueError(
                f"--config {args.config} is for strategy {loaded.strategy!r} but --strategy "
                f"is {args.strategy!r}; drop one of them"
            )
        return build_config(loaded.strategy, loaded.params, overrides)
    if args.strategy not in (None, AUTO):
        return build_config(args.strategy, {}, overrides)
    return None


def prepare(args: argparse.Namespace) -> tuple[Config, Document]:
    """Validate the options, read the file and settle the configuration.

    Explicit options are checked before the file is read, so that a typo fails fast.
    """
    chosen = overrides(args)
    limit = max_bytes(args)
    config = chosen_config(args, chosen)
    document = read_path(
        args.file,
        max_bytes=limit,
        encoding=args.encoding,
        pdf_order=args.pdf_order,
        keep_furniture=args.keep_furniture,
        password=args.password,
    )
    note_encoding(document)
    for warning in document.pdf.warnings if document.pdf else ():
        print(f"{PROG}: {document.name}: {warning}", file=sys.stderr)
    if config is None:
        advice = recommend(document.text, document.name, language=document.language)
        config = build_config(advice.strategy, advice.config.params, chosen, rescale_overlap=True)
        # The suggestion on one line (what is used, with any --size etc. applied), then
        # why on a second: the sidebar's line and its "Why" expander.
        print(
            f"{PROG}: strategy {AUTO}: using {advice.strategy!r}: {config.label(title=True)} "
            f"(suggested for this {advice.kind} document)\n{PROG}: why: {advice.reason}",
            file=sys.stderr,
        )
    return follow_model_unit(config, strategy_model(config)), document


def strategy_model(config: Config) -> str | None:
    """The embedding model a configuration's strategy names (None: it embeds nothing)."""
    return config.params.get("model") if "model" in config.spec.param_names else None


def follow_model_unit(config: Config, model: str | None) -> Config:
    """``config`` with its ``model`` unit counting ``model``'s own tokens
    (:func:`chunking.embedding.unit.follow_model`): the configuration then says what
    it counts. A model whose tokens cannot be counted here keeps the bundled word
    pieces, with one warning line on stderr."""
    if model is None or config.params.get("unit") != "model":
        return config
    from ..embedding.unit import follow_model

    config, resolved = follow_model(config, model)
    if resolved is not None and resolved.warning:
        print(f"{PROG}: warning: {resolved.warning}", file=sys.stderr)
    return config


def follow_model_units(units: Any, model: str | None) -> list[str]:
    """``units`` (a sweep's or search's unit axis) with ``model`` resolved for ``model``,
    warning on stderr as :func:`follow_model_unit` does."""
    if model is None or not units or "model" not in units:
        return list(units or [])
    from ..embedding.unit import model_unit, resolve_units

    warning = model_unit(model).warning
    if warning:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    return resolve_units(list(units), model)


def note_encoding(document: Document) -> None:
    """Say on stderr how a text file was decoded when the detection was unsure."""
    if document.encoding_warning:
        confidence = document.encoding_confidence or 0.0
        print(
            f"{PROG}: {document.name}: {document.encoding_warning} (confidence "
            f"{confidence:.0%}; --encoding NAME to choose)",
            file=sys.stderr,
        )


# --------------------------------------------------------------------- language model


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """--llm-url URL, --llm-model NAME (key from OPENAI_API_KEY), --yes"""
    group = parser.add_argument_group("language model")
    group.add_argument(
        "--llm-url",
        metavar="URL",
        help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); the "
        f"key comes from OPENAI_API_KEY. Default: the offline {LOCAL_MODEL} (weak, slow)",
    )
    group.add_argument("--llm-model", metavar="NAME", help="the endpoint's model name")
    group.add_argument(
        "--yes", "-y", action="store_true", help="run without asking once the cost is shown"
    )


def client_from_args(args: argparse.Namespace) -> LLM:
    """The model the options name: the endpoint, or the local SmolLM2 when no --llm-url."""
    return make_llm(getattr(args, "llm_url", None), getattr(args, "llm_model", None))


def confirm(
    cost: Estimate,
    llm: LLM,
    yes: bool,
    *,
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> None:
    """Show the cost on stderr and ask to go on (unless ``yes``, or nothing is to be
    asked); raise ``ValueError`` when the user declines or cannot be asked."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    print(f"cost: {cost.describe()}", file=stderr)
    if llm.note:
        print(f"note: {llm.note}", file=stderr)
    if yes or cost.calls == cost.cached:
        return
    if not stdin.isatty():
        raise ValueError("not run: confirm the cost above with --yes")
    print("Go on? [y/N] ", end="", file=stderr, flush=True)
    if stdin.readline().strip().lower() not in ("y", "yes"):
        raise ValueError("not run: declined")


# -------------------------------------------------------------------------- output


def terminal_progress(
    label: str, out: TextIO | None = None, *, enabled: bool | None = None
) -> Progress | None:
    """A progress callback drawing one line on ``out`` (stderr), or None when that is not
    a terminal (unless ``enabled`` says otherwise). On a stream that is not a terminal
    (a log, a pipe), an enabled callback writes a line per stage instead of redrawing
    one (:func:`stage_lines`)."""
    stream = out or sys.stderr
    tty = stream.isatty()
    if not (tty if enabled is None else enabled):
        return None
    if not tty:
        return stage_lines(label, stream)

    def show(done: int, total: int, what: str) -> None:
        share = done / total if total else 1.0
        counts = "" if total == STEPS else f" {done:,}/{total:,}"
        line = f"{label}: {what}{counts}"
        end = "\n" if done >= total else ""
        stream.write(f"\r[{share:4.0%}] {line[:100]:<100}{end}")
        stream.flush()

    return show


def stage_lines(label: str, stream: TextIO) -> Progress:
    """A progress callback for a log: one line when a stage starts (its description
    with the numbers left out changes: ``2/8: recursive · 600 chars — embedding``) and
    one when the whole job is done, each flushed, so that a long run without a terminal
    is seen to move."""
    seen = [""]

    def show(done: int, total: int, what: str) -> None:
        stage = re.sub(r"\d[\d,.]*", "#", what) if done < total else "\0done"
        if stage == seen[0]:
            return
        seen[0] = stage
        share = done / total if total else 1.0
        stream.write(f"[{share:4.0%}] {label}: {'done' if done >= total else what}\n")
        stream.flush()

    return show


@contextmanager
def output(path: str | None) -> Iterator[TextIO]:
    """The stream chunks are written to: the file at ``path`` or stdout, as UTF-8."""
    if path is None:
        _utf8_stdout()
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


@contextmanager
def binary_output(path: str) -> Iterator[BinaryIO]:
    """The binary file at ``path``, with the same message as :func:`output` on failure."""
    try:
        handle = open(path, "wb")  # noqa: SIM115
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


def _utf8_stdout() -> None:
    """Chunk data is always written as UTF-8, whatever the locale says."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("_", "-")
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if encoding not in ("utf-8", "utf8") and reconfigure is not None:
        reconfigure(encoding="utf-8")


# ------------------------------------------------------------------ embedding endpoint


def add_embed_arguments(parser: argparse.ArgumentParser) -> None:
    """--embed-url URL, --embed-model NAME, --embed-key-env VAR, --embed-window N,
    --embed-tokenizer cl100k|model|tokenizer:PATH, --embed-price USD, --embed-timeout S:
    an OpenAI-compatible embeddings endpoint as one more model
    (:func:`embed_model_from_args` turns them into its name)."""
    group = parser.add_argument_group("embedding endpoint (OpenAI-compatible)")
    group.add_argument(
        "--embed-url",
        metavar="URL",
        help="an OpenAI-compatible embeddings endpoint, e.g. http://localhost:11434/v1 "
        "(Ollama) or https://api.openai.com/v1; the key comes from OPENAI_API_KEY",
    )
    group.add_argument("--embed-model", metavar="NAME", help="the endpoint's embedding model")
    group.add_argument(
        "--embed-key-env",
        metavar="VAR",
        help="read the endpoint's key from this environment variable (default OPENAI_API_KEY)",
    )
    group.add_argument(
        "--embed-window",
        type=int,
        metavar="N",
        help="tokens of a text the model reads (known for OpenAI's models; else 512 is guessed)",
    )
    group.add_argument(
        "--embed-tokenizer",
        metavar="cl100k|model|tokenizer:PATH",
        help="what the model's tokens are counted with (known for OpenAI's models; else "
        "cl100k is guessed): cl100k_base, the bundled model's word pieces, or a "
        "tokenizer.json/.tiktoken file",
    )
    group.add_argument(
        "--embed-price",
        type=float,
        metavar="USD",
        help="US dollars per million tokens, for the cost shown before the run (known "
        "for OpenAI's models, with the date of the price)",
    )
    group.add_argument(
        "--embed-timeout",
        type=float,
        metavar="S",
        help="seconds one request may take before it is retried (default 60)",
    )


EMBED_FLAGS = ("embed_model", "embed_key_env", "embed_window", "embed_tokenizer", "embed_price")


def embed_model_from_args(args: argparse.Namespace) -> str | None:
    """The model name of the endpoint the ``--embed-*`` flags give (``URL#MODEL…``,
    never the key), checked without sending anything; None without ``--embed-url``."""
    from ..embedding.endpoint import endpoint_spec

    url = getattr(args, "embed_url", None)
    if url is None:
        given = [f for f in EMBED_FLAGS if getattr(args, f, None) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ValueError(f"{flag} belongs to an endpoint: add --embed-url URL")
        return None
    if not getattr(args, "embed_model", None):
        raise ValueError("--embed-url needs the endpoint's model: --embed-model NAME")
    spec = endpoint_spec(
        url,
        args.embed_model,
        key_env=getattr(args, "embed_key_env", None),
        window=getattr(args, "embed_window", None),
        tokenizer=getattr(args, "embed_tokenizer", None),
    )
    timeout = getattr(args, "embed_timeout", None)
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"--embed-timeout must be a positive number of seconds; got {timeout:g}")
    return spec.name


def endpoint_embedder(args: argparse.Namespace, name: str) -> Any:
    """The endpoint ``name`` loaded (its key read now), with ``--embed-timeout`` applied."""
    from ..embedding.endpoint import EndpointEmbedder
    from ..embedding.models import get_embedder

    embedder = get_embedder(name)
    timeout = getattr(args, "embed_timeout", None)
    if timeout is not None and isinstance(embedder, EndpointEmbedder):
        embedder.timeout = timeout
    return embedder


def show_embedding_cost(cost: Any, stderr: TextIO | None = None) -> None:
    """Print an endpoint's estimated cost (:class:`~chunking.embedding.endpoint.EmbeddingCost`)
    on stderr before the run."""
    print(f"{PROG}: embedding cost: {cost.describe()}", file=stderr or sys.stderr)
