"""Coordinator transcripts under /api/v1/aria/coordinator/: JSON export (with the hash chain, to
check offline) and which engine answered each turn. Owner-scoped: another user's is a 404."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Path, Query, Router

from core.access import get_owned_or_404, owned_by, require_scopes
from core.errors import InvalidInput, NotFound
from core.models import AgentRun
from orchestrator.choices import CONVERSATION_PATTERN
from orchestrator.coordinator.transcript import transcript_export
from orchestrator.models import CoordinatorTurn

router = Router(tags=["orchestrator"])
OFFLINE_ENGINE = "fake"  # the offline demo engine's name on its agent runs
MAX_IDS = 100


def _download(export: dict[str, Any], filename: str) -> JsonResponse:
    response = JsonResponse(export, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _engines(turns: list[CoordinatorTurn]) -> dict[int, str]:
    """turn id → the engine that answered it ("" when no model ran: a confirm or no-model turn)."""
    runs = dict(
        AgentRun.objects.filter(pk__in=[t.agent_run_id for t in turns if t.agent_run_id]).values_list("pk", "engine")
    )
    return {t.pk: runs.get(t.agent_run_id, "") for t in turns}


def _with_engines(export: dict[str, Any], turns: list[CoordinatorTurn]) -> dict[str, Any]:
    engines = _engines(turns)
    for row in export["turns"]:
        row["engine"] = engines[row["id"]]
        row["offline"] = engines[row["id"]] == OFFLINE_ENGINE
    return export


@router.get("/coordinator/conversations/{conversation}/export")
def coordinator_conversation_export(
    request: HttpRequest, conversation: str = Path(..., min_length=1, max_length=80, pattern=CONVERSATION_PATTERN)
) -> JsonResponse:
    """The caller's turns of one conversation, oldest first, each with its chain fields."""
    require_scopes(request.user)
    turns = CoordinatorTurn.objects.filter(user=request.user, conversation=conversation)
    rows = list(turns.order_by("id"))
    if not rows:  # someone else's conversation of that name is not the caller's: same 404
        raise NotFound("Conversation not found.")
    export = _with_engines(transcript_export(rows, conversation=conversation), rows)
    return _download(export, f"coordinator-{conversation}.json")


@router.get("/coordinator/turns/{turn_id}/export")
def coordinator_turn_export(request: HttpRequest, turn_id: int) -> JsonResponse:
    """One turn in the export format (admins may export anyone's)."""
    require_scopes(request.user)
    qs = CoordinatorTurn.objects.all()
    turn = get_owned_or_404(qs, request.user, owner_field="user", pk=turn_id)
    export = _with_engines(transcript_export([turn], conversation=turn.conversation), [turn])
    return _download(export, f"coordinator-turn-{turn.pk}.json")


# 1 to MAX_IDS turn ids of at most 12 digits, comma-separated (stated in the schema, so clients and
# fuzzers know it; the handler checks the same rule with a sentence naming the field).
IDS_PATTERN = r"^ *\d{1,12} *(, *\d{1,12} *){0,99}$"


@router.get("/coordinator/turn-engines")
def coordinator_turn_engines(
    request: HttpRequest, ids: str = Query(..., max_length=1300, pattern=IDS_PATTERN)
) -> dict[str, Any]:
    """Which engine answered each of the caller's turns `ids` (comma-separated, at most 100):
    `offline` is true for the offline demo engine. Turns that are not the caller's are left out."""
    require_scopes(request.user)
    parts = [p.strip() for p in ids.split(",") if p.strip()]
    if not parts or len(parts) > MAX_IDS or not all(p.isdigit() and len(p) <= 12 for p in parts):
        raise InvalidInput(f"ids: 1 to {MAX_IDS} turn ids, comma-separated.", field="ids")
    qs = owned_by(CoordinatorTurn.objects.all(), request.user, owner_field="user")
    turns = list(qs.filter(pk__in={int(p) for p in parts}).only("id", "agent_run_id"))
    engines = _engines(turns)
    return {"turns": [{"id": t.pk, "engine": engines[t.pk], "offline": engines[t.pk] == OFFLINE_ENGINE} for t in turns]}
