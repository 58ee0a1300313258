"""GET/PATCH /assistant/config: engines, bounds, policies and readiness; PATCH rebuilds engines."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import ConfigDict, create_model

from assistant.conf import AssistantConfig
from assistant.services.config import config_snapshot, config_update
from core.access import OPERATOR, require_scopes

router = Router(tags=["assistant"])


# Every setting optional; unknown keys are a 422. Values are validated again on the merged config.
class _PatchBase(Schema):
    model_config = ConfigDict(extra="forbid")


ConfigPatch = create_model(
    "ConfigPatch",
    __base__=_PatchBase,
    **{name: (field.annotation | None, None) for name, field in AssistantConfig.model_fields.items()},
)


@router.get("/config")
def get_config_route(request: HttpRequest) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    return config_snapshot()


@router.patch("/config")
def patch_config(request: HttpRequest, payload: ConfigPatch) -> dict[str, Any]:  # type: ignore[valid-type]
    require_scopes(request.user, OPERATOR)
    config_update(actor=request.user, changes=payload.model_dump(exclude_unset=True))
    return config_snapshot()
