"""The assistant's runtime configuration: defaults, overridden by settings.ARIA_ASSISTANT, then by
the RuntimeConfig row that PATCH /config writes (so a change needs no restart).

These are governance settings: only an admin changes them (assistant.services.config), and every
limit has a hard maximum here, so neither the API nor the admin form can lift a bound."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assistant.choices import ApprovalPolicy
from assistant.models import RuntimeConfig
from core.json_types import WholeNumber

logger = logging.getLogger(__name__)

SESSION_OBJECT_ROOT = "assistant"  # uploads live under assistant/<session id>/<file>


class AssistantConfig(BaseModel):
    """Numbers and flags are strict (one rule for the API's PATCH, the admin form and the service):
    `true` is not 1, "5" is not 5, 1 is not `true`; a whole number may be written 5 or 5.0."""

    model_config = ConfigDict(extra="forbid")

    engine: str = Field(default="", max_length=50)  # author engine; "" = ARIA_ENGINE
    reviewer_engine: str = Field(default="", max_length=50)
    model: str = Field(default="", max_length=200)  # "" = model_for(use case)
    reasoning: bool = Field(default=False, strict=True)
    # create_tool|update_tool, create_skill|…, write_prompt, create_workflow|…, create_mcp_server|…
    disabled_intents: list[str] = Field(default_factory=list, max_length=50)
    disabled_domains: list[str] = Field(default_factory=list, max_length=50)
    approval_policy: ApprovalPolicy = ApprovalPolicy.MANUAL
    reviewer_username: str = Field(default="", max_length=150)
    release_username: str = Field(default="", max_length=150)
    review_policy_version: str = Field(default="aria-review-v1", max_length=100)
    review_confidence_floor: float = Field(default=0.8, ge=0, le=1, strict=True, allow_inf_nan=False)
    review_ttl_seconds: WholeNumber = Field(default=3600, ge=1, le=7 * 86_400)
    max_turns: WholeNumber = Field(default=8, ge=1, le=50)
    max_questions_per_turn: WholeNumber = Field(default=3, ge=0, le=20)
    max_drafts_per_session: WholeNumber = Field(default=10, ge=1, le=200)
    # Drafts an author holds that are not published (any route: session, API, capability).
    max_open_drafts_per_author: WholeNumber = Field(default=100, ge=1, le=1000)
    run_timeout_seconds: float = Field(default=120, gt=0, le=3600, strict=True, allow_inf_nan=False)
    investigator_wait_seconds: float = Field(default=20, ge=0, le=300, strict=True, allow_inf_nan=False)
    tool_source_max_bytes: WholeNumber = Field(default=20_000, ge=100, le=200_000)
    upload_max_bytes: WholeNumber = Field(default=5_000_000, ge=1, le=20_000_000)
    sandbox_cpu_seconds: WholeNumber = Field(default=5, ge=1, le=60)
    sandbox_memory_mb: WholeNumber = Field(default=512, ge=64, le=2048)
    sandbox_fsize_mb: WholeNumber = Field(default=16, ge=1, le=256)
    sandbox_nofile: WholeNumber = Field(default=64, ge=16, le=1024)
    sandbox_wall_seconds: float = Field(default=10, gt=0, le=120, strict=True, allow_inf_nan=False)
    # Object-file attachments may also come from this storage prefix (a shared library); "" = none.
    shared_object_prefix: str = Field(default="", max_length=200)

    @field_validator("shared_object_prefix")
    @classmethod
    def _shared_prefix_is_a_plain_folder(cls, value: str) -> str:
        value = value.strip().rstrip("/")  # a trailing slash is harmless; a leading one is absolute
        if not value:
            return ""
        parts = value.split("/")
        if any(p in ("", ".", "..") for p in parts) or "\\" in value or any(ord(c) < 32 for c in value):
            raise ValueError("must be a plain relative folder such as 'library/manuals'")
        if parts[0] == SESSION_OBJECT_ROOT:
            raise ValueError(f"must not expose the per-session uploads under '{SESSION_OBJECT_ROOT}/'")
        return value


PATCHABLE = set(AssistantConfig.model_fields)


def get_config() -> AssistantConfig:

    data: dict[str, Any] = dict(getattr(settings, "ARIA_ASSISTANT", {}) or {})
    row = RuntimeConfig.objects.filter(pk=1).first()
    if row is not None:
        data.update(row.data)
    try:
        return AssistantConfig.model_validate(data)
    except ValidationError as exc:
        # A stored value past a (newer) hard maximum falls back to its default rather than
        # taking every request down; the defaults are the safe side of every bound.
        bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
        logger.warning("assistant config: ignoring invalid stored setting(s) %s", sorted(bad))
        return AssistantConfig.model_validate({k: v for k, v in data.items() if k not in bad})
