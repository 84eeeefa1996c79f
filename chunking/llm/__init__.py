"""Language-model techniques: contextual retrieval, enrichment, evaluation questions
(and the ``propositions`` strategy in :mod:`chunking.splitters.propositions`).

Everything goes through one interface, :class:`~chunking.llm.client.LLM`: the offline
SmolLM2-135M (weak, for trying things) or any OpenAI-compatible endpoint, cached on
disk (:mod:`chunking.llm.cache`), with the cost estimated before a run and the run's
progress, cancel and errors handled in one place (:mod:`chunking.llm.cost`). Models are
imported only when one is used.
"""

from .client import LLM, LLMError, Request, make_llm, register_llm, resolve_llm
from .cost import Estimate, Run, estimate, run_requests

__all__ = [
    "LLM",
    "Estimate",
    "LLMError",
    "Request",
    "Run",
    "estimate",
    "make_llm",
    "register_llm",
    "resolve_llm",
    "run_requests",
]
