"""Deterministic skill selection: the same session state always selects the same skills."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from assistant.choices import SkillRuntimeMode
from assistant.models import Skill


def select_skills(
    *,
    text: str,
    mode: str,
    draft_types: list[str],
    limit: int = 5,
    pinned: Collection[str] = (),
    disabled: Collection[str] = (),
) -> list[Skill]:
    """Pinned skills always (globally or by the session); auto skills whose trigger words occur in
    the turn, mode or drafts; never a skill disabled globally or by the session.

    Ordered pinned first, then by number of matched triggers, then name — no randomness."""
    haystack = " ".join([text.lower(), mode, *draft_types])
    words = set(re.findall(r"[a-z0-9_\-]+", haystack))
    chosen: list[tuple[int, int, str, Skill]] = []
    skills = Skill.objects.exclude(runtime_mode=SkillRuntimeMode.DISABLED).exclude(name__in=list(disabled))
    for skill in skills.order_by("name"):
        if skill.runtime_mode == SkillRuntimeMode.PINNED or skill.name in pinned:
            chosen.append((0, 0, skill.name, skill))
            continue
        hits = sum(1 for t in skill.triggers if t.lower() in words or (" " in t and t.lower() in haystack))
        if hits:
            chosen.append((1, -hits, skill.name, skill))
    return [s for *_, s in sorted(chosen, key=lambda c: c[:3])][:limit]


def skills_record(skills: list[Skill], *, session_pinned: Collection[str] = ()) -> list[dict[str, Any]]:
    return [
        {"name": s.name, "version": s.version, "mode": "pinned" if s.name in session_pinned else s.runtime_mode}
        for s in skills
    ]
