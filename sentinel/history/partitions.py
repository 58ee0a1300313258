"""PostgreSQL range partitions of the history tables: created ahead, dropped when old.

Each history table is partitioned on its time column into aligned ranges (whole multiples of the
table's width since 1970-01-01 UTC) named `<table>_pYYYYMMDD[_HH]`. A DEFAULT partition takes
rows no range holds yet (a very late sample, a backfill); a range created later moves them in.
The bounds are read back from the catalog, so a changed width only shapes new partitions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from sentinel.history.buckets import aligned
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES

_BOUNDS = re.compile(r"FROM \('([^']+)'\) TO \('([^']+)'\)")


@dataclass(frozen=True)
class HistoryTable:
    name: str
    column: str
    width: timedelta


@dataclass(frozen=True)
class Partition:
    name: str
    start: datetime
    end: datetime


def history_tables() -> list[HistoryTable]:
    """Raw samples by ARIA_HISTORY_PARTITION_HOURS; minute rollups by week; hour rollups by 4 weeks."""
    return [
        HistoryTable(SAMPLES, "time", timedelta(hours=settings.ARIA_HISTORY_PARTITION_HOURS)),
        HistoryTable(ROLLUP_MINUTE, "bucket", timedelta(days=7)),
        HistoryTable(ROLLUP_HOUR, "bucket", timedelta(days=28)),
    ]


def partitions_list(table: str) -> list[Partition]:
    """The range partitions of `table`, oldest first (the DEFAULT partition is not listed)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass",
            [table],
        )
        rows = cursor.fetchall()
    found = []
    for name, bound in rows:
        match = _BOUNDS.search(bound or "")
        if match:
            found.append(Partition(name, datetime.fromisoformat(match[1]), datetime.fromisoformat(match[2])))
    return sorted(found, key=lambda p: p.start)


def _name(table: HistoryTable, start: datetime) -> str:
    return f"{table.name}_p{start:%Y%m%d}" + (f"_{start:%H}" if table.width < timedelta(days=1) else "")


def _literal(moment: datetime) -> str:
    return f"'{moment.astimezone(UTC).isoformat()}'"


def _create(cursor: Any, table: HistoryTable, start: datetime, end: datetime) -> str:
    """One range partition; rows of its range already in the DEFAULT partition move into it."""
    name = _name(table, start)
    bounds = f"FOR VALUES FROM ({_literal(start)}) TO ({_literal(end)})"
    default = f"{table.name}_default"
    in_range = f"{table.column} >= {_literal(start)} AND {table.column} < {_literal(end)}"
    cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {default} WHERE {in_range})")
    if cursor.fetchone()[0]:
        cursor.execute(
            f"CREATE TEMP TABLE history_moving ON COMMIT DROP AS "
            f"WITH moved AS (DELETE FROM {default} WHERE {in_range} RETURNING *) SELECT * FROM moved"
        )
        cursor.execute(f"CREATE TABLE {name} PARTITION OF {table.name} {bounds}")
        cursor.execute(f"INSERT INTO {table.name} SELECT * FROM history_moving")
        cursor.execute("DROP TABLE history_moving")
    else:
        cursor.execute(f"CREATE TABLE {name} PARTITION OF {table.name} {bounds}")
    return name


def _gaps(start: datetime, end: datetime, taken: list[Partition]) -> list[tuple[datetime, datetime]]:
    gaps, cursor_at = [], start
    for p in taken:
        if p.end <= cursor_at or p.start >= end:
            continue
        if p.start > cursor_at:
            gaps.append((cursor_at, p.start))
        cursor_at = max(cursor_at, p.end)
    if cursor_at < end:
        gaps.append((cursor_at, end))
    return gaps


def partitions_ensure(*, now: datetime | None = None, since: datetime | None = None) -> list[str]:
    """Create the missing range partitions of every history table from `since` (default: the
    current range) to ARIA_HISTORY_PARTITIONS_AHEAD_DAYS past `now`. Returns the names created.
    No-op off PostgreSQL."""
    if connection.vendor != "postgresql":
        return []
    now = now or timezone.now()
    created = []
    with transaction.atomic(), connection.cursor() as cursor:
        for table in history_tables():
            start = aligned(since or now, table.width)
            end = aligned(now + timedelta(days=settings.ARIA_HISTORY_PARTITIONS_AHEAD_DAYS), table.width) + table.width
            for gap_start, gap_end in _gaps(start, end, partitions_list(table.name)):
                piece = gap_start
                while piece < gap_end:
                    piece_end = min(aligned(piece, table.width) + table.width, gap_end)
                    created.append(_create(cursor, table, piece, piece_end))
                    piece = piece_end
    return created


def partitions_drop_before(table: str, cutoff: datetime) -> list[str]:
    """Drop the partitions of `table` that end at or before `cutoff` (whole partitions only: a
    partition holding any newer row stays), and delete older rows from its DEFAULT partition."""
    column = next(t.column for t in history_tables() if t.name == table)
    dropped = []
    with transaction.atomic(), connection.cursor() as cursor:
        # A caller's own uncommitted rows carry deferred foreign-key checks, which block a DROP.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for partition in partitions_list(table):
            if partition.end <= cutoff:
                cursor.execute(f"DROP TABLE {partition.name}")
                dropped.append(partition.name)
        cursor.execute(f"DELETE FROM {table}_default WHERE {column} < {_literal(cutoff)}")
    return dropped
