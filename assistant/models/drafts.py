from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.db import models

from assistant.choices import DraftStatus, DraftType, ReviewDecision, ReviewKind

# The one limit on a draft's name: the column's; the API schemas, the authoring tools and the
# services all read it from here, and a longer name is refused (422 naming the field), never cut.
DRAFT_NAME_MAX_LENGTH = 100


def spec_hash(draft_type: str, name: str, spec: dict) -> str:
    body = json.dumps([draft_type, name, spec], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


class Draft(models.Model):
    """A candidate tool, skill, prompt, workflow or MCP server on its way to publication."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_drafts")
    session = models.ForeignKey(
        "assistant.Session", null=True, blank=True, on_delete=models.SET_NULL, related_name="drafts"
    )
    type = models.CharField(max_length=20, choices=DraftType.choices)
    name = models.CharField(max_length=DRAFT_NAME_MAX_LENGTH)
    spec = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=DraftStatus.choices, default=DraftStatus.DRAFT, db_index=True)
    validation_report = models.JSONField(default=dict, blank=True)
    test_report = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64, blank=True)
    version = models.PositiveIntegerField(default=1)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated", "-id"]

    def __str__(self) -> str:
        return f"{self.type} {self.name} v{self.version} ({self.status})"

    @property
    def author(self):
        return self.owner

    def compute_hash(self) -> str:
        return spec_hash(self.type, self.name, self.spec)


class ReviewQuerySet(models.QuerySet["Review"]):
    def record(self, draft: Draft, *, kind: str, reviewer: Any, decision: str, reason: str, **fields: Any) -> Review:
        """A decision on `draft`'s current candidate (its hash and version, unless `fields` names the
        candidate that was read)."""
        fields.setdefault("candidate_hash", draft.content_hash)
        fields.setdefault("candidate_version", draft.version)
        return self.create(draft=draft, kind=kind, reviewer=reviewer, decision=decision, reason=reason, **fields)


class Review(models.Model):
    """A decision on one exact candidate (hash + version); an agent review expires."""

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="reviews")
    kind = models.CharField(max_length=16, choices=ReviewKind.choices)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision = models.CharField(max_length=16, choices=ReviewDecision.choices)
    confidence = models.FloatField(null=True, blank=True)
    policy_version = models.CharField(max_length=50, blank=True)
    candidate_hash = models.CharField(max_length=64)
    candidate_version = models.PositiveIntegerField()
    reason = models.TextField(blank=True)
    cleared = models.BooleanField(default=False, help_text="Set when the draft was edited after this review.")
    # MCP server drafts: the tier the approver chose per tool ({name: read|safe|mutate|gated}); what
    # the registry gives the tool when this approval is published (a tool left out: mutate).
    tool_tiers = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} review of draft #{self.draft_id}: {self.decision}"
