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

# States an alarm may move to from each state (the one transition map; services enforce it).
# Leaving SHELVED or OUT_OF_SERVICE (unshelve / return to service) restores the state the alarm
# would have now: cleared when the value is back inside its band, else the state it had before
# (or active_unack). That restore is the service's decision, not a move anyone may request: a
# shelved or out-of-service alarm is not annunciated, so it cannot be acknowledged (409).
ALARM_TRANSITIONS: dict[str, frozenset[str]] = {
    AlarmState.PENDING: frozenset({AlarmState.ACTIVE_UNACK, AlarmState.CLEARED}),
    AlarmState.ACTIVE_UNACK: frozenset(
        {AlarmState.ACKNOWLEDGED, AlarmState.SHELVED, AlarmState.OUT_OF_SERVICE, AlarmState.CLEARED}
    ),
    AlarmState.ACKNOWLEDGED: frozenset({AlarmState.SHELVED, AlarmState.OUT_OF_SERVICE, AlarmState.CLEARED}),
    AlarmState.SHELVED: frozenset({AlarmState.ACTIVE_UNACK, AlarmState.OUT_OF_SERVICE, AlarmState.CLEARED}),
    AlarmState.OUT_OF_SERVICE: frozenset({AlarmState.ACTIVE_UNACK, AlarmState.CLEARED}),
    AlarmState.CLEARED: frozenset(),
}

# Open alarms the scan may clear automatically (shelved / out-of-service ones are decided on return).
AUTO_CLEARABLE_STATES = (AlarmState.PENDING, AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED)
# Open alarms that demand the operator's attention (counted as "active" in the control room).
ANNUNCIATED_STATES = (AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED)
