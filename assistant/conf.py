"""The assistant's runtime configuration: defaults, overridden by settings.ARIA_ASSISTANT, then by
the RuntimeConfig row that PATCH /config writes (so a change needs no restart)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field

from assistant.choices import ApprovalPolicy


class AssistantConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engine: str = ""  # author engine; "" = ARIA_ENGINE
    reviewer_engine: str = ""
    model: str = ""  # "" = model_for(use case)
    reasoning: bool = False
    # create_tool|update_tool, create_skill|…, write_prompt, create_workflow|…, create_mcp_server|…
    disabled_intents: list[str] = Field(default_factory=list)
    disabled_domains: list[str] = Field(default_factory=list)
    approval_policy: ApprovalPolicy = ApprovalPolicy.MANUAL
    reviewer_username: str = ""
    release_username: str = ""
    review_policy_version: str = "aria-review-v1"
    review_confidence_floor: float = Field(default=0.8, ge=0, le=1)
    review_ttl_seconds: int = Field(default=3600, ge=1)
    max_turns: int = Field(default=8, ge=1, le=50)
    max_questions_per_turn: int = Field(default=3, ge=0, le=20)
    max_drafts_per_session: int = Field(default=10, ge=1, le=200)
    run_timeout_seconds: float = Field(default=120, gt=0, le=3600)
    investigator_wait_seconds: float = Field(default=20, ge=0, le=300)
    tool_source_max_bytes: int = Field(default=20_000, ge=100)
    upload_max_bytes: int = Field(default=5_000_000, ge=1)
    sandbox_cpu_seconds: int = Field(default=5, ge=1)
    sandbox_memory_mb: int = Field(default=512, ge=64)
    sandbox_fsize_mb: int = Field(default=16, ge=1)
    sandbox_nofile: int = Field(default=64, ge=16)
    sandbox_wall_seconds: float = Field(default=10, gt=0)


PATCHABLE = set(AssistantConfig.model_fields)


def get_config() -> AssistantConfig:
    from assistant.models import RuntimeConfig

    data: dict[str, Any] = dict(getattr(settings, "ARIA_ASSISTANT", {}) or {})
    row = RuntimeConfig.objects.filter(pk=1).first()
    if row is not None:
        data.update(row.data)
    return AssistantConfig.model_validate(data)
