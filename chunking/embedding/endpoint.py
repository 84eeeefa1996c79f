"""Any OpenAI-compatible embeddings endpoint as a model: OpenAI itself, or a local server
(Ollama, vLLM, Text Embeddings Inference, LM Studio) speaking ``POST {url}/embeddings``.

An endpoint is named like any other model, by one string that every page and command
passes to :func:`chunking.embedding.models.get_embedder`::

    http://localhost:11434/v1#nomic-embed-text
    https://api.openai.com/v1#text-embedding-3-small
    http://localhost:8080/v1#my-model?window=512&tokenizer=tokenizer%3A%2Fm%2Ftokenizer.json

(:class:`EndpointSpec`: the URL, ``#``, the model, and optionally the window, the
tokenizer and the name of the variable holding the key). The name never holds the key:
it is read from ``OPENAI_API_KEY`` (or the variable the spec names) when the model is
loaded, sent only in the ``Authorization`` header and removed from every message.

Requests are batched (at most :data:`MAX_INPUTS` texts and :data:`MAX_REQUEST_TOKENS`
tokens each), a few run at a time (:data:`CONCURRENCY`), and are retried with
exponential backoff on 429, 5xx and time-outs, waiting as long as ``Retry-After``
asks. The vector dimension is read from the first answer and every later answer is
checked against it. Every vector is kept in the disk cache keyed by endpoint, model and
text as soon as its answer arrives, so a run that fails keeps what was embedded and a
second run sends nothing.

The ``model`` unit follows the endpoint's model: known hosted models
(:data:`KNOWN_MODELS`) bring their tokenizer and window; for others give them
(``window``, ``tokenizer``: ``cl100k``, ``model`` or ``tokenizer:PATH``), else they are
guessed (cl100k_base, :data:`GUESSED_WINDOW`) and the model's note says so. Texts
longer than the window are cut at the window before they are sent, as a local model
truncates them (a hosted API would refuse them), and flagged as truncated.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import numpy as np

from ..model import Progress
from ..units import DEFAULT_MODEL as BUNDLED
from ..units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, TOKENIZER_PREFIX, get_sizer
from .base import Embedder, EmbeddingError
from .cache import default_cache_dir, disk_get, disk_put, memory_get, memory_put, text_key

#: Environment variable with the endpoint's key, unless the spec names another.
KEY_ENV = "OPENAI_API_KEY"
#: Seconds one request may take before it is retried.
DEFAULT_TIMEOUT = 60.0
#: Attempts per request (the first and the retries) on 429, 5xx and time-outs.
ATTEMPTS = 5
#: Requests in flight at once.
CONCURRENCY = 4
#: Texts and tokens per request (OpenAI takes 2,048 texts and 300,000 tokens; Text
#: Embeddings Inference 32 texts and 16,384 tokens by default).
MAX_INPUTS = 32
MAX_REQUEST_TOKENS = 16_384
#: Longest wait between attempts, whatever ``Retry-After`` says.
MAX_WAIT = 60.0
#: First backoff, doubled after every failed attempt.
BACKOFF = 0.5
#: The window assumed for a model that is neither known nor given a window.
GUESSED_WINDOW = 512
#: The tokenizer spellings of ``--embed-tokenizer`` and the unit each counts in.
CL100K = "cl100k"
TOKENIZERS = (CL100K, "model", f"{TOKENIZER_PREFIX}PATH")
#: When the prices of :data:`KNOWN_MODELS` were published (OpenAI's announcement of the
#: text-embedding-3 models, 25 January 2024); check the provider's page before relying
#: on them, or give your own with ``--embed-price``.
PRICES_DATE = "2024-01-25"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"})


@dataclass(frozen=True)
class KnownModel:
    """What is known about a model served by endpoints: the unit its tokens are counted
    in, its window (tokens of a text it reads, special tokens included), the special
    tokens in that window, and its price in US dollars per million tokens (None: free
    or unknown) as of :data:`PRICES_DATE`."""

    unit: str
    window: int
    special_tokens: int = 0
    price: float | None = None
    what: str = ""


KNOWN_MODELS: dict[str, KnownModel] = {
    "text-embedding-3-small": KnownModel("tokens", 8191, 0, 0.02, "OpenAI"),
    "text-embedding-3-large": KnownModel("tokens", 8191, 0, 0.13, "OpenAI"),
    "text-embedding-ada-002": KnownModel("tokens", 8191, 0, 0.10, "OpenAI"),
    BUNDLED: KnownModel("model", DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, None, "self-hosted"),
    f"sentence-transformers/{BUNDLED}": KnownModel(
        "model", DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, None, "self-hosted"
    ),
}


def is_endpoint(model: str | None) -> bool:
    """Whether a model name is an endpoint (``http://...#MODEL``)."""
    return bool(model) and model.strip().startswith(("http://", "https://"))  # type: ignore[union-attr]


def tokenizer_unit(tokenizer: str) -> str:
    """The unit ``--embed-tokenizer`` names: ``cl100k`` is ``tokens``; ``model`` and
    ``tokenizer:PATH`` are themselves. ``ValueError`` for anything else."""
    tokenizer = tokenizer.strip()
    if tokenizer in (CL100K, "cl100k_base", "tokens"):
        return "tokens"
    if tokenizer == "model":
        return "model"
    if tokenizer.startswith(TOKENIZER_PREFIX) and tokenizer[len(TOKENIZER_PREFIX) :].strip():
        path = Path(tokenizer[len(TOKENIZER_PREFIX) :].strip()).expanduser()
        if not path.is_file():
            raise ValueError(f"--embed-tokenizer {tokenizer}: there is no file there")
        return f"{TOKENIZER_PREFIX}{path.resolve()}"
    raise ValueError(
        f"--embed-tokenizer {tokenizer!r}: give cl100k, model (the bundled "
        "all-MiniLM-L6-v2's word pieces) or tokenizer:PATH (a tokenizer.json or .tiktoken)"
    )


def check_url(url: str) -> str:
    """``url`` without a trailing slash; ``ValueError`` unless it is an http(s) URL with
    a host and without credentials, a query or a fragment."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"--embed-url must be an http:// or https:// URL with a host, such as "
            f"http://localhost:11434/v1; got {_safe_url(url)!r}"
        )
    if parts.username or parts.password:
        raise ValueError(
            "--embed-url must not hold a user name or key; put the key in OPENAI_API_KEY "
            "(or the variable named by --embed-key-env)"
        )
    if parts.query or parts.fragment:
        raise ValueError(
            "--embed-url must not hold a query or a fragment (?… or #…); give the base URL, "
            "such as http://localhost:11434/v1"
        )
    return url


def _safe_url(url: str) -> str:
    """A URL as it may be shown: credentials and query dropped."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else "…"


@dataclass(frozen=True)
class EndpointSpec:
    """An endpoint model: where it is, which model, and how its tokens are counted.

    ``window`` is the tokens of a text the model reads (None: known, else guessed);
    ``tokenizer`` the unit they are counted in (``tokens`` for cl100k_base, ``model``,
    or ``tokenizer:PATH``; None: known, else guessed); ``key_env`` the variable holding
    the key.
    """

    url: str
    model: str
    key_env: str = KEY_ENV
    window: int | None = None
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", check_url(self.url))
        model = self.model.strip()
        if not model:
            raise ValueError("name the endpoint's model: --embed-model NAME")
        if any(c in model for c in "#?&"):
            raise ValueError(f"--embed-model {model!r}: a model name cannot hold # ? or &")
        object.__setattr__(self, "model", model)
        if self.window is not None and not 1 <= self.window <= 10_000_000:
            raise ValueError(
                f"--embed-window must be a positive number of tokens; got {self.window}"
            )
        if not self.key_env.strip() or not self.key_env.replace("_", "a").isalnum():
            raise ValueError(
                f"--embed-key-env must name an environment variable; got {self.key_env!r}"
            )

    @classmethod
    def parse(cls, name: str) -> EndpointSpec:
        """The spec of a model name ``URL#MODEL[?window=N&tokenizer=T&key_env=VAR]``."""
        url, sep, rest = name.strip().partition("#")
        if not sep:
            raise ValueError(
                "an endpoint model is URL#MODEL (e.g. http://localhost:11434/v1#nomic-embed-text);"
                f" got {_safe_url(url)!r} without a model"
            )
        model, _, query = rest.partition("?")
        options = dict(parse_qsl(query, keep_blank_values=True))
        unknown = set(options) - {"window", "tokenizer", "key_env"}
        if unknown:
            raise ValueError(f"endpoint option {sorted(unknown)[0]!r} is unknown")
        window = options.get("window")
        if window is not None and not window.isdigit():
            raise ValueError(f"endpoint window {window!r} is not a whole number")
        return cls(
            url,
            model,
            options.get("key_env") or KEY_ENV,
            int(window) if window is not None else None,
            tokenizer_unit(options["tokenizer"]) if options.get("tokenizer") else None,
        )

    @property
    def name(self) -> str:
        """The model's name everywhere (caches, sinks, configurations): never the key."""
        options = {
            k: v
            for k, v in (
                ("window", self.window),
                ("tokenizer", self.tokenizer),
                ("key_env", None if self.key_env == KEY_ENV else self.key_env),
            )
            if v is not None
        }
        query = f"?{urlencode(options, quote_via=quote)}" if options else ""
        return f"{self.url}#{self.model}{query}"

    @property
    def cache_name(self) -> str:
        """What its vectors are cached under: endpoint and model (the window and the
        tokenizer only decide what is sent, and a cut text is another text)."""
        return f"{self.url}#{self.model}"

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def is_local(self) -> bool:
        """Whether the endpoint is on this machine (no confirmation needed to send to it)."""
        return self.host.lower() in LOCAL_HOSTS

    @property
    def known(self) -> KnownModel | None:
        return KNOWN_MODELS.get(self.model)

    @property
    def unit(self) -> str:
        """The unit its tokens are counted in."""
        if self.tokenizer is not None:
            return self.tokenizer
        return self.known.unit if self.known is not None else "tokens"

    @property
    def max_seq_length(self) -> int:
        if self.window is not None:
            return self.window + self.special_tokens
        return self.known.window if self.known is not None else GUESSED_WINDOW

    @property
    def special_tokens(self) -> int:
        known = self.known
        if known is not None and self.unit == known.unit:
            return known.special_tokens
        return 0

    @property
    def guessed(self) -> list[str]:
        """What is guessed about the model (its tokenizer, its window), for the note."""
        if self.known is not None:
            return []
        return [
            what
            for what, given in (("tokenizer", self.tokenizer), ("window", self.window))
            if given is None
        ]

    @property
    def tokenizer_label(self) -> str:
        """Whose tokens the ``model`` unit counts, as the UI says it."""
        unit = self.unit
        if unit == "tokens":
            return "cl100k_base tokens"
        if unit == "model":
            return f"{BUNDLED} word pieces"
        return f"tokens of {Path(unit[len(TOKENIZER_PREFIX) :]).name}"

    @property
    def note(self) -> str:
        window = self.max_seq_length - self.special_tokens
        note = f"endpoint at {self.host}; {window:,} {self.tokenizer_label}"
        if self.guessed:
            note += (
                f"; {' and '.join(self.guessed)} guessed: set --embed-window and --embed-tokenizer"
            )
        return note


def endpoint_spec(
    url: str,
    model: str,
    *,
    key_env: str | None = None,
    window: int | None = None,
    tokenizer: str | None = None,
) -> EndpointSpec:
    """The spec of the command line's ``--embed-*`` flags (checked; nothing is sent)."""
    unit = tokenizer_unit(tokenizer) if tokenizer else None
    return EndpointSpec(url, model, key_env or KEY_ENV, window, unit)


# --------------------------------------------------------------------- the embedder


class EndpointEmbedder(Embedder):
    """An embeddings endpoint behind the :class:`Embedder` interface.

    ``requests`` counts the HTTP requests sent (retries included) and ``waits`` the
    seconds waited before each retry, so that callers and tests can see both.
    """

    def __init__(
        self,
        spec: EndpointSpec,
        *,
        key: str | None = None,
        cache_dir: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = ATTEMPTS,
        concurrency: int = CONCURRENCY,
        max_inputs: int = MAX_INPUTS,
        max_request_tokens: int = MAX_REQUEST_TOKENS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.name = spec.name
        self.note = spec.note
        self.max_seq_length = spec.max_seq_length
        self.special_tokens = spec.special_tokens
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.concurrency = max(1, concurrency)
        self.max_inputs = max(1, max_inputs)
        self.max_request_tokens = max(1, max_request_tokens)
        self.sleep = sleep
        self.requests = 0
        self.waits: list[float] = []
        self._key = key if key is not None else _read_key(spec.key_env)
        self._dimension: int | None = None
        self._client: Any = None
        self._client_lock = threading.Lock()
        try:
            self._sizer = get_sizer(spec.unit)
        except ValueError as exc:
            raise EmbeddingError(f"the tokenizer of {spec.model}: {exc}") from None

    # --- what the model reads ---------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        return self._sizer.size(text)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        sizes = getattr(self._sizer, "sizes", None)
        return sizes(texts) if sizes is not None else [self._sizer.size(t) for t in texts]

    @property
    def dimension(self) -> int:
        """The vectors' dimension: read from the first answer (kept beside the disk
        cache, so a second run knows it without a request); asked with one short text
        when nothing was embedded yet."""
        if self._dimension is None:
            self._dimension = self._stored_dimension()
        if self._dimension is None:
            folder = self._folder(None)
            self._embed_missing(["dimension"], [text_key("dimension")], folder, timed=False)
        assert self._dimension is not None
        return self._dimension

    @dimension.setter
    def dimension(self, value: int) -> None:
        self._dimension = value

    # --- embedding ------------------------------------------------------------------

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = MAX_INPUTS,
        progress: Progress | None = None,
        disk_cache: bool | None = True,
        cache_dir: Path | None = None,
    ) -> np.ndarray:
        """Embed ``texts`` through the endpoint; every vector is cached on disk (an
        endpoint is slow or costs money, so the disk cache is always on)."""
        texts = list(texts)
        folder = self._folder(cache_dir)
        keys = [text_key(t) for t in texts]
        known = self._known_dimension()
        if known is None and texts:
            missing = {k: [i for i, kk in enumerate(keys) if kk == k] for k in dict.fromkeys(keys)}
            vectors: dict[str, np.ndarray] = {}
        else:
            out = np.empty((len(texts), known or 0), dtype=np.float32)
            missing = self._fill_from_cache(keys, out, True, folder)
            vectors = {}
        total = len(texts)
        done = total - sum(len(rows) for rows in missing.values())
        if progress is not None:
            progress(done, total, "texts embedded")
        if missing:
            todo = list(missing)
            sent = [texts[missing[k][0]] for k in todo]

            def advance(count: int) -> None:
                nonlocal done
                done += count
                if progress is not None:
                    progress(done, total, "texts embedded")

            vectors = self._embed_missing(
                sent, todo, folder, rows=[len(missing[k]) for k in todo], advance=advance
            )
        if known is None:
            out = np.empty((len(texts), self.dimension if texts else 0), dtype=np.float32)
            if texts:
                self._fill_from_cache(keys, out, True, folder)
        for key, rows in missing.items():
            if key in vectors:
                out[rows] = vectors[key]
        return out

    def _folder(self, cache_dir: Path | None) -> Path:
        return cache_dir or self.cache_dir or default_cache_dir()

    def uncached(self, texts: Sequence[str]) -> list[str]:
        """The distinct ``texts`` not cached yet (in memory or on disk): what embedding
        them would send."""
        distinct = list(dict.fromkeys(texts))
        keys = [text_key(t) for t in distinct]
        known = self._known_dimension()
        if known is None:
            return distinct
        out = np.empty((len(distinct), known), dtype=np.float32)
        missing = self._fill_from_cache(keys, out, True, self._folder(None))
        return [distinct[rows[0]] for rows in missing.values()]

    def sent_tokens(self, texts: Sequence[str]) -> int:
        """The tokens sending ``texts`` costs: each cut at the window."""
        return sum(min(n, self.token_limit) for n in self.count_tokens_batch(list(texts)))

    def estimate_seconds(self, texts: Sequence[str] | int) -> float | None:
        """Seconds embedding ``texts`` (those not cached yet; or that many texts as long
        as the window) will take at this endpoint, from its throughput measured here
        (:func:`measured_throughput`): 0 when nothing is to be sent; None before any
        run was measured (the first request measures it)."""
        if isinstance(texts, int):
            tokens = texts * self.token_limit
        else:
            todo = self.uncached(texts)
            tokens = self.sent_tokens(todo) if todo else 0
        if not tokens:
            return 0.0  # nothing to send
        measured = measured_throughput(self.spec.cache_name, self._folder(None))
        return None if measured is None else measured.seconds_for(tokens)

    def _known_dimension(self) -> int | None:
        if self._dimension is None:
            self._dimension = self._stored_dimension()
        return self._dimension

    def _fill_from_cache(
        self, keys: list[str], out: np.ndarray, disk_cache: bool, cache_dir: Path | None
    ) -> dict[str, list[int]]:
        """Copy the cached vectors (memory, then disk) into ``out``; return the keys not
        cached and their rows. Cached under the endpoint and model (:attr:`cache_name`)."""
        name = self.spec.cache_name
        missing: dict[str, list[int]] = {}
        for row, (key, vector) in enumerate(zip(keys, memory_get(name, keys), strict=True)):
            if vector is not None:
                out[row] = vector
            else:
                missing.setdefault(key, []).append(row)
        if disk_cache and missing:
            folder = self._folder(cache_dir)
            found = []
            for key in list(missing):
                vector = disk_get(folder, name, key, out.shape[1])
                if vector is not None:
                    out[missing.pop(key)] = vector
                    found.append((key, vector))
            memory_put(name, found)
        return missing

    def _embed_missing(
        self,
        texts: list[str],
        keys: list[str],
        folder: Path,
        *,
        rows: list[int] | None = None,
        advance: Callable[[int], None] | None = None,
        timed: bool = True,
    ) -> dict[str, np.ndarray]:
        """Send ``texts`` (their cache ``keys``) in batches, a few at a time; cache every
        answer as it comes. On the first failure no further request starts, those in
        flight finish (and are cached), and the failure is raised. A run that succeeds
        is timed (``timed``: not the one-text request that asks for the dimension) and
        recorded for the next estimates (:func:`record_throughput`)."""
        ends = self.window_ends(texts)
        cut = [t[:e] for t, e in zip(texts, ends, strict=True)]
        sizes = [min(n, self.token_limit) for n in self.count_tokens_batch(cut)]
        batches = plan_requests(sizes, self.max_inputs, self.max_request_tokens)
        started = time.perf_counter()
        found: dict[str, np.ndarray] = {}
        failure: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            pending: dict[Future[np.ndarray], list[int]] = {}
            queue = list(batches)
            if self._known_dimension() is None and queue:
                first = queue.pop(0)  # the first answer sets the dimension for the rest
                pending[pool.submit(self._request, [cut[i] for i in first])] = first
                failure = self._collect(pending, keys, folder, found, rows, advance)
            while queue or pending:
                while queue and len(pending) < self.concurrency and failure is None:
                    batch = queue.pop(0)
                    pending[pool.submit(self._request, [cut[i] for i in batch])] = batch
                if failure is not None:
                    queue.clear()
                    if not pending:
                        break
                failure = self._collect(pending, keys, folder, found, rows, advance) or failure
        if failure is not None:
            raise failure
        if timed and texts:
            seconds = time.perf_counter() - started
            record_throughput(self.spec.cache_name, seconds, sum(sizes), len(texts), folder)
        return found

    def _collect(
        self,
        pending: dict[Future[np.ndarray], list[int]],
        keys: list[str],
        folder: Path,
        found: dict[str, np.ndarray],
        rows: list[int] | None,
        advance: Callable[[int], None] | None,
    ) -> BaseException | None:
        """Wait for some of ``pending``; cache the answers; return the first failure."""
        finished, _ = wait(list(pending), return_when=FIRST_EXCEPTION)
        failure = None
        for future in finished:
            batch = pending.pop(future)
            error = future.exception()
            if error is not None:
                failure = failure or error
                continue
            vectors = future.result()
            try:
                self._check_dimension(vectors.shape[1], folder)
            except EmbeddingError as exc:
                failure = failure or exc
                continue
            batch_keys = [keys[i] for i in batch]
            memory_put(self.spec.cache_name, zip(batch_keys, vectors, strict=True))
            for key, vector in zip(batch_keys, vectors, strict=True):
                disk_put(folder, self.spec.cache_name, key, vector)
                found[key] = vector
            if advance is not None:
                advance(sum(rows[i] for i in batch) if rows is not None else len(batch))
        return failure

    def _check_dimension(self, dimension: int, folder: Path) -> None:
        with self._lock:
            known = self._known_dimension()
            if known is None:
                self._dimension = dimension
                self._store_dimension(folder, dimension)
            elif dimension != known:
                raise EmbeddingError(
                    f"the endpoint {self._where} returned {dimension}-dimensional vectors "
                    f"after {known}-dimensional ones; it changed models? Nothing more was "
                    "embedded (the vectors already received are kept in the cache)"
                )

    # --- one request ------------------------------------------------------------------

    @property
    def _where(self) -> str:
        return f"{_safe_url(self.spec.url)} ({self.spec.model})"

    def _http(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import httpx

                headers = {"Content-Type": "application/json"}
                if self._key:
                    headers["Authorization"] = f"Bearer {self._key}"
                self._client = httpx.Client(timeout=self.timeout, headers=headers)
            return self._client

    def _request(self, texts: list[str]) -> np.ndarray:
        """The vectors of one batch, retried on 429, 5xx and time-outs."""
        import httpx

        body = {"model": self.spec.model, "input": texts, "encoding_format": "float"}
        url = f"{self.spec.url}/embeddings"
        last = ""
        for attempt in range(self.attempts):
            with self._lock:
                self.requests += 1
                self.calls += 1
                self.encoded += len(texts)
            try:
                response = self._http().post(url, json=body)
            except httpx.TimeoutException:
                last = f"did not answer within {self.timeout:g} s"
                retry_after = None
            except httpx.ConnectError:
                raise EmbeddingError(
                    f"cannot reach the embeddings endpoint {self._where}; is the server "
                    "running and is the URL right (it usually ends in /v1)?"
                ) from None
            except httpx.HTTPError as exc:
                last = f"broke off the answer ({type(exc).__name__})"
                retry_after = None
            else:
                status = response.status_code
                if status == 200:
                    return self._vectors(response, len(texts))
                if status != 429 and status < 500:
                    raise self._refused(response)
                last = f"answered HTTP {status}{self._message(response, ': ')}"
                retry_after = _retry_after(response.headers.get("Retry-After"))
            if attempt + 1 < self.attempts:
                pause = retry_after if retry_after is not None else _backoff(attempt)
                pause = min(MAX_WAIT, pause)
                with self._lock:
                    self.waits.append(pause)
                self.sleep(pause)
        raise EmbeddingError(
            f"the embeddings endpoint {self._where} {last}, {self.attempts} attempts; "
            "try again later (what was embedded is kept in the cache)"
        )

    def _message(self, response: Any, prefix: str = "") -> str:
        """The error message of an answer, short, with the key removed."""
        try:
            payload = response.json()
        except ValueError:
            payload = None
        text = ""
        if isinstance(payload, dict):
            error = payload.get("error", payload)
            text = str(error.get("message", "") if isinstance(error, dict) else error)
        text = text or (response.text or "")[:200]
        text = self.redact(" ".join(text.split()))[:200]
        return f"{prefix}{text}" if text else ""

    def _refused(self, response: Any) -> EmbeddingError:
        status = response.status_code
        message = self._message(response, ": ")
        if status in (401, 403):
            where = (
                f"set {self.spec.key_env}"
                if not self._key
                else f"check the key in {self.spec.key_env}"
            )
            return EmbeddingError(
                f"the embeddings endpoint {self._where} refused the key (HTTP {status}){message}; "
                f"{where} (or name another variable with --embed-key-env)"
            )
        if status in (400, 404) and "model" in message.lower():
            return EmbeddingError(
                f"the embeddings endpoint {_safe_url(self.spec.url)} has no model "
                f"{self.spec.model!r} (HTTP {status}){message}; check --embed-model"
            )
        if status == 404:
            return EmbeddingError(
                f"there are no embeddings at {_safe_url(self.spec.url)}/embeddings (HTTP 404); "
                "check --embed-url (it usually ends in /v1)"
            )
        return EmbeddingError(
            f"the embeddings endpoint {self._where} refused the request (HTTP {status}){message}"
        )

    def _vectors(self, response: Any, count: int) -> np.ndarray:
        """The vectors of an answer, in the order of the texts; malformed or short
        answers are errors."""
        bad = f"malformed answer from the embeddings endpoint {self._where}"
        try:
            payload = response.json()
        except ValueError:
            raise EmbeddingError(f"{bad}: not JSON") from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(d, dict) and isinstance(d.get("embedding"), list) for d in data
        ):
            raise EmbeddingError(f"{bad}: no list of data[].embedding")
        if len(data) != count:
            raise EmbeddingError(
                f"short answer from the embeddings endpoint {self._where}: {len(data)} vectors "
                f"for {count} texts"
            )
        indices = [d.get("index", i) for i, d in enumerate(data)]
        if sorted(indices) != list(range(count)):
            raise EmbeddingError(f"{bad}: the data[].index values are not 0..{count - 1}")
        ordered = [d["embedding"] for _, d in sorted(zip(indices, data, strict=True))]
        widths = {len(v) for v in ordered}
        if len(widths) != 1 or 0 in widths:
            raise EmbeddingError(f"{bad}: vectors of different or zero lengths {sorted(widths)}")
        try:
            vectors = np.asarray(ordered, dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbeddingError(f"{bad}: the vectors are not lists of numbers") from None
        if not np.isfinite(vectors).all():
            raise EmbeddingError(f"{bad}: a vector holds NaN or infinity")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = (vectors / np.where(norms > 0, norms, 1)).astype(np.float32)
        vectors.setflags(write=False)
        return vectors

    def redact(self, text: str) -> str:
        """``text`` with the key (and any ``Bearer`` token) replaced by ``***``."""
        key = self._key
        if key and len(key) >= 4:
            text = text.replace(key, "***")
        return text

    # --- the dimension beside the disk cache --------------------------------------------

    def _dimension_file(self, folder: Path) -> Path:
        return folder / "endpoints" / f"{text_key(self.spec.cache_name)}.json"

    def _stored_dimension(self) -> int | None:
        path = self._dimension_file(self._folder(None))
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        dimension = stored.get("dimension") if isinstance(stored, dict) else None
        return dimension if isinstance(dimension, int) and dimension > 0 else None

    def _store_dimension(self, folder: Path, dimension: int) -> None:
        path = self._dimension_file(folder)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"endpoint": self.spec.cache_name, "dimension": dimension}, handle)
            os.replace(tmp, path)

    def __repr__(self) -> str:  # never the key
        return f"EndpointEmbedder(name={self.name!r})"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _read_key(variable: str) -> str | None:
    """The key in ``variable``; for another variable than ``OPENAI_API_KEY``, an error
    when it is not set (the user asked for it)."""
    key = os.environ.get(variable, "").strip()
    if not key and variable != KEY_ENV:
        raise EmbeddingError(
            f"--embed-key-env {variable}: the environment variable {variable} is not set"
        )
    return key or None


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    with contextlib.suppress(ValueError):
        seconds = float(value)
        return max(0.0, seconds) if math.isfinite(seconds) else None
    with contextlib.suppress(TypeError, ValueError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    return None


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter: about 0.5, 1, 2, 4 … s."""
    return BACKOFF * 2**attempt * (0.5 + random.random() / 2)


def plan_requests(sizes: Sequence[int], max_inputs: int, max_tokens: int) -> list[list[int]]:
    """Texts (by index, in order) grouped into requests of at most ``max_inputs`` texts
    and ``max_tokens`` tokens (a longer text goes alone)."""
    batches: list[list[int]] = []
    tokens = 0
    for i, size in enumerate(sizes):
        if batches and len(batches[-1]) < max_inputs and tokens + size <= max_tokens:
            batches[-1].append(i)
            tokens += size
        else:
            batches.append([i])
            tokens = size
    return batches


def load_endpoint(name: str, **settings: Any) -> EndpointEmbedder:
    """The endpoint a model name (``URL#MODEL…``) names; nothing is sent yet."""
    try:
        spec = EndpointSpec.parse(name)
    except ValueError as exc:
        raise EmbeddingError(str(exc)) from None
    return EndpointEmbedder(spec, **settings)


# ----------------------------------------------------------------- the cost, estimated


@dataclass(frozen=True)
class EmbeddingCost:
    """What embedding texts through an endpoint will cost: the tokens to send (texts
    not cached yet, each cut at the window) times a price per million tokens."""

    model: str
    host: str
    texts: int
    cached: int
    tokens: int
    #: US dollars per million tokens; None: unknown (a self-hosted model costs nothing).
    price: float | None
    #: Where the price comes from: "given", or the date of the known price.
    priced: str
    #: Whether the tokens are those of the very texts (else an estimate from documents).
    exact: bool = True

    @property
    def dollars(self) -> float | None:
        return None if self.price is None else self.tokens * self.price / 1e6

    def describe(self, give: str = "with --embed-price USD_PER_MILLION") -> str:
        """``1,234 texts to embed with text-embedding-3-small at api.openai.com (56 more
        cached): 98,765 tokens × $0.02 per million (OpenAI's price of 2024-01-25) ≈
        $0.0020``; an estimate from documents says ``about``. Without a price, how to
        ``give`` one (the command line's flag; the app names its price box)."""
        if self.exact:
            head = f"{self.texts:,} texts to embed with {self.model} at {self.host}"
            if self.cached:
                head += f" ({self.cached:,} more cached)"
            head += f": {self.tokens:,} tokens"
        else:
            head = f"embedding with {self.model} at {self.host}: about {self.tokens:,} tokens"
        if self.price is None:
            return f"{head} (no price known: give one {give})"
        return f"{head} × ${self.price:g} per million ({self.priced}) ≈ ${self.dollars:.4f}"


def price_of(spec: EndpointSpec, price: float | None = None) -> tuple[float | None, str]:
    """The price per million tokens and where it comes from: ``price`` given, else the
    known model's price (with its date), else none."""
    if price is not None:
        if not math.isfinite(price) or price < 0:
            raise ValueError(f"--embed-price must be a price of 0 or more; got {price:g}")
        return price, "the price given"
    known = spec.known
    if known is not None and known.price is not None:
        return known.price, f"{known.what}'s price of {PRICES_DATE}"
    if spec.is_local:
        return 0.0, "a server on this machine"
    return None, ""


def estimate_cost(
    embedder: EndpointEmbedder, texts: Sequence[str], price: float | None = None
) -> EmbeddingCost:
    """The cost of embedding ``texts``: the distinct ones not cached yet, in tokens."""
    distinct = list(dict.fromkeys(texts))
    todo = embedder.uncached(distinct)
    tokens = embedder.sent_tokens(todo)
    rate, priced = price_of(embedder.spec, price)
    return EmbeddingCost(
        embedder.spec.model,
        embedder.spec.host,
        len(todo),
        len(distinct) - len(todo),
        tokens,
        rate,
        priced,
    )


def estimate_documents_cost(
    embedder: EndpointEmbedder,
    documents: Sequence[str],
    *,
    copies: int = 1,
    questions: Sequence[str] = (),
    price: float | None = None,
) -> EmbeddingCost:
    """The cost of embedding the chunks of ``documents`` cut ``copies`` ways (each cut
    covers a document about once; overlap and what is cached are not counted) and
    ``questions``: an estimate made before anything is chunked."""
    pieces = sum(embedder.count_tokens_batch(list(documents))) * max(1, copies)
    asked = estimate_cost(embedder, questions, price)
    rate, priced = price_of(embedder.spec, price)
    return EmbeddingCost(
        embedder.spec.model,
        embedder.spec.host,
        len(documents) * max(1, copies) + asked.texts,
        asked.cached,
        pieces + asked.tokens,
        rate,
        priced,
        exact=False,
    )


#: Characters per token assumed when only a corpus's size is known (English in cl100k).
CHARS_PER_TOKEN = 4


def estimate_bytes_cost(
    embedder: EndpointEmbedder, size: int, price: float | None = None
) -> EmbeddingCost:
    """The cost of embedding the chunks of a corpus of ``size`` bytes, before it is
    read: about :data:`CHARS_PER_TOKEN` bytes a token (overlap not counted)."""
    rate, priced = price_of(embedder.spec, price)
    tokens = size // CHARS_PER_TOKEN
    spec = embedder.spec
    return EmbeddingCost(spec.model, spec.host, 0, 0, tokens, rate, priced, exact=False)


# ------------------------------------------------------------ the wait, as measured here

#: The wait of an endpoint never timed here, as the UI says it.
UNKNOWN_WAIT = "time unknown until the first request measures it"
#: Tokens of the latest runs the throughput is averaged over: older runs fade out, so
#: the estimate follows the endpoint (its load, its rate limits, a changed server).
THROUGHPUT_TOKENS = 200_000


@dataclass(frozen=True)
class Throughput:
    """What the latest embedding runs of an endpoint's model took here: wall seconds
    (requests in flight together, retries and their waits included) for the tokens
    and texts sent, the older runs faded to :data:`THROUGHPUT_TOKENS` tokens."""

    seconds: float
    tokens: float
    texts: float
    runs: int

    @property
    def seconds_per_token(self) -> float:
        return self.seconds / self.tokens if self.tokens > 0 else 0.0

    def seconds_for(self, tokens: int) -> float:
        """Seconds sending ``tokens`` will take at the measured rate."""
        return tokens * self.seconds_per_token


def throughput_file(cache_name: str, folder: Path | None = None) -> Path:
    """Where an endpoint's measured throughput is kept: beside its dimension, next to
    its vectors in the disk cache (never in the checkout)."""
    base = folder or default_cache_dir()
    return base / "endpoints" / f"{text_key(cache_name)}.throughput.json"


def measured_throughput(cache_name: str, folder: Path | None = None) -> Throughput | None:
    """The throughput measured for ``cache_name`` (``URL#MODEL``), None when no run was."""
    try:
        stored = json.loads(throughput_file(cache_name, folder).read_text(encoding="utf-8"))
        measured = Throughput(
            float(stored["seconds"]),
            float(stored["tokens"]),
            float(stored["texts"]),
            int(stored["runs"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = all(math.isfinite(v) and v >= 0 for v in (measured.seconds, measured.tokens))
    return measured if ok and measured.tokens > 0 and measured.runs > 0 else None


_THROUGHPUT_LOCK = threading.Lock()


def record_throughput(
    cache_name: str, seconds: float, tokens: int, texts: int, folder: Path | None = None
) -> None:
    """Add a run (``seconds`` of wall time for ``tokens`` and ``texts`` sent) to the
    endpoint's record; the earlier runs are scaled down so that the record holds at
    most :data:`THROUGHPUT_TOKENS` tokens. A record that cannot be written only leaves
    the next wait unknown."""
    if tokens <= 0 or not math.isfinite(seconds) or seconds < 0:
        return
    with _THROUGHPUT_LOCK:
        old = measured_throughput(cache_name, folder)
        if old is None:
            old = Throughput(0.0, 0.0, 0.0, 0)
        room = max(0, THROUGHPUT_TOKENS - tokens)
        keep = min(1.0, room / old.tokens) if old.tokens > 0 else 0.0
        new = {
            "endpoint": cache_name,
            "seconds": old.seconds * keep + seconds,
            "tokens": old.tokens * keep + tokens,
            "texts": old.texts * keep + texts,
            "runs": old.runs + 1,
        }
        path = throughput_file(cache_name, folder)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(new, handle)
            os.replace(tmp, path)
