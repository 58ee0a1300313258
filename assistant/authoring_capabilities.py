"""Write access to authoring drafts for other agents (the orchestrator's authoring specialist).

`assistant.create_draft` creates a draft owned by the caller (a plan step's caller is the plan
owner) through the same service the workbench uses: audited, `draft_updated` published. It only
ever creates a candidate in status `draft`; validation, tests, review, approval and publication
stay the workbench's, with their separation of duties.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assistant.choices import DraftType
from assistant.models.drafts import DRAFT_NAME_MAX_LENGTH
from assistant.services.drafts import draft_create
from assistant.validators import DRAFT_NAME
from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from core.errors import InvalidInput


class CreateDraftInput(BaseModel):
    type: str = Field(description=f"One of {', '.join(DraftType.values)}.")
    name: str = Field(
        min_length=1,
        max_length=DRAFT_NAME_MAX_LENGTH,
        pattern=DRAFT_NAME.pattern,
        description="A slug: letters, digits, _ or -.",
    )
    spec: dict[str, Any] = Field(default_factory=dict, description="The draft's spec (shape depends on its type).")


@capability(
    "assistant.create_draft",
    description="Create an authoring draft (tool, skill, prompt, workflow, MCP server) owned by the caller. "
    "It stays a draft: validation, review and publication are separate, human-approved steps.",
    input=CreateDraftInput,
    tier=Tier.MUTATE,
    scopes=(OPERATOR,),
)
def create_draft(ctx: CapabilityContext, params: CreateDraftInput) -> dict[str, Any]:
    if ctx.user is None or not ctx.user.is_authenticated:
        raise InvalidInput("A draft needs an owner.", field="owner")
    draft = draft_create(owner=ctx.user, type=params.type, name=params.name, spec=params.spec)
    return {
        "draft_id": draft.pk,
        "type": draft.type,
        "name": draft.name,
        "status": draft.status,
        "summary": f"Draft {draft.pk}: {draft.type} {draft.name!r} ({draft.status}), owned by {draft.owner.get_username()}",
    }
