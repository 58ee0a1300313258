"""What publishing makes live, per draft type (a registry): prompt versions + the production
alias, sandboxed tool capabilities, skills, plan templates, MCP server records."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q
from pydantic import BaseModel, ConfigDict

from assistant.choices import DraftType, SkillRuntimeMode
from assistant.conf import get_config
from assistant.mcp_bridge import call_server_tool
from assistant.models import Draft, PromptAlias, PromptVersion, PublishedArtifact, Skill
from assistant.schema_checks import instance_checker, instance_problems
from assistant.services.draft_tests import sandbox_limits
from core.access import OPERATOR
from core.audit import audit_record
from core.capabilities import Capability, CapabilityContext, Tier, register_registry_sync, registry
from core.errors import DomainError, InvalidInput
from core.plan_templates import PlanTemplate
from core.sandbox import run_tool

logger = logging.getLogger(__name__)
Publisher = Callable[[Draft, PublishedArtifact, AbstractBaseUser], None]
_publishers: dict[str, Publisher] = {}
PUBLISHED_TOOL_PREFIX = "published."
MCP_PREFIX = "mcp."
MCP_DEFAULT_TIER = Tier.MUTATE  # what an MCP tool does is unknown until a reviewer says: the gate asks
RUNTIME_TYPES = (DraftType.TOOL, DraftType.MCP_SERVER)  # published as capabilities of each process
_seen_stamp: list[tuple[Any, ...] | None] = [None]


def publisher(draft_type: str) -> Callable[[Publisher], Publisher]:
    def decorate(fn: Publisher) -> Publisher:
        _publishers[draft_type] = fn
        return fn

    return decorate


def publish_artifact(draft: Draft, actor: AbstractBaseUser) -> PublishedArtifact:
    _seen_stamp[0] = None  # reconcile on the next refresh, whether this publication commits or not
    latest = PublishedArtifact.objects.filter(type=draft.type, name=draft.name).aggregate(v=Max("version"))["v"]
    PublishedArtifact.objects.filter(type=draft.type, name=draft.name).update(active=False)
    artifact = PublishedArtifact.objects.create(
        type=draft.type,
        name=draft.name,
        version=(latest or 0) + 1,
        spec=draft.spec,
        content_hash=draft.content_hash,
        draft=draft,
        published_by=actor,
    )
    _publishers[draft.type](draft, artifact, actor)
    return artifact


@publisher(DraftType.PROMPT)
def publish_prompt(draft: Draft, artifact: PublishedArtifact, actor: AbstractBaseUser) -> None:
    name = str(draft.spec.get("agent") or draft.name)
    latest = PromptVersion.objects.filter(name=name).aggregate(v=Max("version"))["v"] or 0
    version = PromptVersion.objects.create(
        name=name,
        version=latest + 1,
        text=draft.spec["text"],
        variables=draft.spec.get("variables", []),
        draft=draft,
        created_by=actor,
    )
    previous = PromptAlias.objects.filter(name=name, alias="production").first()
    PromptAlias.objects.update_or_create(name=name, alias="production", defaults={"version": version})
    audit_record(
        actor=actor,
        action="prompt.alias_move",
        target_type="assistant.prompt_alias",
        target_id=f"{name}:production",
        details={"from_version": previous.version.version if previous else None, "to_version": version.version},
    )


@publisher(DraftType.SKILL)
def publish_skill(draft: Draft, artifact: PublishedArtifact, actor: AbstractBaseUser) -> None:
    spec = draft.spec
    skill, _created = Skill.objects.get_or_create(
        name=draft.name,
        defaults={"instructions": spec["instructions"], "version": artifact.version},
    )
    skill.instructions = spec["instructions"]
    skill.description = str(spec.get("description", ""))[:300]
    skill.triggers = spec.get("triggers", [])
    skill.runtime_mode = spec.get("runtime_mode", SkillRuntimeMode.AUTO)
    skill.version = artifact.version
    skill.save()


@publisher(DraftType.WORKFLOW)
def publish_workflow(draft: Draft, artifact: PublishedArtifact, actor: AbstractBaseUser) -> None:
    pass  # plan templates are served from the active artifacts (see workflow_templates)


@publisher(DraftType.MCP_SERVER)
def publish_mcp_server(draft: Draft, artifact: PublishedArtifact, actor: AbstractBaseUser) -> None:
    tools = mcp_tools_of(artifact.spec, draft.test_report)
    if not tools:
        raise InvalidInput("The MCP server declares no tools and none were discovered by its test.", field="tools")
    approval = draft.reviews.filter(cleared=False).order_by("-id").first()  # publish checked it approves
    chosen = approval.tool_tiers if approval is not None else {}
    tools = [{**tool, "tier": chosen.get(tool["name"]) or tool.get("tier") or MCP_DEFAULT_TIER.label} for tool in tools]
    artifact.spec = {**artifact.spec, "tools": tools}
    artifact.save(update_fields=["spec"])
    for tool in tools:
        taken = registry.get(tool["name"])
        if taken is not None and not taken.name.startswith(f"{MCP_PREFIX}{artifact.name}."):
            raise InvalidInput(f"Tool name {tool['name']!r} is taken by {taken.name!r}.", field="tools")
    for cap in list(registry.all()):  # a new version replaces the old tool set
        if cap.name.startswith(f"{MCP_PREFIX}{artifact.name}."):
            registry.unregister(cap.name)
    register_mcp_tools(artifact)


def mcp_tool_tier(tool: dict[str, Any]) -> Tier:
    """The tier the approver chose for this MCP tool at review (written into the published spec),
    else the one its reviewed spec declares, else `mutate`. A `gated` tool is never handed to a
    model (tool projection stops at mutate) and always asks as a plan step."""
    try:
        return Tier.parse(str(tool.get("tier") or MCP_DEFAULT_TIER.label))
    except (KeyError, ValueError):
        return MCP_DEFAULT_TIER


def mcp_tools_of(spec: dict[str, Any], test_report: dict[str, Any]) -> list[dict[str, Any]]:
    declared = spec.get("tools") or []
    return declared or list(test_report.get("discovered", []))


def register_mcp_tools(artifact: PublishedArtifact) -> list[Capability]:

    caps = []
    for tool in artifact.spec.get("tools", []):
        schema = tool.get("input_schema") or {"type": "object"}
        checker = instance_checker(schema)  # a served schema: fetches nothing, matches no regex
        name = tool["name"]

        def handler(ctx: CapabilityContext, params: BaseModel, _name: str = name, _checker=checker) -> Any:
            args = params.model_dump()
            problems = instance_problems(_checker, args)
            if problems:
                raise InvalidInput(f"Invalid input: {problems[0]}")
            return call_server_tool(artifact.spec, _name, args)

        cap = Capability(
            name=f"{MCP_PREFIX}{artifact.name}.{name}",
            description=str(tool.get("description") or f"{name} from MCP server {artifact.name}.")[:1000],
            input=_schema_model(f"Mcp_{artifact.name}_{name}", schema),
            tier=mcp_tool_tier(tool),
            scopes=(OPERATOR,),
            handler=handler,
            tool_name=name,
        )
        registry.unregister(cap.name)
        caps.append(registry.register(cap))
    return caps


@publisher(DraftType.TOOL)
def publish_tool(draft: Draft, artifact: PublishedArtifact, actor: AbstractBaseUser) -> None:
    other = registry.get(draft.name)
    if other is not None and other.name != PUBLISHED_TOOL_PREFIX + draft.name:
        raise InvalidInput(f"Tool name {draft.name!r} is taken by {other.name!r}.", field="name")
    register_published_tool(artifact)


class _OpenInput(BaseModel):
    """Published tools check their input against the draft's JSON Schema inside the handler."""

    model_config = ConfigDict(extra="allow")


