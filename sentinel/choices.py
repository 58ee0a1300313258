from django.db import models


class Severity(models.TextChoices):
    ALERT = "alert", "Alert"
    TRIP = "trip", "Trip"


class Direction(models.TextChoices):
    HIGH = "high", "Too high"
    LOW = "low", "Too low"


class AlarmState(models.TextChoices):
    PENDING = "pending", "Pending (on-delay)"
    ACTIVE_UNACK = "active_unack", "Active, unacknowledged"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    SHELVED = "shelved", "Shelved"
    OUT_OF_SERVICE = "out_of_service", "Out of service"
    CLEARED = "cleared", "Cleared"


# States in which the alarm is still "the" alarm of its signal (one per signal, enforced in the DB).
OPEN_ALARM_STATES = (
    AlarmState.PENDING,
    AlarmState.ACTIVE_UNACK,
    AlarmState.ACKNOWLEDGED,
    AlarmState.SHELVED,
    AlarmState.OUT_OF_SERVICE,
)
