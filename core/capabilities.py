"""The one registry of typed capabilities: what agents, plans, the coordinator and MCP may call.

An app declares a capability in its `capabilities.py`:

    @capability(
        "workorders.get_work_order",
        description="One work order with its RCA.",
        input=GetWorkOrderInput,          # a pydantic model
        tier=Tier.READ,
        scopes=(OPERATOR,),
    )
    def get_work_order(ctx: CapabilityContext, params: GetWorkOrderInput) -> dict: ...

`dispatch()` validates input, checks the caller's scopes, runs the handler and never raises:
every failure becomes an `is_error` result with a message.
"""

from __future__ import annotations

import enum
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from django.contrib.auth.models import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from pydantic import BaseModel, ValidationError

from core.access import has_scopes, user_scopes
from core.errors import DomainError
from core.json_text import unstorable_text

logger = logging.getLogger(__name__)


class Tier(enum.IntEnum):
    READ = 0
    SAFE = 1
    MUTATE = 2
    GATED = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str | Tier) -> Tier:
        return value if isinstance(value, Tier) else cls[value.upper()]


@dataclass(frozen=True)
class JobHandle:
    """Returned by a capability whose work finishes later; the orchestrator parks and polls it."""

    kind: str
    ref: str

    def as_dict(self) -> dict[str, str]:
        return {"job_kind": self.kind, "job_ref": self.ref}


@dataclass
class CapabilityContext:
    """Who a call acts for, and from where (agent name, turn id, plan step)."""

    user: AbstractBaseUser | None
    agent: str = ""
    turn_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class CapabilityResult:
    name: str
    content: Any = None
    is_error: bool = False
    message: str = ""
    duration_ms: int = 0
    job: JobHandle | None = None

    def as_text(self, limit: int = 20_000) -> str:
        """The tool-result text handed back to a model."""
        if self.is_error:
            return f"ERROR: {self.message}"
        if isinstance(self.content, str):
            return self.content if len(self.content) <= limit else self.content[:limit] + "…[truncated]"
        return _json_within(self.content, limit)

    def summary(self, limit: int = 200) -> str:
        """A short server-made summary, never the raw output (chat frames, step records)."""
        if self.is_error:
            return f"error: {self.message}"[:limit]
        if self.job:
            return f"started {self.job.kind} {self.job.ref}"
        content = self.content
        if isinstance(content, dict) and isinstance(content.get("summary"), str):
            return content["summary"][:limit]
        if isinstance(content, list):
            return f"{len(content)} item(s)"
        if isinstance(content, dict):
            return f"{len(content)} field(s): {', '.join(list(content)[:6])}"[:limit]
        return str(content)[:limit]


