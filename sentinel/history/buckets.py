"""Time buckets shared by the rollup and the trend reads: aligned starts, runs of buckets merged
into ranges, and the SQL that truncates a time column to its minute or hour on each database."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.db import connection

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Range = tuple[datetime, datetime]


def aligned(moment: datetime, width: timedelta) -> datetime:
    """The start of the width-aligned bucket (since 1970-01-01 UTC) holding `moment`."""
    return EPOCH + ((moment - EPOCH) // width) * width


def ranges_of(starts: Iterable[datetime], width: timedelta) -> list[Range]:
    """Bucket starts merged into [start, end) ranges (adjacent buckets become one range)."""
    merged: list[Range] = []
    for start in sorted(set(starts)):
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], start + width)
        else:
            merged.append((start, start + width))
    return merged


def truncate_sql(column: str, width: timedelta) -> str:
    """SQL for `column` truncated to its minute or hour (UTC), as stored in a rollup's bucket."""
    unit = "minute" if width == MINUTE else "hour"
    if connection.vendor == "postgresql":
        return f"date_trunc('{unit}', {column}, 'UTC')"
    # SQLite stores 'YYYY-MM-DD HH:MM:SS[.ffffff]' in UTC: the minute and hour are prefixes.
    return f"substr({column}, 1, 16) || ':00'" if unit == "minute" else f"substr({column}, 1, 13) || ':00:00'"


def ranges_sql(column: str, ranges: list[Range]) -> tuple[str, list[object]]:
    """`(column >= a AND column < b) OR …` with its parameters, adapted for the database."""
    adapt = connection.ops.adapt_datetimefield_value
    clauses: list[str] = []
    params: list[object] = []
    for start, end in ranges:
        clauses.append(f"({column} >= %s AND {column} < %s)")
        params += [adapt(start), adapt(end)]
    return " OR ".join(clauses) or "FALSE", params
