"""Scan groups that read only their rows: each signal carries its cell's scan bucket (cell id spread
over 1024 buckets) as a generated column, and the latest-value row a copy of it, both indexed, so a group's scan
filters both tables on an index instead of computing `cell_id mod N` over every row.

The copy on the latest-value row is not written by ingest (its INSERT leaves it NULL, its UPDATE
does not touch it, so updates stay heap-only): a group scan stamps its unstamped rows, and the
trigger below follows a signal moved to another cell. This migration stamps the existing rows."""

import django.db.models.expressions
from django.db import migrations, models

_PG_INSTALL = """
CREATE OR REPLACE FUNCTION sentinel_signal_scan_bucket_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sentinel_signallatest SET scan_bucket = NEW.scan_bucket WHERE signal_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER signal_scan_bucket_follow AFTER UPDATE OF cell_id ON sentinel_signaldefinition
    FOR EACH ROW WHEN (OLD.cell_id IS DISTINCT FROM NEW.cell_id)
    EXECUTE FUNCTION sentinel_signal_scan_bucket_follow();
"""
_PG_REMOVE = """
DROP TRIGGER IF EXISTS signal_scan_bucket_follow ON sentinel_signaldefinition;
DROP FUNCTION IF EXISTS sentinel_signal_scan_bucket_follow();
"""
_SQLITE_INSTALL = """
CREATE TRIGGER signal_scan_bucket_follow AFTER UPDATE OF cell_id ON sentinel_signaldefinition
    FOR EACH ROW WHEN OLD.cell_id IS NOT NEW.cell_id
BEGIN
    UPDATE sentinel_signallatest SET scan_bucket = NEW.scan_bucket WHERE signal_id = NEW.id;
END
"""
_SQLITE_REMOVE = "DROP TRIGGER IF EXISTS signal_scan_bucket_follow"
_STAMP = (
    "UPDATE sentinel_signallatest SET scan_bucket = (SELECT d.scan_bucket FROM sentinel_signaldefinition d "
    "WHERE d.id = sentinel_signallatest.signal_id)"
)


def follow_install(apps, schema_editor):
    postgresql = schema_editor.connection.vendor == "postgresql"
    schema_editor.execute(_PG_INSTALL if postgresql else _SQLITE_INSTALL)
    schema_editor.execute(_STAMP)


def follow_remove(apps, schema_editor):
    schema_editor.execute(_PG_REMOVE if schema_editor.connection.vendor == "postgresql" else _SQLITE_REMOVE)


class Migration(migrations.Migration):
    dependencies = [
        ("sentinel", "0006_history_partitions_rollups"),
    ]

    operations = [
        migrations.AddField(
            model_name="signaldefinition",
            name="scan_bucket",
            field=models.GeneratedField(
                db_index=True,
                db_persist=True,
                expression=django.db.models.expressions.CombinedExpression(
                    django.db.models.expressions.CombinedExpression(
                        django.db.models.expressions.CombinedExpression(models.F("cell_id"), "%%", models.Value(1024)),
                        "*",
                        models.Value(633),
                    ),
                    "%%",
                    models.Value(1024),
                ),
                help_text="The cell's scan bucket (from its cell id), kept by the database.",
                output_field=models.PositiveSmallIntegerField(),
            ),
        ),
        migrations.AddField(
            model_name="signallatest",
            name="scan_bucket",
            field=models.PositiveSmallIntegerField(blank=True, db_index=True, editable=False, null=True),
        ),
        migrations.RunPython(follow_install, follow_remove),
    ]
