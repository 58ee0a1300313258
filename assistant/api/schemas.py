"""Schemas of the assistant routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, StrictBool

from assistant.api.attachment_rules import ATTACHMENT_KIND_RULES
from assistant.models import Draft
from assistant.models.drafts import DRAFT_NAME_MAX_LENGTH
from assistant.services.publish import PUBLISHABLE, draft_publish_refusals, draft_status_reason, draft_status_reasons
from assistant.validators import DRAFT_NAME
from core.json_types import NOT_BLANK, BodyRowId, not_blank_text

ModeName = Literal["chat", "build", "plan", "coordinate"]
AuthorModeName = Literal["chat", "build", "plan"]  # the one-shot prompt draft runs the authoring agent


class SessionIn(Schema):
    title: str = Field(default="", max_length=200)
    mode: ModeName = "chat"


class SessionPatch(Schema):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 422, not a silent no-op
    title: str | None = Field(default=None, max_length=200)
    archived: StrictBool | None = None  # "no" would otherwise archive (a non-empty string is truthy)
    mode: ModeName | None = None
    tool_approval: Literal["ask", "allow"] | None = None  # build mode's mutating tools: ask (default) or allow


class SessionSkillIn(Schema):
    model_config = ConfigDict(extra="forbid")
    state: Literal["auto", "pinned", "disabled"]


class SessionSkillOut(Schema):
    name: str
    description: str
    runtime_mode: str  # the skill's own setting (an approver's): auto | pinned | disabled
    triggers: list[Any]
    version: int
    session_state: str  # this session's choice: auto | pinned | disabled


class SessionOut(Schema):
    id: int
    owner_id: int
    title: str
    mode: str
    tool_approval: str = "ask"
    archived: bool
    correlation_id: str
    created: datetime
    updated: datetime


class MessageOut(Schema):
    id: int
    role: str
    content: str
    metadata: dict[str, Any]
    created: datetime


class SessionTurnIn(Schema):
    content: str = not_blank_text(20_000)
    mode: ModeName | None = None


class DraftOut(Schema):
    id: int
    owner_id: int
    owner_username: str  # the author as people know them; the list selectors join the owner (no query per draft)
    session_id: int | None
    type: str
    name: str
    spec: dict[str, Any]
    status: str
    validation_report: dict[str, Any]
    test_report: dict[str, Any]
    content_hash: str
    version: int
    created: datetime
    updated: datetime
    status_reason: str = ""  # why a failed draft failed (the reason its last move recorded)
    # For the requester: may they publish it now (approved / publish_failed), and if not, why and who
    # may: draft_publish's own checks, so the drawer offers Publish exactly when the service allows it.
    can_publish: bool = False
    publish_refusal: str = ""

    @staticmethod
    def resolve_owner_username(obj: Any) -> str:
        return obj.owner.get_username()

    @staticmethod
    def resolve_status_reason(obj: Any) -> str:
        listed = getattr(obj, "listed_status_reason", None)  # a listing read them all at once: with_status_reasons
        if listed is not None:
            return listed
        return draft_status_reason(obj) if hasattr(obj, "reviews") else ""

    @staticmethod
    def resolve_publish_refusal(obj: Any, context: Any) -> str:
        return _publish_refusal(obj, context)

    @staticmethod
    def resolve_can_publish(obj: Any, context: Any) -> bool:
        return (
            obj.status in PUBLISHABLE
            and isinstance(obj, Draft)
            and _requester(context) is not None
            and (not _publish_refusal(obj, context))
        )


def _requester(context: Any) -> Any:
    request = (context or {}).get("request")
    return getattr(request, "user", None)


def _publish_refusal(draft: Any, context: Any) -> str:
    """Why the requester may not publish `draft` ("" when they may or it is not publishable); a
    listing read them all at once (with_status_reasons), one draft's route reads its own, once."""
    if not isinstance(draft, Draft):
        return ""
    if getattr(draft, "listed_publish_refusal", None) is None:
        draft.listed_publish_refusal = draft_publish_refusals([draft], _requester(context)).get(draft.pk, "")
    return draft.listed_publish_refusal


def with_status_reasons(drafts: list[Draft], viewer: Any = None) -> list[Draft]:
    """A listing's drafts for DraftOut, the failed ones' status_reason read together in one query
    (one draft's route reads its own: the same reason, by draft_status_reason), and when `viewer`
    is given, why they may not publish each, together (draft_publish_refusals)."""
    reasons = draft_status_reasons(drafts)
    refusals = draft_publish_refusals(drafts, viewer) if viewer is not None else {}
    for draft in drafts:
        draft.listed_status_reason = reasons.get(draft.pk, "")
        if viewer is not None:
            draft.listed_publish_refusal = refusals.get(draft.pk, "")
    return drafts


