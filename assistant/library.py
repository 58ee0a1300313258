"""Library resources rendered to text for an attachment: a prompt, skill, tool, workflow (from
the assistant's tables) or a KB entry / work order (through the read capabilities)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from assistant.models import Draft, PromptAlias, PromptVersion, PublishedArtifact, Skill
from assistant.tool_args import args_for
from core.access import owned_by
from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput, NotFound
from core.json_types import ROW_ID_MAX

RESOURCE_TYPES = ("prompt", "skill", "tool", "workflow", "kb_entry", "work_order")


def _ref_number(text: str) -> int | None:
    """`text` as a number written as str(pk) writes it — ASCII digits, no leading zero, at most 19 —
    or None ('²', '٣', '007', a 5,000-digit number are not ids: int() refuses some, the database others).
    The schema states this form (assistant.api.attachment_rules); one past any row id names no row."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or str(int(text)) != text:
        return None
    return int(text)


def _ref_id(text: str) -> int | None:
    """`text` as a row id (`_ref_number` within a database integer), or None."""
    number = _ref_number(text)
    return number if number is not None and number <= ROW_ID_MAX else None


def _dump(data: Any) -> str:
    return json.dumps(data, indent=1, default=str, ensure_ascii=False)


def _prompt(ref: str) -> tuple[str, str]:
    name, _, version = ref.partition("@v")
    if version:
        number = _ref_number(version)
        if number is None:
            raise InvalidInput("ref: the version after @v must be a whole number (e.g. investigator@v2).", field="ref")
        row = PromptVersion.objects.filter(name=name, version=number).first() if number <= ROW_ID_MAX else None
    else:
        alias = PromptAlias.objects.select_related("version").filter(name=name, alias="production").first()
        row = alias.version if alias else None
    if row is None:
        raise NotFound(f"Prompt {ref!r} not found.")
    return f"prompt {row}", f"Prompt {row} (variables: {', '.join(row.variables) or 'none'})\n\n{row.text}"


def _artifact(user: AbstractBaseUser, kind: str, ref: str) -> tuple[str, str]:
    artifact = PublishedArtifact.objects.filter(type=kind, name=ref, active=True).first()
    if artifact is not None:
        return f"{kind} {artifact.name}@v{artifact.version}", _dump(artifact.spec)
    draft_id = _ref_id(ref)  # a published name, else one of the caller's drafts by id
    draft = owned_by(Draft.objects.filter(type=kind), user).filter(pk=draft_id).first() if draft_id else None
    if draft is None:
        raise NotFound(f"{kind.capitalize()} {ref!r} not found.")
    return f"{kind} draft {draft.name} v{draft.version}", _dump(draft.spec)


def _via_capability(user: AbstractBaseUser, tool: str, known: dict[str, Any], label: str) -> tuple[str, str]:
    result = dispatch(tool, args_for(tool, known), ctx=CapabilityContext(user=user))
    if result.is_error:
        raise NotFound(f"{label} not available: {result.message}")
    return label, result.as_text(limit=60_000)


def render_library_resource(*, user: AbstractBaseUser, resource_type: str, ref: str) -> tuple[str, str]:
    """(name, text) of one library resource, as the user may see it."""
    ref = str(ref).strip()
    if resource_type not in RESOURCE_TYPES:
        raise InvalidInput(f"resource_type must be one of {RESOURCE_TYPES}.", field="resource_type")
    if not ref:
        raise InvalidInput("ref is required.", field="ref")
    if resource_type == "prompt":
        return _prompt(ref)
    if resource_type == "skill":
        skill = Skill.objects.filter(name=ref).first()
        if skill is None:
            raise NotFound(f"Skill {ref!r} not found.")
        return (
            f"skill {skill.name}",
            f"Skill {skill.name} v{skill.version} ({skill.runtime_mode})\n\n{skill.instructions}",
        )
    if resource_type in ("tool", "workflow"):
        return _artifact(user, resource_type, ref)
    ident = _ref_number(ref)
    if ident is None:
        raise InvalidInput("ref must be a numeric id.", field="ref")
    if ident > ROW_ID_MAX:
        raise NotFound(f"No {resource_type} {ident}.")  # a number past any row id names none
    if resource_type == "kb_entry":
        return _via_capability(user, "get_equipment_kb", {"cell_id": ident}, f"KB entry for cell {ident}")
    return _via_capability(user, "get_work_order", {"work_order_id": ident}, f"work order {ident}")
