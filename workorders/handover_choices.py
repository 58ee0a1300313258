"""Logbook and shift-handover vocabularies: the handover lifecycle (TextChoices + transition map),
logbook categories and the media types a text attachment may declare."""

from django.db import models

from core.transitions import StateMachine


class HandoverStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    SIGNED = "signed", "Signed by the outgoing operator"
    ACKNOWLEDGED = "acknowledged", "Acknowledged by the incoming operator"


H = HandoverStatus

# draft → signed → acknowledged. A signed report is never edited again: it is what was handed over.
HANDOVER_TRANSITIONS: dict[str, tuple[str, ...]] = {
    H.DRAFT: (H.SIGNED,),
    H.SIGNED: (H.ACKNOWLEDGED,),
    H.ACKNOWLEDGED: (),
}

# What other operators may read: a draft is its author's until signed.
PUBLISHED_HANDOVER_STATUSES = (H.SIGNED, H.ACKNOWLEDGED)


# The kernel's map check (core.transitions): the 409 names the allowed moves and the current status.
HANDOVER_MACHINE = StateMachine("handover", HANDOVER_TRANSITIONS, request_field="status", sort_allowed=False)


def handover_allowed_transitions(status: str) -> list[str]:
    return HANDOVER_MACHINE.allowed(status)


class LogbookCategory(models.TextChoices):
    OBSERVATION = "observation", "Observation"
    MAINTENANCE = "maintenance", "Maintenance"
    SAFETY = "safety", "Safety"
    PRODUCTION = "production", "Production"
    HANDOVER = "handover", "Handover"


class AttachmentMediaType(models.TextChoices):
    PLAIN = "text/plain", "Plain text"
    MARKDOWN = "text/markdown", "Markdown"
    CSV = "text/csv", "CSV"
    JSON = "application/json", "JSON"
