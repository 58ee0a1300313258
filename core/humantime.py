"""Times in text a person reads that ARIA's own code writes: sentences the coordinator says about
what it did, the offline engine's answers and the handover lines it drafts.

The rule, where a time is written:
- for a model (tool results, agent context, prompt blocks, task messages): ISO 8601 with its offset,
  e.g. "2026-12-07T16:42:02.289+00:00": exact and machine-readable, what a model can pass back to
  a tool. A model quoting it in an answer is its own wording, not reformatted;
- for a person, in text the server writes: `human_time`, "2026-12-07 16:42 UTC": to the minute
  (like the pages' Aria.fmtDateTime), in the plant's time zone (settings.TIME_ZONE) and naming
  it, since the server does not know the reader's zone;
- on a page: the browser formats it (static/aria/lib.js, the viewer's locale and zone); a
  server-rendered page uses the date filter with the zone, "Y-m-d H:i T".
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

UNRECORDED = "an unrecorded time"


def human_time(value: datetime | str | None) -> str:
    """An instant (a datetime or its ISO text) as people read one: "2026-12-07 16:42 UTC" in the
    plant's zone. A naive time is written as given, without a zone; text that is not a time is
    returned as it is, as is one the plant's zone cannot reach (past the calendar's edge, e.g.
    9999-12-31T23:59-12:00); a missing one reads "an unrecorded time"."""
    if value is None or value == "":
        return UNRECORDED
    moment = value
    if not isinstance(moment, datetime):
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            return str(value)
    if timezone.is_naive(moment):
        return moment.strftime("%Y-%m-%d %H:%M")
    try:
        local = timezone.localtime(moment)
    except OverflowError:
        return str(value)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"
