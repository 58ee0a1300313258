"""PATCH /plans/{id} with an autonomy change and a cancel is one move: both or neither.

The walkthrough's defect: the autonomy change and the cancel were saved in two transactions, so a
plan the executor finished in between kept the new autonomy while the request got a 409 for the
cancel. Now the PATCH locks the plan first and makes both changes in one transaction: the executor
finishing the plan waits for it (and is refused: the plan is cancelled), or finishes first (and the
PATCH is a 409 that changed nothing).
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.db.models.signals import post_save

from core.errors import Conflict
from core.models import AuditRecord
from orchestrator.choices import PlanStatus
from orchestrator.models import Plan
from orchestrator.services.plans import plan_transition
from tests.conftest import wait_until
from tests.orchestrator.conftest import build_plan

API = "/api/v1/aria"
READ = {"capability": "otest.read_value", "inputs": {"key": "k"}}


def _patch(client, plan: Plan):
    return client.patch(
        f"{API}/plans/{plan.pk}", {"autonomy": "auto", "status": "cancelled"}, content_type="application/json"
    )


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_the_executor_finishing_the_plan_mid_patch_waits_and_the_patch_is_whole(client, operator):
    """The executor completes the plan right after the PATCH wrote its autonomy change (its audit
    record): it must wait for the PATCH's transaction, never slip in between the two changes."""
    assert connection.vendor == "postgresql"
    plan = build_plan(operator, [READ], autonomy="ask_all", status=PlanStatus.RUNNING)
    finisher: dict = {}

    def finish() -> None:  # what the executor does when the plan's last step is done
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                finisher["pid"] = cursor.fetchone()[0]
            plan_transition(plan=Plan.objects.get(pk=plan.pk), to_status=PlanStatus.COMPLETED, actor=None)
            finisher["outcome"] = "completed"
        except Conflict as exc:
            finisher["outcome"] = exc.message
        finally:
            connection.close()

    thread = threading.Thread(target=finish)

    def blocked() -> bool:  # the finisher waits on a lock the PATCH holds
        if "pid" not in finisher:
            return False
        with connection.cursor() as cursor:
            cursor.execute("SELECT cardinality(pg_blocking_pids(%s))", [finisher["pid"]])
            return cursor.fetchone()[0] > 0

    def autonomy_written(sender, instance: AuditRecord, created: bool, **kwargs) -> None:
        if created and instance.action == "plan.autonomy" and not finisher.get("started"):
            finisher["started"] = True
            thread.start()  # the executor finishes the plan now, between the autonomy change and the cancel
            wait_until(lambda: "outcome" in finisher or blocked())

    client.force_login(operator)
    post_save.connect(autonomy_written, sender=AuditRecord, dispatch_uid="test_plan_patch_race")
    try:
        response = _patch(client, plan)
    finally:
        post_save.disconnect(sender=AuditRecord, dispatch_uid="test_plan_patch_race")
    thread.join(timeout=30)
    assert not thread.is_alive()

    plan.refresh_from_db()
    assert response.status_code == 200, response.content
    assert (plan.status, plan.autonomy) == (PlanStatus.CANCELLED, "auto")
    assert finisher["outcome"] == f"Plan {plan.pk} is cancelled; it cannot become completed."
    actions = list(
        AuditRecord.objects.filter(target_type="plan", target_id=str(plan.pk)).values_list("action", flat=True)
    )
    assert actions == ["plan.autonomy", "plan.cancelled"]


@pytest.mark.django_db
def test_a_refused_cancel_takes_the_autonomy_change_back(client, operator):
    """A PATCH whose cancel is refused (the plan finished first) answers 409 and changes nothing."""
    plan = build_plan(operator, [READ], autonomy="ask_all", status=PlanStatus.COMPLETED)
    client.force_login(operator)
    response = _patch(client, plan)
    assert response.status_code == 409
    plan.refresh_from_db()
    assert (plan.status, plan.autonomy) == (PlanStatus.COMPLETED, "ask_all")
    assert not AuditRecord.objects.filter(target_type="plan", target_id=str(plan.pk)).exists()


@pytest.mark.django_db
def test_autonomy_and_cancel_together_on_a_running_plan(client, operator):
    plan = build_plan(operator, [READ], autonomy="ask_all", status=PlanStatus.RUNNING)
    client.force_login(operator)
    response = _patch(client, plan)
    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["autonomy"]) == ("cancelled", "auto")
