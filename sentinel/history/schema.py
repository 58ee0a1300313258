"""DDL shared by the migration and the maintenance code: the dirty-minute triggers on the samples
table and the conversion of a table into a range-partitioned one (PostgreSQL only).

The triggers mark, in the writer's own transaction, every minute whose samples were inserted or
updated. PostgreSQL: one statement-level trigger with a transition table (a handful of rows per
ingest batch, whatever its size). SQLite: a row trigger that inserts the minute once."""

from __future__ import annotations

from typing import Any

SAMPLES = "sentinel_signalsample"
DIRTY = "sentinel_historydirtyminute"
ROLLUP_MINUTE = "sentinel_samplerollupminute"
ROLLUP_HOUR = "sentinel_samplerolluphour"
SIGNALS = "sentinel_signaldefinition"

_PG_TRIGGERS = f"""
CREATE OR REPLACE FUNCTION sentinel_samples_mark_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {DIRTY} (minute) SELECT DISTINCT date_trunc('minute', time, 'UTC') FROM new_rows;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION sentinel_samples_mark_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {DIRTY} (minute)
    SELECT date_trunc('minute', time, 'UTC') FROM new_rows
    UNION SELECT date_trunc('minute', time, 'UTC') FROM old_rows;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER sentinel_samples_dirty_insert AFTER INSERT ON {SAMPLES}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sentinel_samples_mark_inserted();
CREATE OR REPLACE TRIGGER sentinel_samples_dirty_update AFTER UPDATE ON {SAMPLES}
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION sentinel_samples_mark_updated();
"""

# Django stores SQLite datetimes as 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC): the minute is a prefix.
_SQLITE_MINUTE = "substr({row}.time, 1, 16) || ':00'"
_SQLITE_MARK = (
    f"INSERT INTO {DIRTY} (minute) SELECT {{m}} WHERE NOT EXISTS (SELECT 1 FROM {DIRTY} WHERE minute = {{m}});"
)
_SQLITE_TRIGGERS = [
    f"CREATE TRIGGER IF NOT EXISTS sentinel_samples_dirty_insert AFTER INSERT ON {SAMPLES} BEGIN "
    + _SQLITE_MARK.format(m=_SQLITE_MINUTE.format(row="NEW"))
    + " END",
    f"CREATE TRIGGER IF NOT EXISTS sentinel_samples_dirty_update AFTER UPDATE ON {SAMPLES} BEGIN "
    + _SQLITE_MARK.format(m=_SQLITE_MINUTE.format(row="NEW"))
    + " "
    + _SQLITE_MARK.format(m=_SQLITE_MINUTE.format(row="OLD"))
    + " END",
]


def dirty_triggers_install(cursor: Any, vendor: str) -> None:
    """Create (or replace) the triggers that mark changed minutes. Idempotent."""
    if vendor == "postgresql":
        cursor.execute(_PG_TRIGGERS)
    elif vendor == "sqlite":
        for statement in _SQLITE_TRIGGERS:
            cursor.execute(statement)


def partitioned_convert(
    cursor: Any, *, table: str, column: str, key: tuple[str, ...], drop: tuple[str, ...] = ()
) -> str:
    """PostgreSQL: put a table range-partitioned on `column` in place of `table`, with `key` as
    primary key, a foreign key to the signal, a BRIN index on `column` (rows arrive in time order,
    so a few pages of summary serve "all signals over this minute") and a DEFAULT partition for
    rows no range partition holds yet. The old table is renamed `<table>_flat` (minus the `drop`
    columns) and its name returned: the caller creates the range partitions its rows need
    (partitions.partitions_ensure), then `partitioned_fill` moves them over."""
    flat = f"{table}_flat"
    cursor.execute(f"ALTER TABLE {table} RENAME TO {flat}")
    cursor.execute(f"ALTER INDEX IF EXISTS {table}_pkey RENAME TO {flat}_pkey")
    for name in drop:
        cursor.execute(f"ALTER TABLE {flat} DROP COLUMN {name} CASCADE")
    cursor.execute(f"CREATE TABLE {table} (LIKE {flat} INCLUDING DEFAULTS) PARTITION BY RANGE ({column})")
    cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY ({', '.join(key)})")
    cursor.execute(
        f"ALTER TABLE {table} ADD CONSTRAINT {table}_signal_fk FOREIGN KEY (signal_id) "
        f"REFERENCES {SIGNALS} (id) DEFERRABLE INITIALLY DEFERRED"
    )
    cursor.execute(f"CREATE INDEX {table}_{column}_brin ON {table} USING brin ({column})")
    cursor.execute(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")
    return flat


def partitioned_fill(cursor: Any, *, table: str, flat: str) -> None:
    cursor.execute(f"INSERT INTO {table} SELECT * FROM {flat}")
    cursor.execute(f"DROP TABLE {flat}")
