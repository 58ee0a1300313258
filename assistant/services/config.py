"""Runtime configuration: snapshot with readiness, admin-only validated audited updates, engine
rebuild. These are governance settings (policy, principals, engines, bounds, sandbox limits):
anyone with a scope may read them, only an admin changes them — through the API or the admin."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from pydantic import ValidationError

from assistant.choices import ApprovalPolicy
from assistant.conf import PATCHABLE, AssistantConfig, get_config
from assistant.models import RuntimeConfig
from assistant.services.principals import engine_info, review_principals
from core.access import is_admin
from core.agents.engines.base import reset_engines
from core.audit import audit_record
from core.errors import Forbidden, InvalidInput

BOUNDS = (
    "max_turns",
    "max_questions_per_turn",
    "max_drafts_per_session",
    "max_open_drafts_per_author",
    "run_timeout_seconds",
)


def _readiness(config: AssistantConfig, policy: str) -> dict[str, Any]:
    problems = review_principals(config.model_copy(update={"approval_policy": policy})).problems
    return {"ready": not problems, "problems": problems}


def config_snapshot(*, viewer: AbstractBaseUser | None = None) -> dict[str, Any]:
    config = get_config()
    author = engine_info(config.engine)
    reviewer = engine_info(config.reviewer_engine or config.engine)
    return {
        "engine": author.get("engine"),
        "provider": author.get("provider"),
        "model": config.model or author.get("models", {}).get("chat", ""),
        "reasoning": config.reasoning,
        "reviewer_engine": reviewer.get("engine"),
        "engine_info": author,
        "reviewer_engine_info": reviewer,
        "disabled_intents": config.disabled_intents,
        "disabled_domains": config.disabled_domains,
        "bounds": {k: getattr(config, k) for k in BOUNDS},
        "approval_policy": config.approval_policy,
        "review": {
            "policy_version": config.review_policy_version,
            "confidence_floor": config.review_confidence_floor,
            "ttl_seconds": config.review_ttl_seconds,
        },
        "agent_review": _readiness(config, ApprovalPolicy.AGENT_REVIEW),
        "full_autonomy": _readiness(config, ApprovalPolicy.FULL_AUTONOMY),
        "settings": config.model_dump(mode="json"),
        "editable": viewer is not None and is_admin(viewer),
    }


def config_validate(data: dict[str, Any]) -> AssistantConfig:
    """The whole config, or a 422 naming the first bad setting (unknown key, type, hard maximum,
    unknown engine)."""
    unknown = sorted(set(data) - PATCHABLE)
    if unknown:
        raise InvalidInput(f"Unknown setting(s): {', '.join(unknown)}.", field=unknown[0])
    try:
        config = AssistantConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(map(str, first["loc"]))
        raise InvalidInput(f"{field}: {first['msg']}", field=field) from None
    for key in ("engine", "reviewer_engine"):
        name = getattr(config, key)
        if name:
            try:
                engine_info(name)
            except Exception as exc:
                raise InvalidInput(f"{key}: {exc}", field=key) from None
    return config


def config_update(*, actor: AbstractBaseUser, changes: dict[str, Any], replace: bool = False) -> AssistantConfig:
    """Admin only. Validate the whole new config, save, audit before/after, rebuild the engines.

    `changes` is merged over the stored settings; with `replace` it becomes the stored settings
    (the admin form edits the whole row; a key left out goes back to its default)."""
    if not is_admin(actor):
        raise Forbidden("Changing the assistant's governance settings requires scope: admin.", code="missing_scope")
    with transaction.atomic():
        row, _ = RuntimeConfig.objects.select_for_update().get_or_create(pk=1)
        current = get_config().model_dump(mode="json")
        base = dict(getattr(settings, "ARIA_ASSISTANT", {}) or {}) if replace else current
        config = config_validate({**base, **changes})
        after = config.model_dump(mode="json")
        keys = sorted(set(changes) | (set(row.data) if replace else set()))
        stored = {k: after[k] for k in changes}
        row.data = stored if replace else {**row.data, **stored}
        row.save()
        audit_record(
            actor=actor,
            action="assistant.config_update",
            target_type="assistant.config",
            target_id=1,
            details={"before": {k: current.get(k) for k in keys}, "after": {k: after[k] for k in keys}},
        )
    reset_engines()
    return config
