"""Modes, kinds and the draft lifecycle: one status enum plus one transition map."""

from django.db import models


class Mode(models.TextChoices):
    CHAT = "chat", "Chat"
    BUILD = "build", "Build"
    PLAN = "plan", "Plan"
    COORDINATE = "coordinate", "Coordinator"  # a turn of the orchestrator's coordinator, in this session


class ToolApproval(models.TextChoices):
    """A session's setting for the mutating tools of build mode (update a work order, the KB …)."""

    ASK = "ask", "Ask each time"  # the default: a mutating call waits for the user's Confirm
    ALLOW = "allow", "Allow in this session"


class PendingCallStatus(models.TextChoices):
    """A held mutating call: pending → running → done | failed, or pending → rejected | expired."""

    PENDING = "pending", "Waiting for confirmation"
    RUNNING = "running", "Confirmed, running"
    DONE = "done", "Confirmed and ran"
    FAILED = "failed", "Confirmed, failed"
    REJECTED = "rejected", "Declined"
    EXPIRED = "expired", "Expired"


class Role(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SYSTEM = "system", "System"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class AttachmentKind(models.TextChoices):
    OBJECT_FILE = "object_file", "Object file"
    UPLOAD = "upload", "Upload"
    LIBRARY_RESOURCE = "library_resource", "Library resource"
    TEXT_SNIPPET = "text_snippet", "Text snippet"


class SkillRuntimeMode(models.TextChoices):
    AUTO = "auto", "Auto"
    PINNED = "pinned", "Pinned"
    DISABLED = "disabled", "Disabled"


class DraftType(models.TextChoices):
    TOOL = "tool", "Tool"
    SKILL = "skill", "Skill"
    PROMPT = "prompt", "Prompt"
    WORKFLOW = "workflow", "Workflow"
    MCP_SERVER = "mcp_server", "MCP server"


class DraftStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    VALIDATING = "validating", "Validating"
    VALIDATED = "validated", "Validated"
    VALIDATION_FAILED = "validation_failed", "Validation failed"
    TESTING = "testing", "Testing"
    TESTED = "tested", "Tested"
    TEST_FAILED = "test_failed", "Test failed"
    REVIEWING = "reviewing", "Reviewing"
    APPROVED = "approved", "Approved"
    REVIEW_REJECTED = "review_rejected", "Review rejected"
    REVIEW_FAILED = "review_failed", "Review failed"
    PUBLISHING = "publishing", "Publishing"
    PUBLISHED = "published", "Published"
    PUBLISH_FAILED = "publish_failed", "Publish failed"


S = DraftStatus
# Exactly the governed lifecycle; an edit (not listed here) returns any settled draft to `draft`.
DRAFT_TRANSITIONS: dict[str, frozenset[str]] = {
    S.DRAFT: frozenset({S.VALIDATING}),
    S.VALIDATING: frozenset({S.VALIDATED, S.VALIDATION_FAILED}),
    S.VALIDATED: frozenset({S.TESTING}),
    S.VALIDATION_FAILED: frozenset(),
    S.TESTING: frozenset({S.TESTED, S.TEST_FAILED}),
    S.TESTED: frozenset({S.APPROVED, S.REVIEWING}),
    S.TEST_FAILED: frozenset(),
    S.REVIEWING: frozenset({S.APPROVED, S.REVIEW_REJECTED, S.REVIEW_FAILED}),
    S.REVIEW_REJECTED: frozenset(),
    S.REVIEW_FAILED: frozenset(),
    S.APPROVED: frozenset({S.PUBLISHING}),
    S.PUBLISHING: frozenset({S.PUBLISHED, S.PUBLISH_FAILED}),
    S.PUBLISHED: frozenset(),
    S.PUBLISH_FAILED: frozenset({S.PUBLISHING}),  # a retry once the cause is fixed
}
# A service is running on the draft: an edit must wait.
DRAFT_BUSY = frozenset({S.VALIDATING, S.TESTING, S.REVIEWING, S.PUBLISHING})


class ReviewDecision(models.TextChoices):
    APPROVE = "approve", "Approve"
    REJECT = "reject", "Reject"
    FAILED = "failed", "Failed closed"


class ReviewKind(models.TextChoices):
    MANUAL = "manual", "Manual (human approver)"
    AGENT = "agent", "Agent reviewer"


class ApprovalPolicy(models.TextChoices):
    MANUAL = "manual", "Manual"
    AGENT_REVIEW = "agent_review", "Agent review"
    FULL_AUTONOMY = "full_autonomy", "Full autonomy"
