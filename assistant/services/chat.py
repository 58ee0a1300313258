"""Operator Q&A: one chat turn through the Q&A agent, persisted in Session/Message/Run. The
session's attachments reach the model as delimited data (never instructions); the model is told
the operator's language."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from assistant import selectors
from assistant.agents.qa import QA_AGENT, attachments_block, language_line, qa_system_prompt, qa_tools
from assistant.choices import Mode, Role, RunStatus
from assistant.conf import get_config
from assistant.engines import author_engine
from assistant.models import Run, Session
from assistant.services.runs import last_agent_run_id, run_fail, turn_agent_runs
from assistant.services.sessions import message_create, session_create, session_history
from core.agents.correlation import correlation_scope
from core.agents.engines import Engine
from core.agents.loop import AgentSpec, FrameCallback, run_agent
from core.capabilities import CapabilityContext, Tier
from core.events import new_turn_id, private_scope


@dataclass
class ChatOutcome:
    session: Session
    run: Run
    response: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


def qa_spec(*, question: str = "", session: Session | None = None) -> AgentSpec:
    """The Q&A agent for one turn: its prompt, the language to answer in, the session's attachments
    (delimited data, after the instructions) and its read tools."""
    prompt, ref = qa_system_prompt()
    sections = [prompt, language_line(question)]
    if session is not None:
        block = attachments_block(session.attachments.order_by("id"))
        if block:
            sections.append(block)
    config = get_config()
    return AgentSpec(
        name=QA_AGENT,
        system_prompt="\n\n".join(sections),
        prompt_ref=ref,
        tools=qa_tools(),
        max_tier=Tier.SAFE,  # only reaches ask_investigator: every other Q&A tool is read
        use_case="chat",
        thinking=config.reasoning,
        max_turns=max(config.max_turns, 12),  # resolve + fallback + six tools + answer
        timeout_seconds=config.run_timeout_seconds,
    )


def chat_turn(
    *,
    user: AbstractBaseUser,
    content: str | None = None,
    messages: list[dict[str, Any]] | None = None,
    session_id: int | None = None,
    on_frame: FrameCallback | None = None,
    engine: Engine | None = None,
) -> ChatOutcome:
    """Persist the user's message, run the Q&A agent (streaming frames), persist the answer."""
    if session_id is not None:
        session = selectors.session_owned(user, session_id)  # only its owner speaks in it
    else:
        session = session_create(owner=user, mode=Mode.CHAT, kind="qa")
    if messages:
        for item in messages:
            if item.get("role") in (Role.USER, Role.ASSISTANT) and isinstance(item.get("content"), str):
                message_create(session=session, role=item["role"], content=item["content"])
    else:
        message_create(session=session, role=Role.USER, content=content or "")
    history = session_history(session)
    started, before = time.monotonic(), last_agent_run_id()
    trace_id = new_turn_id()
    engine = engine or author_engine()
    run = Run.objects.create(
        session=session,
        engine=engine.name,
        mode=Mode.CHAT,
        trace_id=trace_id,
        input_summary=(history[-1]["content"] if history else "")[:2000],
    )
    tool_calls: list[dict[str, Any]] = []

    def frame(f: dict[str, Any]) -> None:
        if f["type"] == "tool_call":
            tool_calls.append({"name": f["name"], "args": f["args"], "result_summary": ""})
        elif f["type"] == "tool_result":
            for call in reversed(tool_calls):
                if call["name"] == f["name"] and not call["result_summary"]:
                    call["result_summary"] = f["summary"]
                    break
        if on_frame:
            on_frame(f)

    extra = {"session_id": session.pk, "investigator_wait_seconds": get_config().investigator_wait_seconds}
    ctx = CapabilityContext(user=user, turn_id=trace_id, extra=extra)
    try:
        question = history[-1]["content"] if history else ""
        spec = qa_spec(question=question if isinstance(question, str) else "", session=session)
        # its runs (handoffs too) name the session; its agents' bus events are the user's alone
        with correlation_scope(session.correlation_id), private_scope(session.owner_id):
            result = run_agent(spec, messages=history, ctx=ctx, engine=engine, on_frame=frame)
    except Exception as exc:  # the loop never raises; building the spec or a DB error still might
        run_fail(run=run, error=f"{type(exc).__name__}: {exc}")
        raise
    error = "" if result.ok else (result.run.error or result.finish_reason)
    response = result.text
    message_create(
        session=session,
        role=Role.ASSISTANT,
        content=response,
        metadata={
            "tool_calls": tool_calls,
            "run_id": run.pk,
            "finish_reason": result.finish_reason,
            **turn_agent_runs(correlation_id=session.correlation_id, after_id=before),
        },
    )
    run.agent_run = result.run
    run.model = result.run.model
    run.output_summary = response[:2000]
    run.error = error
    run.tokens = result.run.input_tokens + result.run.output_tokens
    run.status = RunStatus.COMPLETED if result.ok else RunStatus.FAILED
    run.duration_ms = int((time.monotonic() - started) * 1000)
    run.finished = timezone.now()
    run.save()
    return ChatOutcome(session=session, run=run, response=response, tool_calls=tool_calls, error=error)
