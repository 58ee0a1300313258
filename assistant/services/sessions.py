"""Sessions and their messages."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from assistant.choices import Mode, Role, SkillRuntimeMode, ToolApproval
from assistant.models import Message, Session, Skill
from core.errors import Conflict, InvalidInput, NotFound

SESSION_SKILL_STATES = ("auto", "pinned", "disabled")


def session_create(
    *, owner: AbstractBaseUser, title: str = "", mode: str = Mode.CHAT, kind: str = "authoring"
) -> Session:
    if mode not in Mode.values:
        raise InvalidInput(f"Unknown mode {mode!r}; choose one of {Mode.values}.", field="mode")
    return Session.objects.create(owner=owner, title=title[:200], metadata={"mode": mode, "kind": kind})


def session_update(
    *,
    session: Session,
    title: str | None = None,
    archived: bool | None = None,
    mode: str | None = None,
    tool_approval: str | None = None,
) -> Session:
    fields = ["updated"]
    if title is not None:
        session.title = title[:200]
        fields.append("title")
    if archived is not None:
        session.archived = archived
        fields.append("archived")
    if mode is not None:
        if mode not in Mode.values:
            raise InvalidInput(f"Unknown mode {mode!r}; choose one of {Mode.values}.", field="mode")
        session.metadata = {**session.metadata, "mode": mode}
        fields.append("metadata")
    if tool_approval is not None:
        if tool_approval not in ToolApproval.values:
            raise InvalidInput(
                f"Unknown tool_approval {tool_approval!r}; choose one of {ToolApproval.values}.", field="tool_approval"
            )
        session.metadata = {**session.metadata, "tool_approval": tool_approval}
        fields.append("metadata")
    session.save(update_fields=fields)
    return session


def message_create(*, session: Session, role: str, content: str, metadata: dict[str, Any] | None = None) -> Message:
    message = Message.objects.create(session=session, role=role, content=content, metadata=metadata or {})
    if not session.title and role == Role.USER:
        session.title = content.strip().splitlines()[0][:80] if content.strip() else ""
    session.save(update_fields=["title", "updated"])
    return message


def session_history(session: Session, *, limit: int = 20) -> list[dict[str, Any]]:
    """The last messages as Anthropic-shaped turns, alternating roles (consecutive ones merged)."""
    rows = list(session.messages.filter(role__in=[Role.USER, Role.ASSISTANT, Role.SYSTEM]).order_by("-id")[:limit])[
        ::-1
    ]
    history: list[dict[str, Any]] = []
    for row in rows:
        if not row.content or (row.role == Role.SYSTEM and "tool_decision" not in row.metadata):
            continue
        # the user's decision on a held tool call reaches the model as a note on the user's side
        role, content = (Role.USER, f"[{row.content}]") if row.role == Role.SYSTEM else (row.role, row.content)
        if history and history[-1]["role"] == role:
            history[-1]["content"] += "\n\n" + content
        else:
            history.append({"role": str(role), "content": content})
    while history and history[0]["role"] != "user":
        history.pop(0)
    return history


def session_skill_set(*, session: Session, name: str, state: str) -> Session:
    """Pin a skill in this session (always included), disable it (never used) or return it to
    auto. A skill an approver disabled for everyone cannot be pinned back by a session."""
    if state not in SESSION_SKILL_STATES:
        raise InvalidInput(f"Unknown state {state!r}; choose one of {SESSION_SKILL_STATES}.", field="state")
    skill = Skill.objects.filter(name=name).first()
    if skill is None:
        raise NotFound(f"Skill {name!r} not found.")
    if state == "pinned" and skill.runtime_mode == SkillRuntimeMode.DISABLED:
        raise Conflict(f"Skill {name!r} is disabled for everyone; a session cannot pin it.", status=skill.runtime_mode)
    prefs = session.skill_prefs
    pinned = [n for n in prefs["pinned"] if n != name] + ([name] if state == "pinned" else [])
    disabled = [n for n in prefs["disabled"] if n != name] + ([name] if state == "disabled" else [])
    session.metadata = {**session.metadata, "skills": {"pinned": pinned, "disabled": disabled}}
    session.save(update_fields=["metadata", "updated"])
    return session
