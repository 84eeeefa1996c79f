"""A deterministic stand-in model for tests about alignment and offsets, not quality."""

from __future__ import annotations

import math
from collections.abc import Callable

from chunking.llm.client import LLM, Answer, LLMError, Request, Speed, register_llm

#: The name strategy parameters use for :class:`EchoSentences` (``llm="echo"``).
ECHO = "echo"


class EchoSentences(LLM):
    """Answers with the lines of the text between ``<passage>`` tags (or of the whole
    prompt), one per line: every statement is verbatim in the source. Costs nothing."""

    name = "echo-sentences"
    speed = Speed(0.0, math.inf, math.inf)

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: Request) -> Answer:
        self.calls += 1
        _, tagged, rest = request.prompt.partition("<passage>\n")
        passage = rest.rpartition("\n</passage>")[0] if tagged else request.prompt
        return Answer("\n".join(passage.splitlines()), 0, 0, 0.0)


register_llm(ECHO, EchoSentences)


class Scripted(LLM):
    """Answers with ``answer(prompt)``; raises ``fail_at``'s error on that call (0-based).
    Reports ``seconds`` per answer, so that speed calibration can be checked."""

    speed = Speed(1.0, 1000.0, 10.0)

    def __init__(
        self,
        answer: Callable[[str], str],
        *,
        name: str = "scripted",
        fail_at: int | None = None,
        seconds: float = 2.0,
    ) -> None:
        self.answer = answer
        self.name = name
        self.fail_at = fail_at
        self.seconds = seconds
        self.prompts: list[str] = []

    def complete(self, request: Request) -> Answer:
        if self.fail_at is not None and len(self.prompts) == self.fail_at:
            self.prompts.append(request.prompt)
            raise LLMError("cannot reach the endpoint http://127.0.0.1:9/v1")
        self.prompts.append(request.prompt)
        return Answer(self.answer(request.prompt), 10, 5, self.seconds)


def passage_of(prompt: str) -> str:
    """The text between the last ``<passage>`` tags of a prompt (an example may come
    first)."""
    return prompt.rpartition("<passage>\n")[2].rpartition("\n</passage>")[0]
