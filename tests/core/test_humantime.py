"""Times in text a person reads (core.humantime): what the server writes says a time the plant's
way, "2026-12-07 16:42 UTC", never the raw ISO a tool result carries for the model; and where it
is used: the coordinator's sentence about a published draft, the offline engine's answers (the
stale reading, the already-decided ask) and its handover lines."""

from datetime import UTC, datetime

import pytest

from assistant.offline.asks import read_ask
from assistant.offline.operator_facts import signal_lines
from core.humantime import human_time
from orchestrator.offline.answers import when

ISO = "2026-12-07T16:42:02.289+00:00"


def test_an_instant_reads_to_the_minute_in_the_plants_zone_naming_it(settings):
    assert human_time(ISO) == "2026-12-07 16:42 UTC"
    assert human_time(datetime(2026, 12, 7, 16, 42, 59, tzinfo=UTC)) == "2026-12-07 16:42 UTC"
    settings.TIME_ZONE = "Asia/Kolkata"
    assert human_time(ISO) == "2026-12-07 22:12 IST"
    assert when(ISO) == "2026-12-07 22:12 IST"  # the offline coordinator's answers say it the same way


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, "an unrecorded time"),
        ("", "an unrecorded time"),
        ("2026-12-07T16:42:02", "2026-12-07 16:42"),  # naive: as given, no zone claimed
        ("<b>soon</b>", "<b>soon</b>"),  # not a time: said as it is (the page escapes it)
        ("2026-02-30T10:00:00+00:00", "2026-02-30T10:00:00+00:00"),  # no such day
        ("9999-12-31T23:59:00-12:00", "9999-12-31T23:59:00-12:00"),  # past the calendar in UTC
    ],
)
def test_missing_naive_and_bad_values(value, said):
    assert human_time(value) == said


def test_the_offline_answer_about_a_stale_signal_says_the_time_not_the_iso():
    current = {
        "cell_tag": "P-02",
        "signals": [
            {"key": "vibration_mm_s", "name": "Vibration", "value": 2.0, "unit": "mm/s", "state": "normal",
             "stale": True, "time": ISO, "thresholds": {"alert": 4.5}},
        ],
    }  # fmt: skip
    [line] = signal_lines(current, read_ask("What is the vibration of P-02?"), "en")
    assert "stale, last reading 2026-12-07 16:42 UTC" in line
    assert "T16:42" not in line and "+00:00" not in line
