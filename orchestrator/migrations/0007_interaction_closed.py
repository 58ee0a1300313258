"""An ask of a plan that ended is `closed` (new status): nobody may answer it or ask for it again.
Before this migration, cancelling (or failing, completing) a plan announced its open asks closed but
left them `open` and their steps `waiting_interaction`; those asks become `closed` with the reason,
and those steps `stopped`, as plan_transition now does (reversible)."""

from django.db import migrations, models
from django.utils import timezone

FINISHED = ("completed", "cancelled", "failed")
ENDED = {"cancelled": "was cancelled", "failed": "failed", "completed": "completed"}
WAITED = " while it waited for an answer."


def close_finished_asks(apps, schema_editor):
    Interaction = apps.get_model("orchestrator", "Interaction")
    PlanStep = apps.get_model("orchestrator", "PlanStep")
    Plan = apps.get_model("orchestrator", "Plan")
    now = timezone.now()
    stale = Interaction.objects.filter(status="open", plan__status__in=FINISHED).values_list("plan_id", flat=True)
    waiting = PlanStep.objects.filter(status="waiting_interaction", plan__status__in=FINISHED).values_list(
        "plan_id", flat=True
    )
    for plan in Plan.objects.filter(pk__in={*stale, *waiting}).only("pk", "status"):
        said = f"plan {plan.pk} {ENDED[plan.status]}"
        Interaction.objects.filter(plan=plan, status="open").update(
            status="closed", answer={"decision": "closed", "reason": f"Closed: {said}."}, answered_at=now
        )
        PlanStep.objects.filter(plan=plan, status="waiting_interaction").update(
            status="stopped", error=f"Stopped: {said}{WAITED}", updated_at=now
        )


def reopen_closed_asks(apps, schema_editor):
    Interaction = apps.get_model("orchestrator", "Interaction")
    PlanStep = apps.get_model("orchestrator", "PlanStep")
    Interaction.objects.filter(status="closed").update(status="open", answer=None, answered_at=None)
    PlanStep.objects.filter(status="stopped", error__startswith="Stopped: plan ", error__endswith=WAITED).update(
        status="waiting_interaction", error=""
    )


class Migration(migrations.Migration):
    dependencies = [
        ("orchestrator", "0006_plan_engine"),
    ]

    operations = [
        migrations.AlterField(
            model_name="interaction",
            name="status",
            field=models.CharField(
                choices=[("open", "Open"), ("answered", "Answered"), ("closed", "Closed with its plan")],
                db_index=True,
                default="open",
                max_length=20,
            ),
        ),
        migrations.RunPython(close_finished_asks, reopen_closed_asks),
    ]
