"""One authoring turn: persist → context → skills → run → engine turn → persist → draft deltas."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from assistant.agents.author import SubmitTurn, author_spec
from assistant.choices import Mode, Role, RunStatus, ToolApproval
from assistant.conf import AssistantConfig, get_config
from assistant.engines import author_engine
from assistant.intents import intent_of
from assistant.models import Draft, Message, PendingToolCall, Run, Session
from assistant.plan_context import context_refs_for
from assistant.services.coordinate import coordinator_exchange
from assistant.services.drafts import draft_create, draft_update
from assistant.services.runs import last_agent_run_id, run_fail, turn_agent_runs
from assistant.services.sessions import message_create, session_history, session_update
from assistant.services.tool_calls import pending_call_out, tool_call_hold
from assistant.skills import select_skills, skills_record
from assistant.tool_args import args_for
from core.agents.correlation import correlation_scope
from core.agents.engines import Engine
from core.agents.loop import FrameCallback, HoldCall, run_agent
from core.capabilities import Capability, CapabilityContext, CapabilityResult, dispatch
from core.errors import DomainError, InvalidInput
from core.events import new_turn_id, private_scope

CREATE_PLAN = "orchestrator.create_plan"


@dataclass
class TurnOutcome:
    message: Message
    run: Run
    reply: str
    questions: list[str] = field(default_factory=list)
    drafts: list[Draft] = field(default_factory=list)
    delta_errors: list[str] = field(default_factory=list)
    plan_card: dict[str, Any] | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    coordinator: dict[str, Any] | None = None  # coordinate mode: the turn's compact record
    pending_calls: list[dict[str, Any]] = field(default_factory=list)  # held for the user's Confirm


def _apply_deltas(
    session: Session, user: AbstractBaseUser, deltas: list[dict[str, Any]], config: AssistantConfig
) -> tuple[list[Draft], list[str]]:
    """Only the draft's content moves: a delta can never set a status, approve or publish."""
    drafts, errors = [], []
    for delta in deltas:
        intent = intent_of(delta["op"], delta["type"])
        if intent in config.disabled_intents:
            errors.append(f"{intent} is disabled.")
            continue
        try:
            if delta["op"] == "update" and delta.get("draft_id"):
                draft = session.drafts.filter(pk=delta["draft_id"], owner=user).first()
                if draft is None:
                    errors.append(f"draft {delta['draft_id']} is not in this session.")
                    continue
                drafts.append(draft_update(draft=draft, actor=user, name=delta["name"], spec=delta["spec"]))
            else:
                drafts.append(
                    draft_create(
                        owner=user, type=delta["type"], name=delta["name"], spec=delta["spec"], session=session
                    )
                )
        except DomainError as exc:
            errors.append(f"{delta['name']}: {exc.message}")
    return drafts, errors


def _plan_card(user: AbstractBaseUser, goal: str, session: Session) -> tuple[str, dict[str, Any] | None, str]:
    ctx = CapabilityContext(user=user, extra={"session_id": session.pk})
    known = {"goal": goal, "context_refs": context_refs_for(goal, ctx)}
    result = dispatch(CREATE_PLAN, args_for(CREATE_PLAN, known), ctx=ctx)
    if result.is_error:
        return f"I could not create a plan: {result.message}", None, result.message
    plan = result.content if isinstance(result.content, dict) else {"plan": result.content}
    card = {"component": "plan_card", "props": plan}
    title = plan.get("title") or plan.get("goal") or goal
    steps = plan.get("steps") or []
    return f"Plan created: {title} ({len(steps)} step(s)). Review and approve it to run.", card, ""


def _guarded(run: Run, call):
    """A crash outside the loop (which never raises) still closes the run as failed."""
    try:
        return call()
    except Exception as exc:
        run_fail(run=run, error=f"{type(exc).__name__}: {exc}")
        raise


def _holder(session: Session, run: Run, held: list[PendingToolCall]) -> HoldCall | None:
    """Under tool_approval=ask a mutating call is stored for the user's Confirm instead of run."""
    if session.tool_approval != ToolApproval.ASK:
        return None

    def hold(cap: Capability, args: dict[str, Any], ctx: CapabilityContext) -> CapabilityResult:
        call, result = tool_call_hold(session=session, run=run, cap=cap, args=args, ctx=ctx)
        if call is not None:
            held.append(call)
        return result

    return hold


def session_turn(
    *,
    session: Session,
    user: AbstractBaseUser,
    content: str,
    mode: str | None = None,
    engine: Engine | None = None,
    on_frame: FrameCallback | None = None,
) -> TurnOutcome:
    """One turn; every agent run it causes records the session's correlation id."""
    # Its runs record the session's id; its agents' events on the bus are the user's alone.
    with correlation_scope(session.correlation_id), private_scope(session.owner_id):
        return _session_turn(session=session, user=user, content=content, mode=mode, engine=engine, on_frame=on_frame)


