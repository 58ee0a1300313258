"""The coordinator transcript: one hash chain over every turn (all users, in id order).

Each turn stores `previous_hash` (the hash of the turn recorded just before it, "" for the first)
and `hash = sha256(json([previous_hash, body]))` over the canonical JSON of its body
(`chain_body`: sorted keys, no spaces). Editing a recorded field breaks that turn's hash; deleting
or reordering turns breaks the next turn's link. `transcript_breaks` finds every break,
`transcript_export` writes what a user needs to check their turns offline (docs/COORDINATOR.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from orchestrator.models import CoordinatorTurn

CHAIN_FIELDS = (
    "user",
    "conversation",
    "message",
    "status",
    "action_plan",
    "validation",
    "executed",
    "answer",
    "tool_calls",
)
ALGORITHM = "sha256(json.dumps([previous_hash, body], sort_keys=True, separators=(',', ':')))"


def chain_digest(previous_hash: str, body: dict[str, Any]) -> str:
    text = json.dumps([previous_hash, body], sort_keys=True, cls=DjangoJSONEncoder, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def chain_body(turn: CoordinatorTurn) -> dict[str, Any]:
    """The hashed fields of a turn, as plain JSON (what an export carries as `body`)."""
    body = {
        "user": turn.user_id,
        "conversation": turn.conversation,
        "message": turn.message,
        "status": turn.status,
        "action_plan": turn.action_plan,
        "validation": turn.validation,
        "executed": turn.executed,
        "answer": turn.answer,
        "tool_calls": turn.tool_calls,
    }
    return json.loads(json.dumps(body, cls=DjangoJSONEncoder))


def transcript_save(turn: CoordinatorTurn) -> CoordinatorTurn:
    """Append the turn to the chain (writers serialised on the last row)."""
    body = chain_body(turn)
    with transaction.atomic():
        last = CoordinatorTurn.objects.select_for_update().order_by("-id").only("hash").first()
        turn.previous_hash = last.hash if last else ""
        turn.hash = chain_digest(turn.previous_hash, body)
        turn.save()
    return turn


@dataclass(frozen=True)
class ChainBreak:
    turn_id: int
    user_id: int
    conversation: str
    reason: str  # "content" (the turn's fields do not give its hash) or "link" (a turn before it is gone or changed)

    def line(self) -> str:
        what = {
            "content": "its recorded fields do not match its hash (edited after it was recorded)",
            "link": "its previous_hash is not the hash of the turn before it (a turn was removed, reordered or rehashed)",
        }[self.reason]
        return f"BROKEN conversation {self.conversation!r} (user {self.user_id}): turn {self.turn_id}: {what}"


def transcript_breaks(batch: int = 500) -> Iterator[ChainBreak]:
    """Every broken turn of the chain, in id order (a streaming read, `batch` rows at a time)."""
    previous = ""
    turns = CoordinatorTurn.objects.order_by("id").only("id", "previous_hash", "hash", "user_id", *CHAIN_FIELDS[1:])
    for turn in turns.iterator(chunk_size=batch):
        if turn.previous_hash != previous:
            yield ChainBreak(turn.pk, turn.user_id, turn.conversation, "link")
        if turn.hash != chain_digest(turn.previous_hash, chain_body(turn)):
            yield ChainBreak(turn.pk, turn.user_id, turn.conversation, "content")
        previous = turn.hash


def transcript_verify() -> CoordinatorTurn | None:
    """The first turn whose link or hash is broken, or None."""
    first = next(transcript_breaks(), None)
    return CoordinatorTurn.objects.get(pk=first.turn_id) if first else None


def transcript_export(turns: Iterable[CoordinatorTurn], *, conversation: str) -> dict[str, Any]:
    """One conversation's turns with their chain fields, checkable offline: each turn's `hash`
    is `chain_digest(previous_hash, body)`. Consecutive turns of the conversation link directly
    (`follows_previous_exported`) only when no other turn was recorded between them; turns of other
    conversations and users are not exported (`manage.py verify_transcripts` checks the whole chain)."""
    rows = sorted(turns, key=lambda t: t.pk)
    out, before = [], None
    for turn in rows:
        linked = before is not None and turn.previous_hash == before.hash
        out.append(
            {
                "id": turn.pk,
                "created_at": turn.created_at.isoformat(),
                "finished_at": turn.finished_at.isoformat() if turn.finished_at else None,
                "prompt_kind": turn.prompt_kind,
                "agent_run_id": turn.agent_run_id,
                "error": turn.error,
                "references": turn.references,
                "body": chain_body(turn),
                "previous_hash": turn.previous_hash,
                "hash": turn.hash,
                "follows_previous_exported": linked,
            }
        )
        before = turn
    return {
        "format": "aria.coordinator.transcript/1",
        "conversation": conversation,
        "exported_at": timezone.now().isoformat(),
        "chain": {"algorithm": ALGORITHM, "fields": list(CHAIN_FIELDS)},
        "turns": out,
    }
