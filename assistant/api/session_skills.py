"""A session's skills: which are pinned (always included) or disabled (never used) in it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from assistant import selectors
from assistant.api.schemas import SessionSkillIn, SessionSkillOut
from assistant.models import Session, Skill
from assistant.services.sessions import session_skill_set
from core.access import OPERATOR, require_scopes

router = Router(tags=["assistant"])


def _skills_out(session: Session) -> list[dict[str, Any]]:
    prefs = session.skill_prefs
    return [
        {
            "name": skill.name,
            "description": skill.description,
            "runtime_mode": skill.runtime_mode,
            "triggers": skill.triggers,
            "version": skill.version,
            "session_state": "pinned"
            if skill.name in prefs["pinned"]
            else "disabled"
            if skill.name in prefs["disabled"]
            else "auto",
        }
        for skill in Skill.objects.order_by("name")[:200]
    ]


@router.get("/sessions/{session_id}/skills", response=list[SessionSkillOut])
def list_session_skills(request: HttpRequest, session_id: int) -> list[dict[str, Any]]:
    require_scopes(request.user, OPERATOR)
    return _skills_out(selectors.session_get(request.user, session_id))


@router.put("/sessions/{session_id}/skills/{name}", response=list[SessionSkillOut])
def set_session_skill(
    request: HttpRequest, session_id: int, name: str, payload: SessionSkillIn
) -> list[dict[str, Any]]:
    require_scopes(request.user, OPERATOR)
    session = selectors.session_owned(request.user, session_id)  # the owner's alone, admins too
    return _skills_out(session_skill_set(session=session, name=name, state=payload.state))
