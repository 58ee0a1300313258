"""Helpers for the apps' database checks (`manage.py check --database default`): rows stored
before a write-time check existed, named so an admin can correct them.

Django runs database checks inside `migrate` too, before it migrates: a check reads its tables
only once they exist (a fresh database has none), and only when `--database` asked for it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core import checks
from django.db import DEFAULT_DB_ALIAS, connections

NAMED = 20  # rows named one by one; more are summed up in one warning


def tables_ready(databases: Any, *models: Any) -> bool:
    """True when the check was asked for on the default database and the models' tables exist."""
    if not databases or DEFAULT_DB_ALIAS not in databases:
        return False
    existing = set(connections[DEFAULT_DB_ALIAS].introspection.table_names())
    return all(model._meta.db_table in existing for model in models)


def capped_warnings(found: Iterable[str], *, check_id: str, hint: str, more: str) -> list[checks.CheckMessage]:
    """A warning per found row, the first NAMED of them; the rest counted in one more ("{n} more …")."""
    messages: list[checks.CheckMessage] = []
    extra = 0
    for text in found:
        if len(messages) < NAMED:
            messages.append(checks.Warning(text, hint=hint, id=check_id))
        else:
            extra += 1
    if extra:
        messages.append(checks.Warning(f"{extra} {more}", hint=hint, id=check_id))
    return messages
