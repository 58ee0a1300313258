"""Coordinator mode: a session turn is one orchestrator coordinator turn, reached through the
`orchestrator.coordinate` capability (the assistant never imports the orchestrator).

Everything that can refuse the turn (input, scope, tier) is checked before anything is written;
the two messages and the run are then written together, so a session never holds a question
without its answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from assistant.choices import Mode, Role, RunStatus
from assistant.models import Message, Run, Session
from assistant.services.runs import last_agent_run_id, turn_agent_runs
from assistant.services.sessions import message_create, session_update
from core.access import has_scopes, user_scopes
from core.capabilities import Capability, CapabilityContext, Tier, dispatch, registry
from core.errors import Forbidden, InvalidInput
from core.events import new_turn_id, turn_scope
from core.models import AgentRun

COORDINATE = "orchestrator.coordinate"
INPUT_FIELDS = {"message": "content", "conversation": "session"}  # capability input → what the caller sent


@dataclass
class CoordinatorExchange:
    message: Message
    run: Run
    reply: str
    coordinator: dict[str, Any] | None


def conversation_for(session: Session) -> str:
    """One coordinator conversation per chat session: follow-ups see the earlier turns."""
    return f"session-{session.pk}"


def _checked_capability(user: AbstractBaseUser, args: dict[str, Any]) -> Capability:
    """The capability, if this user may run it from chat with these arguments (else a 4xx)."""
    cap = registry.get(COORDINATE)
    if cap is None:
        raise InvalidInput("Coordinator mode is not available: the orchestrator is not installed.", field="mode")
    if cap.tier > Tier.MUTATE:  # a gated capability needs an approval first; chat never runs one directly
        raise Forbidden(f"{COORDINATE} is {cap.tier.label}: it needs an approval and cannot run from chat.")
    if not has_scopes(user, cap.scopes):
        missing = ", ".join(sorted(set(cap.scopes) - user_scopes(user)))
        raise Forbidden(f"Coordinator mode requires scope {missing}.", code="missing_scope")
    try:
        cap.input.model_validate(args)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = INPUT_FIELDS.get(str(err["loc"][0]) if err["loc"] else "", "content")
        raise InvalidInput(f"{name}: {err['msg']}", field=name) from exc
    return cap


def _agent_run(compact: dict[str, Any] | None) -> AgentRun | None:
    run_id = (compact or {}).get("agent_run_id")
    return AgentRun.objects.filter(pk=run_id).first() if run_id else None


def coordinator_exchange(*, session: Session, user: AbstractBaseUser, content: str) -> CoordinatorExchange:
    if not content.strip():
        raise InvalidInput("content is required.", field="content")
    args = {"message": content, "conversation": conversation_for(session)}
    _checked_capability(user, args)
    started, trace_id, before = time.monotonic(), new_turn_id(), last_agent_run_id()
    with turn_scope(trace_id):  # the coordinator's agent events carry this run's trace id
        result = dispatch(COORDINATE, args, ctx=CapabilityContext(user=user, extra={"session_id": session.pk}))
    compact = None if result.is_error else result.content
    if compact is None:  # a crash inside the capability: said plainly, like a failed plan-mode turn
        reply, error = f"The coordinator could not answer: {result.message}", result.message
    else:
        reply = compact["answer"] or "(no answer)"
        error = compact["error"] if compact["status"] == "failed" else ""
    agent_run = _agent_run(compact)
    with transaction.atomic():
        if session.mode != Mode.COORDINATE:
            session_update(session=session, mode=Mode.COORDINATE)
        message_create(session=session, role=Role.USER, content=content, metadata={"mode": Mode.COORDINATE})
        run = Run.objects.create(
            session=session,
            engine=agent_run.engine if agent_run else "",
            model=agent_run.model if agent_run else "",
            mode=Mode.COORDINATE,
            trace_id=trace_id,
            input_summary=content[:2000],
            output_summary=reply[:2000],
            agent_run=agent_run,
            tokens=agent_run.input_tokens + agent_run.output_tokens if agent_run else 0,
            error=error,
            status=RunStatus.FAILED if error else RunStatus.COMPLETED,
            duration_ms=int((time.monotonic() - started) * 1000),
            finished=timezone.now(),
        )
        message = message_create(
            session=session,
            role=Role.ASSISTANT,
            content=reply,
            metadata={
                "mode": Mode.COORDINATE,
                "coordinator": compact,
                "error": error,
                "run_id": run.pk,
                **turn_agent_runs(correlation_id=session.correlation_id, after_id=before),
            },
        )
    return CoordinatorExchange(message=message, run=run, reply=reply, coordinator=compact)