def _schema_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model that accepts any object and advertises the given JSON Schema (checked in the handler)."""
    return type(name, (_OpenInput,), {"model_json_schema": classmethod(lambda cls, *a, **k: dict(schema))})


def register_published_tool(artifact: PublishedArtifact) -> Capability:
    spec: dict[str, Any] = artifact.spec
    schema = spec.get("input_schema") or {"type": "object"}
    checker = instance_checker(schema)

    def handler(ctx: CapabilityContext, params: BaseModel) -> Any:

        args = params.model_dump()
        problems = instance_problems(checker, args)
        if problems:
            raise InvalidInput(f"Invalid input: {problems[0]}")
        result = run_tool(spec["source"], spec.get("entrypoint") or "run", args, limits=sandbox_limits(get_config()))
        if result.reason.startswith("sandbox unavailable"):
            raise DomainError(f"Tool refused: {result.reason}"[:500], code="sandbox_unavailable")
        if not result.ok:
            raise DomainError(f"Tool failed in the sandbox: {result.reason}: {result.error}"[:500])
        return result.output

    input_model = _schema_model(f"Published_{artifact.name}", schema)
    cap = Capability(
        name=PUBLISHED_TOOL_PREFIX + artifact.name,
        description=str(spec.get("description") or f"Published tool {artifact.name} v{artifact.version}."),
        input=input_model,
        tier=Tier.SAFE,
        scopes=(OPERATOR,),
        handler=handler,
        tool_name=artifact.name,
    )
    registry.unregister(cap.name)
    return registry.register(cap)


def load_published_tools() -> int:
    """Register every active published tool and MCP server tool (at start-up of a process)."""
    count = 0
    for artifact in PublishedArtifact.objects.filter(type__in=[DraftType.TOOL, DraftType.MCP_SERVER], active=True):
        try:
            if artifact.type == DraftType.TOOL:
                register_published_tool(artifact)
            else:
                register_mcp_tools(artifact)
            count += 1
        except Exception:
            logger.exception("Could not register published tool %s", artifact.name)
    return count


def _runtime_stamp() -> tuple[Any, ...]:
    """Moves whenever a tool or MCP server is published (a new row) or retired (active count)."""
    rows = PublishedArtifact.objects.filter(type__in=RUNTIME_TYPES)
    stamp = rows.aggregate(latest=Max("id"), active=Count("id", filter=Q(active=True)))
    return (stamp["latest"], stamp["active"])


def sync_published_tools() -> bool:
    """Bring this process's registry in line with the active published tools and MCP servers when
    their stamp moved since the last look: register what is active, drop what is not. True if it
    reconciled."""
    stamp = _runtime_stamp()
    if stamp == _seen_stamp[0]:
        return False
    expected: set[str] = set()
    for artifact in PublishedArtifact.objects.filter(type__in=RUNTIME_TYPES, active=True):
        try:
            caps = (
                [register_published_tool(artifact)] if artifact.type == DraftType.TOOL else register_mcp_tools(artifact)
            )
        except Exception:
            logger.exception("Could not register published %s %s", artifact.type, artifact.name)
            continue
        expected |= {cap.name for cap in caps}
    for cap in list(registry.all()):
        if cap.name.startswith((PUBLISHED_TOOL_PREFIX, MCP_PREFIX)) and cap.name not in expected:
            registry.unregister(cap.name)
    _seen_stamp[0] = stamp
    return True


register_registry_sync(sync_published_tools)


def workflow_templates() -> Iterator[Any]:
    """The plan-template provider: every active published workflow."""

    for artifact in PublishedArtifact.objects.filter(type=DraftType.WORKFLOW, active=True):
        yield PlanTemplate(
            name=artifact.name,
            description=str(artifact.spec.get("description", "")),
            steps=tuple(dict(s) for s in artifact.spec.get("steps", [])),
            source=f"assistant.workflow:{artifact.draft_id}@v{artifact.version}",
        )