class TurnOut(Schema):
    message: MessageOut
    run_id: int
    reply: str
    questions: list[str]
    drafts: list[DraftOut]
    delta_errors: list[str]
    plan_card: dict[str, Any] | None
    tool_calls: list[dict[str, Any]]
    coordinator: dict[str, Any] | None = None
    pending_calls: list[dict[str, Any]] = Field(default_factory=list)  # held for the user's Confirm


class PendingCallOut(Schema):
    id: int
    session_id: int
    run_id: int | None
    tool: str
    capability: str
    tier: str
    description: str
    args: dict[str, Any]
    changes: list[dict[str, Any]]
    status: str
    result_summary: str
    error: str
    decided_at: datetime | None
    created: datetime


class ToolCallConfirmIn(Schema):
    model_config = ConfigDict(extra="forbid")  # arguments sent back by a client are refused, never used


class ToolCallRejectIn(Schema):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(default="", max_length=500)


class PromptDraftIn(Schema):
    content: str = Field(min_length=1, max_length=20_000)
    mode: AuthorModeName = "build"


class RunOut(Schema):
    id: int
    session_id: int | None
    engine: str
    model: str
    mode: str
    input_summary: str
    output_summary: str
    trace_id: str
    error: str
    duration_ms: int
    tokens: int
    status: str
    selected_skills: list[Any]
    agent_run_id: int | None
    created: datetime
    finished: datetime | None


class AttachmentIn(Schema):
    # What each kind needs (assistant.services.attachments, assistant.library), stated per kind
    model_config = ConfigDict(json_schema_extra={"allOf": ATTACHMENT_KIND_RULES})
    kind: Literal["text_snippet", "library_resource", "object_file"]
    name: str = Field(default="", max_length=200)
    text: str = Field(default="", max_length=2_000_000)
    resource_type: str = ""
    ref: str = ""
    bucket: str = "default"
    key: str = ""


class AttachmentOut(Schema):
    id: int
    session_id: int
    kind: str
    name: str
    bucket: str
    key: str
    size: int
    truncated: bool
    content_chars: int
    created: datetime

    @staticmethod
    def resolve_content_chars(obj) -> int:
        return len(obj.content_text)


class DraftIn(Schema):
    type: Literal["tool", "skill", "prompt", "workflow", "mcp_server"]
    name: str = Field(min_length=1, max_length=DRAFT_NAME_MAX_LENGTH, pattern=DRAFT_NAME.pattern)  # a slug: no "../x"
    spec: dict[str, Any] = Field(default_factory=dict)
    session_id: BodyRowId | None = None  # 7 or 7.0; JSON true/false or "7" is not a session id


class DraftPatch(Schema):
    model_config = ConfigDict(extra="forbid")  # {"status": "published"} is refused, not ignored
    name: str | None = Field(default=None, max_length=DRAFT_NAME_MAX_LENGTH, pattern=DRAFT_NAME.pattern)
    spec: dict[str, Any] | None = None


class DecisionIn(Schema):
    reason: str = Field(default="", max_length=4000)


class RejectIn(Schema):
    # A rejection says why (assistant.services.drafts.draft_reject refuses a blank reason with a
    # message the drawer shows): required, and the schema says "not blank" so a client checking it knows.
    reason: str = Field(max_length=4000, json_schema_extra={"minLength": 1, "pattern": NOT_BLANK})


class ApproveIn(DecisionIn):
    # MCP server drafts: the tier the approver gives each tool (left out: its declared tier, else mutate)
    tool_tiers: dict[str, Literal["read", "safe", "mutate", "gated"]] | None = None
    # The content_hash of the candidate the approver read: a newer candidate is a 409, not approved unseen
    candidate_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class ReviewOut(Schema):
    id: int
    kind: str
    reviewer_id: int | None
    reviewer_username: str | None  # who decided, as people know them (None: the user was deleted)
    decision: str
    confidence: float | None
    policy_version: str
    candidate_hash: str
    candidate_version: int
    reason: str
    cleared: bool
    tool_tiers: dict[str, str] = Field(default_factory=dict)
    created: datetime
    expires_at: datetime | None

    @staticmethod
    def resolve_reviewer_username(obj: Any) -> str | None:
        return obj.reviewer.get_username() if obj.reviewer_id else None
