"""Time windows named in words become [start, end) ranges, deterministically from a given `now`."""

from datetime import UTC, datetime, timedelta

import pytest

from core.timewindows import parse_time_window

NOW = datetime(2026, 11, 19, 15, 30, tzinfo=UTC)  # a Thursday
MIDNIGHT = datetime(2026, 11, 19, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "show P-02 for the last 6 hours",
        "past 6 h",
        "montre P-02 sur les 6 dernières heures",
        "zeige die letzten 6 Stunden",
        "las últimas 6 horas",
        "le ultime 6 ore",
        "as últimas 6 horas",
    ],
)
def test_last_six_hours_in_every_language(text):
    window = parse_time_window(text, now=NOW)
    assert (window.start, window.end, window.minutes, window.label) == (
        NOW - timedelta(hours=6),
        NOW,
        360,
        "last 6 hours",
    )


@pytest.mark.parametrize(
    ("text", "start", "end", "label"),
    [
        ("since Monday", datetime(2026, 11, 16, tzinfo=UTC), NOW, "since monday"),
        ("depuis lundi", datetime(2026, 11, 16, tzinfo=UTC), NOW, "since monday"),
        ("seit Donnerstag", MIDNIGHT, NOW, "since thursday"),  # today's weekday: since this morning
        ("since Friday", datetime(2026, 11, 13, tzinfo=UTC), NOW, "since friday"),
        ("what happened yesterday?", datetime(2026, 11, 18, tzinfo=UTC), MIDNIGHT, "yesterday"),
        ("ayer", datetime(2026, 11, 18, tzinfo=UTC), MIDNIGHT, "yesterday"),
        ("today", MIDNIGHT, NOW, "today"),
        ("worst MTBF this month", datetime(2026, 11, 1, tzinfo=UTC), NOW, "this month"),
        ("le pire MTBF ce mois-ci", datetime(2026, 11, 1, tzinfo=UTC), NOW, "this month"),
        ("last month", datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC), "last month"),
        ("this week", datetime(2026, 11, 16, tzinfo=UTC), NOW, "this week"),
        ("last 30 days", NOW - timedelta(days=30), NOW, "last 30 days"),
        ("over the past week", NOW - timedelta(weeks=1), NOW, "last 1 week"),
    ],
)
def test_calendar_and_relative_windows(text, start, end, label):
    window = parse_time_window(text, now=NOW)
    assert (window.start, window.end, window.label) == (start, end, label)


def test_a_label_parses_back_to_the_same_window():
    for text in ("last 6 hours", "since Monday", "yesterday", "this month", "last month", "today"):
        window = parse_time_window(text, now=NOW)
        assert parse_time_window(window.label, now=NOW) == window


@pytest.mark.parametrize("text", ["Why did P-02 trip?", "", "da P-02", "since forever", "6 pumps last"])
def test_no_window_named_is_none(text):
    assert parse_time_window(text, now=NOW) is None
