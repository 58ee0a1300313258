"""The watchdog's share for drafts (assistant.expire_stale_runs): a draft left mid-step —
validating, testing, reviewing or publishing — because the process running the step stopped
(a restart, a killed worker) is moved on once the step is past the longest it can honestly take.

Without it such a draft stayed in that state for good: its author could neither edit, discard
nor re-run it (each is refused while a step runs), and it still counted against their open
drafts. The move is the step's own failure, with the reason recorded (audited, `draft_updated`):
validation_failed, test_failed and review_failed go back to `draft` on the author's next edit;
publish_failed can be retried — unless the publication had committed before the process stopped,
in which case the draft is marked published."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from assistant.choices import DraftStatus
from assistant.conf import AssistantConfig, get_config
from assistant.models import Draft, PublishedArtifact
from assistant.services.drafts import draft_transition
from assistant.validators import MAX_TOOL_TESTS

S = DraftStatus
STEP_FAILURE = {
    S.VALIDATING: S.VALIDATION_FAILED,
    S.TESTING: S.TEST_FAILED,
    S.REVIEWING: S.REVIEW_FAILED,
    S.PUBLISHING: S.PUBLISH_FAILED,
}
GRACE_SECONDS = 120
CASE_OVERHEAD_SECONDS = 5  # starting the sandbox and reading its result, beyond a case's wall timeout
BATCH = 100


def draft_step_deadline(status: str, config: AssistantConfig) -> float:
    """Seconds after entering `status` past which the step cannot still be running."""
    if status == S.TESTING:
        # tool cases run one after another, each bounded by the wall timeout; an MCP server's test by 3x
        per_case = config.sandbox_wall_seconds + CASE_OVERHEAD_SECONDS
        return per_case * max(MAX_TOOL_TESTS, 3) + GRACE_SECONDS
    if status == S.REVIEWING:
        return config.run_timeout_seconds + GRACE_SECONDS
    return GRACE_SECONDS  # validation and publication are database work


def _interrupted(draft: Draft, status: str, deadline: float) -> Draft:
    reason = f"interrupted: still {status} after {deadline:.0f}s; the process running it stopped. Run it again."
    if status == S.PUBLISHING:
        published = PublishedArtifact.objects.filter(
            draft=draft, content_hash=draft.content_hash, created__gte=draft.updated
        ).first()
        if published is not None:  # the go-live committed; only the last move was lost
            return draft_transition(draft=draft, to_status=S.PUBLISHED, actor=None, artifact_id=published.pk)
    details: dict = {"reason": reason}
    if status == S.VALIDATING:
        details["validation_report"] = {"ok": False, "errors": [reason], "type": draft.type}
    elif status == S.TESTING:
        details["test_report"] = {"ok": False, "cases": [], "error": reason}
    return draft_transition(draft=draft, to_status=STEP_FAILURE[status], actor=None, **details)


def drafts_expire_stale() -> int:
    """Move on every draft mid-step past its deadline (a bounded batch per state); the number moved."""
    config, now, moved = get_config(), timezone.now(), 0
    for status in STEP_FAILURE:
        deadline = draft_step_deadline(status, config)
        cutoff = now - timedelta(seconds=deadline)
        stale = Draft.objects.filter(status=status, updated__lt=cutoff).order_by("pk")
        for pk in stale.values_list("pk", flat=True)[:BATCH]:
            with transaction.atomic():
                # Re-read under the lock: a step that finished, or started again, since is left alone.
                draft = Draft.objects.select_for_update().filter(pk=pk, status=status, updated__lt=cutoff).first()
                if draft is not None:
                    _interrupted(draft, status, deadline)
                    moved += 1
    return moved
