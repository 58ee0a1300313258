"""Database check (`manage.py check --database default`): skills and published artifacts whose
names were stored before the slug rule (assistant/validators.py DRAFT_NAME, 214d888). Such a name
(`<img src=x onerror=alert(1)>`, `../../etc`) is escaped wherever it is shown, but it is also a
URL segment (PUT /sessions/{id}/skills/{name}) and an audit value; the warning names each row so
an admin can retire it and publish it again under a slug."""

from __future__ import annotations

from typing import Any

from django.core import checks

from core.db_checks import capped_warnings, tables_ready


@checks.register(checks.Tags.database)
def stored_names_check(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from assistant.models import PublishedArtifact, Skill
    from assistant.validators import DRAFT_NAME, DRAFT_NAME_RULE

    if not tables_ready(databases, Skill, PublishedArtifact):
        return []
    # Both tables hold one row per published name (and version): small enough to read whole.
    skills = Skill.objects.order_by("pk").values_list("pk", "name")
    artifacts = PublishedArtifact.objects.filter(active=True).order_by("pk").values_list("pk", "type", "name")
    found = [f"Skill {pk} {name!r}: {DRAFT_NAME_RULE}" for pk, name in skills if not DRAFT_NAME.match(name)]
    found += [
        f"Published {kind} {pk} {name!r}: {DRAFT_NAME_RULE}"
        for pk, kind, name in artifacts
        if not DRAFT_NAME.match(name)
    ]
    return capped_warnings(
        found,
        check_id="assistant.W001",
        hint="Retire it (admin) and publish it again under a slug name.",
        more="more names that are not slugs.",
    )