def _session_turn(
    *,
    session: Session,
    user: AbstractBaseUser,
    content: str,
    mode: str | None,
    engine: Engine | None,
    on_frame: FrameCallback | None,
) -> TurnOutcome:
    config = get_config()
    before = last_agent_run_id()
    if not content.strip():
        raise InvalidInput("content is required.", field="content")
    if (mode or session.mode) == Mode.COORDINATE:  # checked before any write; see services/coordinate.py
        done = coordinator_exchange(session=session, user=user, content=content)
        return TurnOutcome(message=done.message, run=done.run, reply=done.reply, coordinator=done.coordinator)
    if mode is not None and mode != session.mode:
        session_update(session=session, mode=mode)
    mode = session.mode
    message_create(session=session, role=Role.USER, content=content, metadata={"mode": mode})
    history = session_history(session)
    drafts = list(session.drafts.order_by("id"))
    attachments = list(session.attachments.order_by("id"))
    prefs = session.skill_prefs
    skills = select_skills(
        text=content,
        mode=mode,
        draft_types=sorted({d.type for d in drafts}),
        pinned=prefs["pinned"],
        disabled=prefs["disabled"],
    )
    engine = engine or author_engine(config)
    started = time.monotonic()
    run = Run.objects.create(
        session=session,
        engine=engine.name,
        model=config.model,
        mode=mode,
        trace_id=new_turn_id(),
        input_summary=content[:2000],
        selected_skills=skills_record(skills, session_pinned=prefs["pinned"]),
    )
    tool_calls: list[dict[str, Any]] = []
    questions: list[str] = []
    deltas: list[dict[str, Any]] = []
    plan_card = None
    error = ""
    held: list[PendingToolCall] = []
    if mode == Mode.PLAN:
        reply, plan_card, error = _plan_card(user, content, session)
    else:
        spec = author_spec(
            mode=mode,
            config=config,
            skills=skills,
            drafts=drafts,
            attachments=attachments,
            allow_mutations=True,
            hold_call=_holder(session, run, held) if mode == Mode.BUILD else None,
        )

        def frame(f: dict[str, Any]) -> None:
            if f["type"] == "tool_call":
                tool_calls.append({"name": f["name"], "args": f["args"]})
            if on_frame:
                on_frame(f)

        ctx = CapabilityContext(user=user, turn_id=run.trace_id, extra={"session_id": session.pk})
        subject = ("assistant.session", session.pk)
        result = _guarded(
            run, lambda: run_agent(spec, messages=history, ctx=ctx, engine=engine, on_frame=frame, subject=subject)
        )
        run.agent_run, run.model = result.run, result.run.model or run.model
        run.tokens = result.run.input_tokens + result.run.output_tokens
        output = SubmitTurn.model_validate(result.output) if result.output else SubmitTurn(reply=result.text)
        reply = output.reply or result.text
        questions = output.questions[: config.max_questions_per_turn]
        if mode == Mode.BUILD:
            deltas = [d.model_dump() for d in output.draft_deltas]
        if not result.ok:
            error = result.run.error or result.finish_reason
            reply = reply or f"The assistant stopped: {error}"
    drafts_changed, delta_errors = _apply_deltas(session, user, deltas, config) if deltas else ([], [])
    message = message_create(
        session=session,
        role=Role.ASSISTANT,
        content=reply,
        metadata={
            "mode": mode,
            "questions": questions,
            "drafts": [d.pk for d in drafts_changed],
            "delta_errors": delta_errors,
            "tool_calls": tool_calls,
            "plan_card": plan_card,
            "run_id": run.pk,
            "pending_calls": [c.pk for c in held],
            **turn_agent_runs(correlation_id=session.correlation_id, after_id=before),
        },
    )
    run.output_summary = reply[:2000]
    run.error = error
    run.status = RunStatus.FAILED if error else RunStatus.COMPLETED
    run.duration_ms = int((time.monotonic() - started) * 1000)
    run.finished = timezone.now()
    run.save()
    return TurnOutcome(
        message=message,
        run=run,
        reply=reply,
        questions=questions,
        drafts=drafts_changed,
        delta_errors=delta_errors,
        plan_card=plan_card,
        tool_calls=tool_calls,
        pending_calls=[pending_call_out(c) for c in held],
    )


def prompt_draft(*, user: AbstractBaseUser, content: str, mode: str = Mode.BUILD, engine: Engine | None = None) -> dict:
    """Stateless one-shot: the engine's proposal, nothing persisted except the core run record."""
    config = get_config()
    spec = author_spec(
        mode=mode,
        config=config,
        skills=select_skills(text=content, mode=mode, draft_types=[]),
        drafts=[],
        attachments=[],
    )
    with private_scope(user.pk):  # like a session turn: its run's events reach only this user's sockets
        result = run_agent(
            spec, messages=content, ctx=CapabilityContext(user=user), engine=engine or author_engine(config)
        )
    output = SubmitTurn.model_validate(result.output) if result.output else SubmitTurn(reply=result.text)
    return {
        "reply": output.reply,
        "questions": output.questions[: config.max_questions_per_turn],
        "draft_deltas": [d.model_dump() for d in output.draft_deltas] if mode == Mode.BUILD else [],
        "error": "" if result.ok else (result.run.error or result.finish_reason),
    }
