"""A stopped step is `stopped` (no longer `skipped`): what depends on it never runs. Steps stopped
before this migration were written `skipped` with the error "Stopped by <user>[: reason]"; they
become `stopped`, so the steps built on them are blocked too (reversible)."""

from django.db import migrations, models


def stops_to_stopped(apps, schema_editor):
    PlanStep = apps.get_model("orchestrator", "PlanStep")
    PlanStep.objects.filter(status="skipped", error__startswith="Stopped by ").update(status="stopped")


def stopped_to_skipped(apps, schema_editor):
    PlanStep = apps.get_model("orchestrator", "PlanStep")
    PlanStep.objects.filter(status="stopped").update(status="skipped")


class Migration(migrations.Migration):
    dependencies = [
        ("orchestrator", "0004_plan_derived_from"),
    ]

    operations = [
        migrations.AlterField(
            model_name="planstep",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("running", "Running"),
                    ("waiting_interaction", "Waiting for a human"),
                    ("waiting_job", "Waiting for a job"),
                    ("done", "Done"),
                    ("failed", "Failed"),
                    ("skipped", "Skipped"),
                    ("stopped", "Stopped"),
                ],
                default="pending",
                max_length=24,
            ),
        ),
        migrations.RunPython(stops_to_stopped, stopped_to_skipped),
    ]
