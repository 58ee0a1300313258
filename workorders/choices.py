"""Work-order lifecycle: statuses, the allowed-transition map and named state groups."""

from django.db import models


class WorkOrderStatus(models.TextChoices):
    DETECTED = "detected", "Detected"
    ANALYZED = "analyzed", "Analyzed"
    OPEN = "open", "Open"
    IN_PROGRESS = "in_progress", "In progress"
    ON_HOLD = "on_hold", "On hold"
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
# A technician may start on an analyzed order before the repair order is written; a started
# order may be put on hold (with a reason: parts, permit, production window) and resumed.
# An order an alarm opens starts `detected` (the Investigator's); one a person raises by hand
# starts `open` (RAISED_BY_HAND_STATUS): there is no signal to investigate, and from `open` it is
# assigned, started and completed like any other order — no move is added for it.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    S.DETECTED: (S.ANALYZED, S.CANCELLED),
    S.ANALYZED: (S.OPEN, S.IN_PROGRESS, S.CANCELLED),
    S.OPEN: (S.IN_PROGRESS, S.CANCELLED),
    S.IN_PROGRESS: (S.COMPLETED, S.ON_HOLD, S.OPEN, S.CANCELLED),
    S.ON_HOLD: (S.IN_PROGRESS, S.OPEN, S.CANCELLED),
    S.COMPLETED: (),
    S.CANCELLED: (),
}

RAISED_BY_HAND_STATUS = S.OPEN

CLOSED_STATUSES = (S.COMPLETED, S.CANCELLED)
ACTIVE_STATUSES = (S.DETECTED, S.ANALYZED, S.OPEN, S.IN_PROGRESS, S.ON_HOLD)
# Orders a technician may be assigned to (the RCA is known or the repair is under way).
ASSIGNABLE_STATUSES = (S.ANALYZED, S.OPEN, S.IN_PROGRESS, S.ON_HOLD)

PRIORITY_RANK: dict[str, int] = {Priority.LOW: 0, Priority.MEDIUM: 1, Priority.HIGH: 2, Priority.CRITICAL: 3}


def allowed_transitions(status: str) -> list[str]:
    return [str(s) for s in TRANSITIONS.get(status, ())]


class HoldReason(models.TextChoices):
    WAITING_PARTS = "waiting_parts", "Waiting for parts"
    WAITING_PERMIT = "waiting_permit", "Waiting for a permit to work"
    PRODUCTION_WINDOW = "production_window", "Waiting for a production window"
    WAITING_SKILLS = "waiting_skills", "Waiting for a qualified technician"
    OTHER = "other", "Other (see note)"


class FailureVerification(models.TextChoices):
    """Whose word a failure-history row is: an RCA proposed (by an agent or from a person before
    the repair) or the cause a technician confirmed or corrected when the order closed."""

    PROPOSED = "proposed", "Proposed (not confirmed)"
    CONFIRMED = "confirmed", "Confirmed by a technician"
    CORRECTED = "corrected", "Corrected by a technician"


CONFIRMED_VERIFICATIONS = (FailureVerification.CONFIRMED, FailureVerification.CORRECTED)


class RcaVerdict(models.TextChoices):
    CONFIRMED = "confirmed", "The RCA was right"
    CORRECTED = "corrected", "The RCA was wrong: corrected"


class FailureCodeLevel(models.TextChoices):
    """The CMMS code hierarchy (ISO 14224 style): equipment class → problem (failure mode and
    mechanism) → cause → remedy (maintenance activity)."""

    CLASS = "class", "Failure class"
    PROBLEM = "problem", "Problem"
    CAUSE = "cause", "Cause"
    REMEDY = "remedy", "Remedy"
