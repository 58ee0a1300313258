"""The one bounded agent loop: every ARIA agent runs here.

Bounds: max turns, wall timeout, token budget, max tool calls; a finish tool ends the run. The
loop publishes agent_start/agent_end, tool_call_started/completed, thinking_delta, ui_render (for
`render_*` tools) and agent_handoff (agent-as-tool), and records an AgentRun with every step.
It never raises: timeouts, provider errors and crashes end the run with a recorded reason.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from pydantic import ValidationError

from core.agents.correlation import current_correlation_id
from core.agents.engines import Engine, get_engine
from core.agents.engines.catalog import provider_model
from core.agents.spec import AgentResult, AgentSpec, FinishTool, FrameCallback, HoldCall
from core.agents.thinking import ThinkingStream
from core.agents.types import EngineError, EngineRequest, EngineTurn
from core.capabilities import CapabilityContext, CapabilityResult, Tier, dispatch, project_tools, registry, tool_spec
from core.events import publish, turn_scope
from core.events.bus import current_turn_id
from core.events.render_props import validate_props
from core.metrics import agent_run_observe, agent_tool_call_observe
from core.models import AgentRun, AgentStep

# The agent's data and the run's result live in core.agents.spec; callers import them from here too.
__all__ = ["AgentResult", "AgentSpec", "FinishTool", "FrameCallback", "HoldCall", "run_agent"]

logger = logging.getLogger(__name__)


class _Stop(Exception):
    def __init__(self, reason: str, error: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


def run_agent(
    spec: AgentSpec,
    *,
    messages: list[dict[str, Any]] | str,
    ctx: CapabilityContext,
    engine: Engine | None = None,
    on_frame: FrameCallback | None = None,
    subject: tuple[str, Any] | None = None,
    parent: AgentRun | None = None,
    parent_turn_id: str | None = None,
    defer_end: bool = False,
    billed_to: AbstractBaseUser | None = None,
) -> AgentResult:
    """Run one agent to completion within its bounds. Never raises.

    `parent_turn_id`: the turn of the agent that handed off to this one (its agent_start names it;
    give the child its own `ctx.turn_id`). `defer_end`: agent_end is left to the caller's
    `result.publish_end()`, for an agent whose result is applied after the run (the Investigator's
    agent_end follows its rca_ready). `billed_to`: who asked for a run that acts as another principal
    (`ctx.user`) and so pays for its tokens in the daily budget (`AgentRun.billed_to`)."""
    engine = engine or get_engine()
    with turn_scope(ctx.turn_id or current_turn_id.get() or None) as turn_id:
        ctx.turn_id = turn_id
        ctx.agent = spec.name
        loop = _Loop(spec, engine, ctx, on_frame, subject, parent, parent_turn_id, defer_end, billed_to=billed_to)
        return loop.run(messages)


class _Loop:
    def __init__(
        self, spec, engine, ctx, on_frame, subject, parent, parent_turn_id=None, defer_end=False, *, billed_to=None
    ) -> None:
        self.spec: AgentSpec = spec
        self.engine: Engine = engine
        self.ctx: CapabilityContext = ctx
        self.on_frame: FrameCallback = on_frame or (lambda frame: None)
        self.started = time.monotonic()
        self.step_index = 0
        self.tool_calls = 0
        self.tokens = 0
        self.output: dict[str, Any] | None = None
        self.text = ""
        self.parent_turn_id = parent_turn_id or None
        self.defer_end = defer_end
        self.thinking = ThinkingStream(agent=spec.name, turn_id=ctx.turn_id, publish=publish)
        self.model = "fake" if engine.provider == "fake" else provider_model(engine.provider, spec.use_case)
        self.run_row = AgentRun.objects.create(
            agent=spec.name,
            turn_id=ctx.turn_id,
            parent=parent,
            user=ctx.user if ctx.user is not None and ctx.user.is_authenticated else None,
            billed_to=billed_to if billed_to is not None and billed_to.is_authenticated else None,
            engine=engine.name,
            model=self.model,
            system_prompt=spec.system_prompt,
            prompt_ref=spec.prompt_ref,
            subject_type=subject[0] if subject else "",
            subject_id=str(subject[1]) if subject else "",
            correlation_id=current_correlation_id.get(),
            deadline_at=timezone.now() + timedelta(seconds=spec.timeout_seconds),
        )
        self.tools = project_tools(allow=spec.tools, max_tier=spec.max_tier, user=ctx.user)
        if spec.finish_tool:
            ft = spec.finish_tool
            schema = ft.input.model_json_schema()
            schema.pop("title", None)
            self.tools.append(tool_spec(ft.name, ft.description, schema))

    # -- bounds ----------------------------------------------------------------------------------
    def _check_time(self) -> None:
        if time.monotonic() - self.started > self.spec.timeout_seconds:
            raise _Stop("timeout", f"Wall timeout of {self.spec.timeout_seconds:.0f}s exceeded.")

    # -- the loop --------------------------------------------------------------------------------
    def run(self, messages: list[dict[str, Any]] | str) -> AgentResult:
        history: list[dict[str, Any]] = (
            [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
        )
        self.run_row.input_summary = _summarise_messages(history)
        publish(
            "agent_start",
            {"agent": self.spec.name, "turn_id": self.ctx.turn_id, "parent_turn_id": self.parent_turn_id},
        )
        reason, error = "end_turn", ""
        try:
            for turn_no in range(self.spec.max_turns):
                self._check_time()
                turn = self._model_turn(history, turn_no)
                history.append({"role": "assistant", "content": turn.content})
                if turn.text:
                    self.text = turn.text
                uses = turn.tool_uses
                if not uses:
                    reason = "end_turn"
                    break
                results = [self._tool_call(use) for use in uses]
                history.append({"role": "user", "content": results})
                if self.output is not None:
                    reason = "finish_tool"
                    break
            else:
                reason, error = "max_turns", f"Stopped after {self.spec.max_turns} model turns."
        except _Stop as stop:
            reason, error = stop.reason, stop.error
        except Exception as exc:  # a crash ends the run with its reason, never silently
            logger.exception("Agent %s crashed", self.spec.name)
            reason, error = "error", f"{type(exc).__name__}: {exc}"
        return self._finish(reason, error, history)

    def _model_turn(self, history: list[dict[str, Any]], turn_no: int) -> EngineTurn:
        request = EngineRequest(
            agent=self.spec.name,
            system=self.spec.system_prompt,
            messages=history,
            tools=self.tools,
            model=self.model,
            use_case=self.spec.use_case,
            thinking=self.spec.thinking and self.engine.supports_thinking,
            max_tokens=self.spec.max_tokens,
            deadline_seconds=max(0.5, self.spec.timeout_seconds - (time.monotonic() - self.started)),
        )

        def on_delta(kind: str, content: str) -> None:
            if kind == "thinking":
                self.thinking.add(content)  # on the bus while the model thinks, coalesced
                self.on_frame({"type": "thinking_delta", "content": content})
            else:
                self.on_frame({"type": "text_delta", "content": content})

        try:
            turn = self.engine.complete(request, on_delta=on_delta)
        except EngineError as exc:  # a call cut off at the run's deadline is the run's timeout
            if time.monotonic() - self.started >= self.spec.timeout_seconds:
                raise _Stop("timeout", f"Wall timeout of {self.spec.timeout_seconds:.0f}s exceeded ({exc}).") from exc
            raise
        finally:
            self.thinking.flush()
        self.tokens += turn.usage.total
        self.run_row.input_tokens += turn.usage.input_tokens
        self.run_row.output_tokens += turn.usage.output_tokens
        self.run_row.turns = turn_no + 1
        if self.tokens > self.spec.token_budget:
            raise _Stop("token_budget", f"Token budget of {self.spec.token_budget} exceeded ({self.tokens}).")
        return turn

    def _tool_call(self, use) -> dict[str, Any]:
        self._check_time()
        if self.spec.finish_tool and use.name == self.spec.finish_tool.name:
            return self._finish_call(use)
        self.tool_calls += 1
        if self.tool_calls > self.spec.max_tool_calls:
            raise _Stop("max_tool_calls", f"More than {self.spec.max_tool_calls} tool calls.")
        cap = registry.get(use.name)
        allowed = {t["name"] for t in self.tools}
        publish(
            "tool_call_started",
            {"agent": self.spec.name, "tool_name": use.name, "args": use.input, "turn_id": self.ctx.turn_id},
        )
        self.on_frame({"type": "tool_call", "name": use.name, "args": use.input})
        if cap is not None and cap.handoff_to:
            reason = str(use.input.get("question") or use.input.get("reason") or f"{self.spec.name} asks")[:300]
            publish(
                "agent_handoff",
                {
                    "from_agent": self.spec.name,
                    "to_agent": cap.handoff_to,
                    "reason": reason,
                    "turn_id": self.ctx.turn_id,
                },
            )
            self.on_frame({"type": "agent_handoff", "from": self.spec.name, "to": cap.handoff_to, "reason": reason})
        held = False
        if use.name not in allowed or cap is None:
            result = CapabilityResult(
                use.name, is_error=True, message=f"Tool {use.name!r} is not available to this agent."
            )
        elif refusal := self._pinned_target_refusal(cap, use.input):
            result = CapabilityResult(use.name, is_error=True, message=refusal)
        elif self.spec.hold_call is not None and cap.tier >= Tier.MUTATE:
            self.ctx.extra["run_id"] = self.run_row.pk
            result = self.spec.hold_call(cap, use.input, self.ctx)
            held = not result.is_error  # a call refused outright (bad input, scope) was not held
        else:
            self.ctx.extra["run_id"] = self.run_row.pk
            result = dispatch(cap.name, use.input, ctx=self.ctx)
        render = self._render(use.name, result)
        if isinstance(render, str):  # props that break the component's contract never reach a UI
            result = CapabilityResult(use.name, is_error=True, message=render, duration_ms=result.duration_ms)
            render = None
        publish(
            "tool_call_completed",
            {
                "agent": self.spec.name,
                "tool_name": use.name,
                "duration_ms": result.duration_ms,
                "turn_id": self.ctx.turn_id,
            },
        )
        agent_tool_call_observe(self.spec.name, use.name, result.duration_ms, is_error=result.is_error)
        summary = result.summary()
        self.on_frame({"type": "tool_result", "name": use.name, "summary": summary})
        if render is not None:
            component, props = render
            publish(
                "ui_render",
                {"agent": self.spec.name, "component": component, "props": props, "turn_id": self.ctx.turn_id},
            )
            self.on_frame({"type": "ui_render", "component": component, "props": props})
        self._record_step(
            kind="held" if held else "handoff" if cap is not None and cap.handoff_to else "tool",
            tool=use.name,
            args=use.input,
            summary=summary,
            is_error=result.is_error,
            error=result.message if result.is_error else "",
            duration_ms=result.duration_ms,
        )
        return {"type": "tool_result", "tool_use_id": use.id, "content": result.as_text(), "is_error": result.is_error}

    @staticmethod
    def _render(tool: str, result: CapabilityResult) -> tuple[str, dict[str, Any]] | str | None:
        """(component, validated props) of a render tool's result, an error message when the props
        break the component's schema (core/events/render_props.py), None for any other tool."""
        if result.is_error or not tool.startswith("render_") or not isinstance(result.content, dict):
            return None
        component = str(result.content.get("component", tool.removeprefix("render_")))
        try:
            return component, validate_props(component, result.content.get("props", {}))
        except ValueError as exc:
            return f"ui_render refused: {exc}"

    def _pinned_target_refusal(self, cap, args: dict[str, Any]) -> str:
        if cap.tier < Tier.MUTATE:
            return ""
        for key, value in self.spec.pinned_write_args.items():
            if key in cap.input.model_fields and args.get(key) != value:
                return f"Refused: this run may only write with {key}={value!r} (the approved target)."
        return ""

    def _finish_call(self, use) -> dict[str, Any]:
        finish = self.spec.finish_tool
        assert finish is not None  # only the finish tool's own calls come here
        try:
            output = finish.input.model_validate(use.input).model_dump(mode="json")
        except ValidationError as exc:
            message = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            self._record_step(kind="finish", tool=use.name, args=use.input, summary="", is_error=True, error=message)
            return {"type": "tool_result", "tool_use_id": use.id, "content": f"ERROR: {message}", "is_error": True}
        self.output = output
        self._record_step(kind="finish", tool=use.name, args=use.input, summary="accepted")
        return {"type": "tool_result", "tool_use_id": use.id, "content": "accepted", "is_error": False}

    def _record_step(self, *, kind, tool, args, summary, is_error=False, error="", duration_ms=0) -> None:
        AgentStep.objects.create(
            run=self.run_row,
            index=self.step_index,
            kind=kind,
            tool=tool,
            args=args,
            result_summary=summary,
            is_error=is_error,
            error=error,
            duration_ms=duration_ms,
        )
        self.step_index += 1

    def _finish(self, reason: str, error: str, history: list[dict[str, Any]]) -> AgentResult:
        run = self.run_row
        end_reason = self.spec.finish_tool.reason if reason == "finish_tool" and self.spec.finish_tool else reason
        run.finish_reason = end_reason
        run.error = error
        run.status = AgentRun.Status.FINISHED if reason in ("finish_tool", "end_turn") else AgentRun.Status.FAILED
        run.result = self.output
        run.output_summary = (self.text or (str(self.output) if self.output else ""))[:2000]
        run.tool_calls = self.tool_calls
        run.finished_at = timezone.now()
        run.duration_ms = int((time.monotonic() - self.started) * 1000)
        run.save()
        agent_run_observe(run)
        payload = {"agent": self.spec.name, "turn_id": self.ctx.turn_id, "finish_reason": end_reason}
        result = AgentResult(
            run=run,
            finish_reason=reason,
            output=self.output,
            text=self.text,
            messages=history,
            end_reason=end_reason,
            _end=lambda: publish("agent_end", payload),
        )
        if not self.defer_end:
            result.publish_end()
        return result


def _summarise_messages(messages: list[dict[str, Any]], limit: int = 2000) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content[:limit]
            return " ".join(b.get("text", "") for b in content if b.get("type") == "text")[:limit]
    return ""
