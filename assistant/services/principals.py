"""The reviewer and release service principals named in the runtime config, and their checks.

`review_problems` is the one answer to "may an agent approve (and, under full_autonomy, a
release principal publish) right now?": the config route shows it as readiness, and review and
publish refuse with it, so what the settings page says is what the services enforce."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from assistant.choices import ApprovalPolicy
from assistant.conf import AssistantConfig
from core.access import APPROVER, OPERATOR, has_scopes
from core.agents.engines.catalog import engine_info as catalog_engine_info
from core.models import ServiceAccount

OFFLINE_REVIEWER = "the reviewer engine is the offline fake, not a real provider."


@dataclass
class Principals:
    reviewer: AbstractBaseUser | None
    release: AbstractBaseUser | None
    problems: list[str]

    @property
    def ready(self) -> bool:
        return not self.problems


def engine_info(name: str) -> dict[str, Any]:
    """What an engine name resolves to ("" = ARIA_ENGINE); an unknown name raises ValueError."""

    return catalog_engine_info(name or None)


def reviewer_engine_info(config: AssistantConfig) -> dict[str, Any]:
    return engine_info(config.reviewer_engine or config.engine)


def _service_user(username: str, role: str, label: str, problems: list[str]) -> AbstractBaseUser | None:
    if not username:
        problems.append(f"missing config: {label}_username is not set.")
        return None
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        problems.append(f"missing config: {label} principal {username!r} does not exist.")
        return None
    if not ServiceAccount.objects.filter(user=user, role=role).exists():
        problems.append(f"missing config: {username!r} is not a {role} service account.")
    return user


def resolve_principals(config: AssistantConfig, *, author: AbstractBaseUser | None = None) -> Principals:
    """Who reviews and who releases under the configured policy, with every reason it is not ready."""
    problems: list[str] = []
    if config.approval_policy == ApprovalPolicy.MANUAL:
        return Principals(None, None, ["missing config: approval_policy is manual."])
    reviewer = _service_user(config.reviewer_username, ServiceAccount.Role.REVIEWER, "reviewer", problems)
    release = None
    if config.approval_policy == ApprovalPolicy.FULL_AUTONOMY:
        release = _service_user(config.release_username, ServiceAccount.Role.RELEASE, "release", problems)
    if reviewer is not None and not has_scopes(reviewer, [APPROVER]):
        problems.append("missing scope: the reviewer principal needs scope approver.")
    if release is not None and not has_scopes(release, [OPERATOR]):
        problems.append("missing scope: the release principal needs scope operator.")
    people = [("author", author), ("reviewer", reviewer), ("release", release)]
    present = [(label, u) for label, u in people if u is not None]
    for i, (label_a, a) in enumerate(present):
        for label_b, b in present[i + 1 :]:
            if a.pk == b.pk:
                problems.append(f"shared identities: {label_a} and {label_b} are the same user.")
    return Principals(reviewer, release, problems)


def review_principals(config: AssistantConfig, *, author: AbstractBaseUser | None = None) -> Principals:
    """resolve_principals plus the reviewer engine: an offline fake never approves anything."""
    principals = resolve_principals(config, author=author)
    try:
        info = reviewer_engine_info(config)
    except Exception as exc:  # an unknown or broken engine is not a reviewer either
        principals.problems.append(f"provider error: {exc}")
        return principals
    if not info.get("real_provider"):
        principals.problems.append(OFFLINE_REVIEWER)
    elif not info.get("configured"):
        principals.problems.append(f"missing config: the reviewer engine {info.get('engine')!r} has no key or host.")
    return principals
