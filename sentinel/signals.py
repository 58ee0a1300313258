"""Django signals sentinel sends. Sentinel never imports their receivers (workorders listens).

All are sent INSIDE the transaction that made the change (not on commit), so a receiver's own
writes (e.g. the work order for a new alarm) commit or roll back atomically with the alarm.
A receiver that raises aborts that transaction: receivers must only write, and defer side
effects (broadcasts, task enqueues) with `transaction.on_commit`.

- `alarm_raised(sender=Alarm, alarm=Alarm)`: a new alarm became active (after any on-delay).
- `alarm_escalated(sender=Alarm, alarm=Alarm, previous_severity=str, previous_threshold_field=str)`:
  an open alarm went from alert to trip; `alarm` already carries the new severity/threshold/value.
- `alarm_cleared(sender=Alarm, alarm=Alarm)`: the alarm returned to normal and is closed.
"""

from django.dispatch import Signal

alarm_raised = Signal()
alarm_escalated = Signal()
alarm_cleared = Signal()
