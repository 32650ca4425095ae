"""``replay:PATH``: a model that answers with what a previous run recorded.

For re-scoring a sweep (a new metric, a fixed validator) without any endpoint: the
answers come from the run's ``records.jsonl``, call for call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..core.types import Completion, Message
from ..runlog.records import TurnRecord, latest_attempts
from ..runlog.store import read_records

if TYPE_CHECKING:
    from ..protocol.context import TurnContext

__all__ = ["ReplayModel"]


class ReplayModel:
    """Answers with the texts a previous run recorded, call for call.

    ``replay:PATH`` (a run directory or its ``records.jsonl``) replays the episodes
    of the one candidate model recorded there; ``replay:PATH#MODEL`` picks a model
    when there were several. An answer is found by (instance, episode seed,
    protocol, turn, role, attempt); a call with no recorded answer raises
    :class:`ConfigError`: the replay does not match this run's parameters.
    """


    def __init__(self, path: str, name: str) -> None:
        where, _, source = path.partition("#")
        folder = Path(where)
        if folder.is_file():
            folder = folder.parent
        records = [r for r in latest_attempts(read_records(folder)[0])[0] if isinstance(r, TurnRecord)]
        models = sorted({r.model for r in records})
        if not source:
            if len(models) != 1:
                raise ConfigError(f"replay: {folder} holds models {models}; use replay:PATH#MODEL")
            source = models[0]
        elif source not in models:
            raise ConfigError(f"replay: no model {source!r} in {folder} (found {models})")
        self.name = name
        self._answers: dict[tuple[str, int, str, int, str], list[str]] = {}
        for rec in records:
            if rec.model == source:
                for call in rec.calls:
                    key = (rec.instance_id, rec.seed, rec.protocol, rec.turn, call.role)
                    self._answers.setdefault(key, []).append(call.text)

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Completion:
        """Refused: an answer is found by the turn's context (the evaluator calls
        :meth:`complete_in_context`)."""
        raise ConfigError("replay models need the orchestrator's context")

    async def complete_in_context(self, messages: Sequence[Message], context: TurnContext) -> Completion:
        role = "feedback" if context.evidence is not None else "candidate"
        texts = self._answers.get((context.instance.id, context.seed, context.protocol, context.turn, role))
        index = context.attempt if role == "feedback" else 0
        if not texts or index >= len(texts):
            raise ConfigError(f"replay: no recorded {role} answer for {context.instance.id} turn {context.turn}")
        return Completion(text=texts[index], model=self.name)

    async def aclose(self) -> None:
        return None
