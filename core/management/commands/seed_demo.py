"""Seed the demo: scope groups, four people, three service accounts, then every app's demo data.

Idempotent. A person's random password is printed once, when the user is created, and kept in
var/demo_credentials.txt (mode 0600) so it can be found later; later runs never print it again.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from core.access import ADMIN, APPROVER, OPERATOR, SCOPES
from core.models import ServiceAccount
from core.seed import seed_all_apps

# username → (scopes, is_staff, is_superuser). Two operators: a shift handover is signed by the
# outgoing operator and acknowledged by the incoming one, never by its author
# (workorders.services.handover), so one sign-in alone cannot show the handover through.
PEOPLE: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "operator": ((OPERATOR,), False, False),
    "operator2": ((OPERATOR,), False, False),  # the incoming shift
    "approver": ((APPROVER,), True, False),
    "admin": ((ADMIN,), True, True),
}
# username → (role, scopes, description). Service accounts never log in with a password.
SERVICE_ACCOUNTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "reviewer": (ServiceAccount.Role.REVIEWER, (), "The reviewer agent's principal (governed approvals)."),
    "release": (ServiceAccount.Role.RELEASE, (), "The release principal that publishes approved drafts."),
    "system": (ServiceAccount.Role.SYSTEM, (OPERATOR,), "Background work: scans, investigations, plans."),
}
# The approver uses /admin/ as the approval console: it may view the ARIA models. Moving alarms and
# work orders there needs the operator scope, as over the API (core.admin.OperatorChangesMixin), so
# the approver holds no change permission (a group seeded before keeps its old ones: harmless).
# People's transcripts, API tokens and service accounts stay admin-only whatever these permissions
# say (core.admin.AdminScopeOnlyMixin). Never add/delete: the audit trail, events and agent runs
# are append-only.
APPROVER_VIEW_APPS = ("core", "sentinel", "workorders")


def approver_permissions() -> list[Permission]:
    return list(Permission.objects.filter(content_type__app_label__in=APPROVER_VIEW_APPS, codename__startswith="view_"))


def default_credentials_file() -> Path:
    return Path(settings.VAR_DIR) / "demo_credentials.txt"


def _read_credentials(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    lines = (line.split(":", 1) for line in path.read_text().splitlines() if ":" in line and not line.startswith("#"))
    return {name.strip(): password.strip() for name, password in lines}


def _write_credentials(path: Path, credentials: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "# ARIA demo users (created by manage.py seed_demo). Keep this file private.\n"
    body += "".join(f"{name}: {password}\n" for name, password in credentials.items())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(body)
    path.chmod(0o600)  # also when the file already existed with wider permissions


def _join_groups(user: User, scopes: tuple[str, ...], groups: dict[str, Group]) -> None:
    user.groups.add(*(groups[scope] for scope in scopes))


class Command(BaseCommand):
    help = "Create the demo users and service accounts (idempotent), then seed every app's demo data."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--credentials-file", type=Path, default=None, help="Where to keep the demo passwords (var/…)."
        )
        parser.add_argument("--users-only", action="store_true", help="Skip the apps' demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["credentials_file"] or default_credentials_file()
        created = self._seed_principals(path)
        if created:
            self.stdout.write(self.style.SUCCESS("Demo users created. Their passwords (shown only this once):"))
            for name, password in created.items():
                self.stdout.write(f"  {name:<10} {password}")
            self.stdout.write(f"They are also kept in {path} (readable only by you).")
        else:
            self.stdout.write(f"Demo users already exist; their passwords are in {path}.")
        if not options["users_only"]:
            seed_all_apps(self.stdout)

    @transaction.atomic
    def _seed_principals(self, path: Path) -> dict[str, str]:
        groups = {scope: Group.objects.get_or_create(name=scope)[0] for scope in SCOPES}
        groups[APPROVER].permissions.add(*approver_permissions())  # add() is idempotent
        created: dict[str, str] = {}
        for username, (scopes, is_staff, is_superuser) in PEOPLE.items():
            user, is_new = User.objects.get_or_create(
                username=username, defaults={"is_staff": is_staff, "is_superuser": is_superuser}
            )
            if is_new:
                created[username] = secrets.token_urlsafe(12)
                user.set_password(created[username])
                user.save(update_fields=["password"])
            _join_groups(user, scopes, groups)
        for username, (role, scopes, description) in SERVICE_ACCOUNTS.items():
            user, is_new = User.objects.get_or_create(username=username)
            if is_new:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            ServiceAccount.objects.update_or_create(user=user, defaults={"role": role, "description": description})
            _join_groups(user, scopes, groups)
        if created:
            _write_credentials(path, {**_read_credentials(path), **created})
        return created