def _json_within(content: Any, limit: int) -> str:
    """JSON of at most `limit` characters that still parses: long lists lose their tail items."""
    text = json.dumps(content, cls=DjangoJSONEncoder)
    if len(text) <= limit:
        return text
    content = json.loads(text)
    for _ in range(64):
        lists = _lists_in(content)
        longest = max(lists, key=len, default=None)
        if not longest or len(longest) <= 1:
            break
        del longest[max(1, len(longest) // 2) :]
        if isinstance(content, dict):
            content["truncated"] = True
        text = json.dumps(content, cls=DjangoJSONEncoder)
        if len(text) <= limit:
            return text
    return json.dumps({"truncated": True, "preview": text[: max(0, limit - 40)]})


def _lists_in(value: Any) -> list[list[Any]]:
    if isinstance(value, list):
        return [value, *(found for item in value for found in _lists_in(item))]
    if isinstance(value, dict):
        return [found for item in value.values() for found in _lists_in(item)]
    return []


Handler = Callable[[CapabilityContext, BaseModel], Any]
InputT = TypeVar("InputT", bound=BaseModel)
TypedHandler = Callable[[CapabilityContext, InputT], Any]


@dataclass(frozen=True)
class Capability:
    name: str
    description: str
    input: type[BaseModel]
    tier: Tier
    scopes: tuple[str, ...]
    handler: Handler
    returns_job: bool = False
    handoff_to: str = ""  # set when the capability runs another agent (agent-as-tool)
    tool_name: str = ""
    # An entry point for a person's UI (the chat drawer): never an agent's tool, an MCP tool or a
    # plan step; dispatch refuses it to any caller that names itself an agent.
    ui_only: bool = False

    def input_schema(self) -> dict[str, Any]:
        schema = self.input.model_json_schema()
        schema.pop("title", None)
        return schema


class CapabilityRegistry:
    def __init__(self) -> None:
        self._by_name: dict[str, Capability] = {}
        self._by_tool: dict[str, Capability] = {}

    def register(self, cap: Capability) -> Capability:
        existing = self._by_name.get(cap.name)
        if existing is not None and existing.handler is not cap.handler:
            if getattr(existing.handler, "__qualname__", None) != getattr(cap.handler, "__qualname__", None):
                raise ValueError(f"Capability {cap.name!r} is already registered.")
        other = self._by_tool.get(cap.tool_name)
        if other is not None and other.name != cap.name:
            raise ValueError(f"Tool name {cap.tool_name!r} is taken by {other.name!r}.")
        self._by_name[cap.name] = cap
        self._by_tool[cap.tool_name] = cap
        return cap

    def unregister(self, name: str) -> None:
        cap = self._by_name.pop(name, None)
        if cap is not None:
            self._by_tool.pop(cap.tool_name, None)

    def get(self, name: str) -> Capability | None:
        """By dotted name or by tool name."""
        return self._by_name.get(name) or self._by_tool.get(name)

    def all(self) -> list[Capability]:
        return sorted(self._by_name.values(), key=lambda c: c.name)

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None


registry = CapabilityRegistry()


def capability(
    name: str,
    *,
    description: str,
    input: type[InputT],
    tier: Tier | str = Tier.READ,
    scopes: Iterable[str] = (),
    returns_job: bool = False,
    handoff_to: str = "",
    tool_name: str = "",
    ui_only: bool = False,
) -> Callable[[TypedHandler[InputT]], TypedHandler[InputT]]:
    """Register the decorated function as a capability in the one registry."""

    def decorate(handler: TypedHandler[InputT]) -> TypedHandler[InputT]:
        registry.register(
            Capability(
                name=name,
                description=description,
                input=input,
                tier=Tier.parse(tier),
                scopes=tuple(scopes),
                handler=cast(Handler, handler),  # dispatch passes it a validated `input`
                returns_job=returns_job,
                handoff_to=handoff_to,
                tool_name=tool_name or name.rsplit(".", 1)[-1],
                ui_only=ui_only,
            )
        )
        return handler

    return decorate


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "input"
        parts.append(f"{loc}: {err.get('msg')}")
    return "Invalid input: " + "; ".join(parts)


# Capabilities published at run time (tools, MCP servers) live in the database; an app registers a
# sync that brings this process's registry up to date when their version stamp moved. Dispatch and
# tool projection run it, at most once per ARIA_REGISTRY_REFRESH_SECONDS, so every web and worker
# process sees a publication within seconds, without a restart.
RegistrySync = Callable[[], None]
_registry_syncs: list[RegistrySync] = []
_sync_lock = threading.Lock()
_last_sync = [float("-inf")]


def register_registry_sync(sync: RegistrySync) -> RegistrySync:
    if sync not in _registry_syncs:
        _registry_syncs.append(sync)
    return sync


def refresh_registry(*, force: bool = False) -> None:
    """Run the registered syncs if the refresh interval has passed (or `force`). Never raises;
    a sync already running in another thread (or re-entered from one) is not waited for."""
    # settings read at call time (the registry module loads before settings are configured)
    from django.conf import settings

    interval = float(getattr(settings, "ARIA_REGISTRY_REFRESH_SECONDS", 2.0))
    now = time.monotonic()
    if not _registry_syncs or (not force and now - _last_sync[0] < interval):
        return
    if not _sync_lock.acquire(blocking=False):
        return
    try:
        _last_sync[0] = now
        for sync in _registry_syncs:
            try:
                sync()
            except Exception:  # a failed sync keeps the registry as it was
                logger.debug("Capability registry sync %r failed", sync, exc_info=True)
    finally:
        _sync_lock.release()


def dispatch(name: str, args: dict[str, Any] | None, *, ctx: CapabilityContext) -> CapabilityResult:
    """Validate, authorise and run one capability. Never raises to the caller."""
    started = time.monotonic()
    refresh_registry()
    cap = registry.get(name)
    if cap is None:
        return CapabilityResult(name=name, is_error=True, message=f"Unknown capability {name!r}.")

    def finish(result: CapabilityResult) -> CapabilityResult:
        result.duration_ms = int((time.monotonic() - started) * 1000)
        return result

    if cap.ui_only and ctx.agent:
        message = f"{cap.name} is an entry point for a person's UI; {ctx.agent!r} may not call it."
        return finish(CapabilityResult(cap.name, is_error=True, message=message))
    if not has_scopes(ctx.user, cap.scopes):
        missing = sorted(set(cap.scopes) - user_scopes(ctx.user))
        return finish(
            CapabilityResult(
                cap.name, is_error=True, message=f"Permission denied: requires scope {', '.join(missing)}."
            )
        )
    unstorable = unstorable_text(args)  # no body check ran on a model's or a plan's arguments
    if unstorable is not None:
        path, problem = unstorable
        return finish(CapabilityResult(cap.name, is_error=True, message=f"Invalid input: {path or 'input'}: {problem}"))
    try:
        params = cap.input.model_validate(args or {})
    except ValidationError as exc:
        return finish(CapabilityResult(cap.name, is_error=True, message=_validation_message(exc)))
    try:
        output = cap.handler(ctx, params)
    except DomainError as exc:
        return finish(CapabilityResult(cap.name, is_error=True, message=exc.message))
    except Exception as exc:  # a handler crash is a tool error, never an unhandled exception
        logger.exception("Capability %s failed", cap.name)
        return finish(CapabilityResult(cap.name, is_error=True, message=f"{type(exc).__name__}: {exc}"))
    if isinstance(output, JobHandle):
        return finish(CapabilityResult(cap.name, content=output.as_dict(), job=output))
    if isinstance(output, BaseModel):
        output = output.model_dump(mode="json")
    return finish(CapabilityResult(cap.name, content=output))


def project_tools(
    *,
    allow: Iterable[str] | None = None,
    max_tier: Tier | str = Tier.MUTATE,
    user: AbstractBaseUser | None = None,
    provider: str = "anthropic",
) -> list[dict[str, Any]]:
    """An agent's tool list: allowlisted capabilities up to max_tier, never `gated`, never `ui_only`.

    With `user`, capabilities whose scopes the user lacks are left out. The format is the
    provider's: Anthropic `{name, description, input_schema}`, OpenAI/Ollama function tools.
    """
    ceiling = min(Tier.parse(max_tier), Tier.MUTATE)
    refresh_registry()
    if allow is None:
        caps = registry.all()
    else:
        caps = [c for c in (registry.get(n) for n in allow) if c is not None]
    tools = []
    for cap in caps:
        if cap.tier > ceiling or cap.ui_only or (user is not None and not has_scopes(user, cap.scopes)):
            continue
        tools.append(tool_spec(cap.tool_name, cap.description, cap.input_schema(), provider=provider))
    return tools


def tool_spec(name: str, description: str, schema: dict[str, Any], *, provider: str = "anthropic") -> dict[str, Any]:
    if provider == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


# --- async jobs -----------------------------------------------------------------------------------

JobStatus = tuple[str, dict[str, Any]]  # ("pending" | "done" | "failed", details)
_job_resolvers: dict[str, Callable[[str], JobStatus]] = {}


def job_resolver(kind: str) -> Callable[[Callable[[str], JobStatus]], Callable[[str], JobStatus]]:
    """Register how to ask whether a job of this kind is finished."""

    def decorate(fn: Callable[[str], JobStatus]) -> Callable[[str], JobStatus]:
        _job_resolvers[kind] = fn
        return fn

    return decorate


def job_status(handle: JobHandle) -> JobStatus:
    resolver = _job_resolvers.get(handle.kind)
    if resolver is None:
        return "failed", {"error": f"No resolver for job kind {handle.kind!r}."}
    try:
        return resolver(handle.ref)
    except Exception as exc:
        logger.exception("Job resolver %s failed", handle.kind)
        return "failed", {"error": f"{type(exc).__name__}: {exc}"}
