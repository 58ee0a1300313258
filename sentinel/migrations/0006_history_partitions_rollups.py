"""History at plant scale: samples keyed by (signal, time) without a surrogate id, range-partitioned
by time on PostgreSQL; 1-minute and 1-hour rollup tables (partitioned the same way); the
dirty-minute log and the triggers that fill it. SQLite keeps plain tables (embedded mode).

Django cannot migrate a table to a composite primary key, so the state change (id removed, the
(signal, time) key added) is declared with SeparateDatabaseAndState and the tables are rebuilt by
vendor-specific SQL below."""

import django.db.models.deletion
from django.db import migrations, models

from sentinel.history.schema import (
    DIRTY,
    ROLLUP_HOUR,
    ROLLUP_MINUTE,
    SAMPLES,
    SIGNALS,
    dirty_triggers_install,
    partitioned_convert,
    partitioned_fill,
)

_SQLITE_SAMPLES = (
    f'CREATE TABLE "{SAMPLES}_new" ("signal_id" bigint NOT NULL REFERENCES "{SIGNALS}" ("id") '
    'DEFERRABLE INITIALLY DEFERRED, "time" datetime NOT NULL, "value" real NOT NULL, '
    'PRIMARY KEY ("signal_id", "time"))'
)


def samples_rebuild(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            from sentinel.history.partitions import partitions_ensure

            cursor.execute(f"ALTER TABLE {SAMPLES} DROP CONSTRAINT IF EXISTS sample_signal_time_unique")
            flats = {
                SAMPLES: partitioned_convert(
                    cursor, table=SAMPLES, column="time", key=("signal_id", "time"), drop=("id",)
                ),
                ROLLUP_MINUTE: partitioned_convert(
                    cursor, table=ROLLUP_MINUTE, column="bucket", key=("signal_id", "bucket")
                ),
                ROLLUP_HOUR: partitioned_convert(
                    cursor, table=ROLLUP_HOUR, column="bucket", key=("signal_id", "bucket")
                ),
            }
            cursor.execute(f"SELECT min(time) FROM {flats[SAMPLES]}")
            oldest = cursor.fetchone()[0]
            partitions_ensure(since=oldest)
            for table, flat in flats.items():
                partitioned_fill(cursor, table=table, flat=flat)
        else:
            cursor.execute(_SQLITE_SAMPLES)
            cursor.execute(f'INSERT INTO "{SAMPLES}_new" SELECT signal_id, time, value FROM "{SAMPLES}"')
            cursor.execute(f'DROP TABLE "{SAMPLES}"')
            cursor.execute(f'ALTER TABLE "{SAMPLES}_new" RENAME TO "{SAMPLES}"')
            # The rollup reads all signals over a minute: an index on time alone serves it.
            cursor.execute(f'CREATE INDEX "{SAMPLES}_time" ON "{SAMPLES}" ("time")')
        # Marks for the samples already stored: the first rollup run rolls them all up.
        if connection.vendor == "postgresql":
            cursor.execute(
                f"INSERT INTO {DIRTY} (minute) SELECT DISTINCT date_trunc('minute', time, 'UTC') FROM {SAMPLES}"
            )
        else:
            cursor.execute(f"INSERT INTO {DIRTY} (minute) SELECT DISTINCT substr(time, 1, 16) || ':00' FROM {SAMPLES}")
        if connection.vendor == "postgresql":
            # The log is drained every run: vacuum it after ~1,000 dead marks, not 20 % of a big table.
            cursor.execute(
                f"ALTER TABLE {DIRTY} SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000)"
            )
        dirty_triggers_install(cursor, connection.vendor)


def samples_restore(apps, schema_editor):
    raise RuntimeError("Going back to the flat samples table is not supported; restore a backup instead.")


class Migration(migrations.Migration):
    dependencies = [
        ("sentinel", "0005_connectors"),
    ]

    operations = [
        migrations.CreateModel(
            name="HistoryDirtyMinute",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("minute", models.DateTimeField(db_index=True)),
            ],
        ),
        migrations.CreateModel(
            name="SampleRollupHour",
            fields=[
                (
                    "signal",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="sentinel.signaldefinition"
                    ),
                ),
                ("bucket", models.DateTimeField(help_text="Start of the bucket (UTC, aligned).")),
                ("min", models.FloatField()),
                ("max", models.FloatField()),
                ("avg", models.FloatField()),
                ("count", models.IntegerField()),
                ("last", models.FloatField(help_text="Value of the bucket's latest sample.")),
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "signal", "bucket", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
            ],
            options={"abstract": False},
        ),
        migrations.CreateModel(
            name="SampleRollupMinute",
            fields=[
                (
                    "signal",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="sentinel.signaldefinition"
                    ),
                ),
                ("bucket", models.DateTimeField(help_text="Start of the bucket (UTC, aligned).")),
                ("min", models.FloatField()),
                ("max", models.FloatField()),
                ("avg", models.FloatField()),
                ("count", models.IntegerField()),
                ("last", models.FloatField(help_text="Value of the bucket's latest sample.")),
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "signal", "bucket", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
            ],
            options={"abstract": False},
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name="signalsample", name="sample_signal_time_unique"),
                migrations.RemoveField(model_name="signalsample", name="id"),
                migrations.AddField(
                    model_name="signalsample",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "signal", "time", blank=True, editable=False, primary_key=True, serialize=False
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(samples_rebuild, samples_restore)],
        ),
    ]
