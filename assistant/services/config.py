"""Runtime configuration: snapshot with readiness, validated audited updates, engine rebuild."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from pydantic import ValidationError

from assistant.choices import ApprovalPolicy
from assistant.conf import PATCHABLE, AssistantConfig, get_config
from assistant.models import RuntimeConfig
from assistant.services.principals import resolve_principals
from core.agents.engines.base import reset_engines
from core.audit import audit_record
from core.errors import InvalidInput

BOUNDS = ("max_turns", "max_questions_per_turn", "max_drafts_per_session", "run_timeout_seconds")


def _engine_info(name: str) -> dict[str, Any]:
    try:
        from core.agents.engines.catalog import engine_info

        return engine_info(name or None)
    except ImportError:  # the catalog arrives with the provider engines
        from core.agents.engines import get_engine

        engine = get_engine(name or None)
        return {"engine": engine.name, "provider": engine.provider, "real_provider": engine.provider != "fake"}


def _readiness(config: AssistantConfig, policy: str, reviewer_info: dict[str, Any]) -> dict[str, Any]:
    problems = resolve_principals(config.model_copy(update={"approval_policy": policy})).problems
    if not reviewer_info.get("real_provider"):
        problems.append("the reviewer engine is the offline fake, not a real provider.")
    return {"ready": not problems, "problems": problems}


def config_snapshot() -> dict[str, Any]:
    config = get_config()
    author = _engine_info(config.engine)
    reviewer = _engine_info(config.reviewer_engine or config.engine)
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
        "agent_review": _readiness(config, ApprovalPolicy.AGENT_REVIEW, reviewer),
        "full_autonomy": _readiness(config, ApprovalPolicy.FULL_AUTONOMY, reviewer),
        "settings": config.model_dump(mode="json"),
    }


def config_update(*, actor: AbstractBaseUser, changes: dict[str, Any]) -> AssistantConfig:
    """Validate the whole new config (unknown keys, bad values, unknown engines → 422), save,
    rebuild the engines, audit."""
    unknown = sorted(set(changes) - PATCHABLE)
    if unknown:
        raise InvalidInput(f"Unknown setting(s): {', '.join(unknown)}.", field=unknown[0])
    with transaction.atomic():
        row, _ = RuntimeConfig.objects.select_for_update().get_or_create(pk=1)
        merged = {**get_config().model_dump(mode="json"), **changes}
        try:
            config = AssistantConfig.model_validate(merged)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(map(str, first["loc"]))
            raise InvalidInput(f"{field}: {first['msg']}", field=field) from None
        for key in ("engine", "reviewer_engine"):
            name = getattr(config, key)
            if name:
                try:
                    _engine_info(name)
                except (ValueError, Exception) as exc:
                    raise InvalidInput(f"{key}: {exc}", field=key) from None
        before = {k: row.data.get(k) for k in changes}
        row.data = {**row.data, **{k: config.model_dump(mode="json")[k] for k in changes}}
        row.save()
        audit_record(
            actor=actor,
            action="assistant.config_update",
            target_type="assistant.config",
            target_id=1,
            details={"before": before, "after": {k: row.data[k] for k in changes}},
        )
    reset_engines()
    return config
