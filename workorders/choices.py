"""Work-order lifecycle: statuses, the allowed-transition map and named state groups."""

from django.db import models


class WorkOrderStatus(models.TextChoices):
    DETECTED = "detected", "Detected"
    ANALYZED = "analyzed", "Analyzed"
    OPEN = "open", "Open"
    IN_PROGRESS = "in_progress", "In progress"
    COMPLETED = "completed", "Completed"
    CANCELLED = "cancelled", "Cancelled"


class Priority(models.TextChoices):
    LOW = "low", "Low"
    MEDIUM = "medium", "Medium"
    HIGH = "high", "High"
    CRITICAL = "critical", "Critical"


class Shift(models.TextChoices):
    MORNING = "morning", "Morning (06–14)"
    AFTERNOON = "afternoon", "Afternoon (14–22)"
    NIGHT = "night", "Night (22–06)"


S = WorkOrderStatus

# The one lifecycle map: detected → analyzed → open → in_progress → completed, or cancelled.
# A technician may start on an analyzed order before the repair order is written.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    S.DETECTED: (S.ANALYZED, S.CANCELLED),
    S.ANALYZED: (S.OPEN, S.IN_PROGRESS, S.CANCELLED),
    S.OPEN: (S.IN_PROGRESS, S.CANCELLED),
    S.IN_PROGRESS: (S.COMPLETED, S.OPEN, S.CANCELLED),
    S.COMPLETED: (),
    S.CANCELLED: (),
}

CLOSED_STATUSES = (S.COMPLETED, S.CANCELLED)
ACTIVE_STATUSES = (S.DETECTED, S.ANALYZED, S.OPEN, S.IN_PROGRESS)

PRIORITY_RANK: dict[str, int] = {Priority.LOW: 0, Priority.MEDIUM: 1, Priority.HIGH: 2, Priority.CRITICAL: 3}


def allowed_transitions(status: str) -> list[str]:
    return [str(s) for s in TRANSITIONS.get(status, ())]
