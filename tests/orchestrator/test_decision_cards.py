"""Decision cards speak the user's language (issue 11 item 2): who asks, what changes before → after
with units, why, the signal's evidence, and what approve/reject do — for the approver's ask."""

from __future__ import annotations

import pytest
from django.utils import timezone

from core.access import APPROVER, OPERATOR
from orchestrator.models import Interaction, Plan
from orchestrator.services.executor import plan_execute
from orchestrator.services.plans import plan_approve, plan_transition
from sentinel.models import SignalLatest
from sentinel.services.evaluation import signals_evaluate
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer"


@pytest.fixture
def p02(db):
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)  # alert 4.5 mm/s
    f.ramp(vibration, minutes=120, start=2.0, peak=5.0, breach_min=12)
    SignalLatest.objects.update_or_create(signal=vibration, defaults={"time": timezone.now(), "value": 4.7})
    signals_evaluate(signal_ids=[vibration.pk])  # one alert alarm on the vibration signal
    return vibration


def gated_ask(client, owner) -> Interaction:
    client.force_login(owner)
    body = client.post(f"{API}/plans", {"goal": GOAL}, content_type="application/json").json()
    plan = Plan.objects.get(pk=body["id"])
    plan_approve(plan=plan, actor=owner)
    plan_transition(plan=plan, to_status="running", actor=owner)
    plan_execute(plan.pk)
    return Interaction.objects.get(plan=plan, kind="permission")


def test_the_limit_change_card_says_who_what_why_evidence_and_outcomes(client, make_user, p02):
    owner, approver = make_user("owen", OPERATOR), make_user("ava", APPROVER)
    ask = gated_ask(client, owner)
    assert ask.question == "Approve: Change P-02 vibration alert limit 4.5 → 4.8 mm/s?"
    client.force_login(approver)
    (shown,) = client.get(f"{API}/needs-me").json()["interactions"]
    card = shown["evidence"]["card"]
    assert card["asks"] == f"owen asks, for plan #{ask.plan_id}: “{GOAL}”"
    assert card["changes"] == [
        {
            "what": "P-02 vibration alert limit",
            "before": 4.5,
            "after": 4.8,
            "unit": "mm/s",
            "text": "P-02 vibration alert limit 4.5 → 4.8 mm/s",
        }
    ]
    assert card["why"] == "The new bearing runs warmer"
    trend, alarms = card["evidence"]
    assert trend.startswith("Last 24 h: rising, average ") and "peak 5 mm/s" in trend and "now 4.7 mm/s" in trend
    assert alarms == "1 alarm on this signal in the last 7 days (1 still open)."
    assert "applies P-02 vibration alert limit 4.5 → 4.8 mm/s at once" in card["on_approve"]
    assert card["on_reject"] == "The limits stay as they are; this step is skipped and the plan goes on without it."
    assert card["decider"] == "an approver other than the plan owner"


def test_a_plain_permission_card_names_the_work_order_and_the_outcomes(client, make_user):
    owner = make_user("owen", OPERATOR)
    wo = f.make_work_order(f.make_cell("P-02"), status="detected", title="Vibration high on P-02")
    client.force_login(owner)
    body = client.post(
        f"{API}/plans",
        {"goal": "Investigate every detected work order on P-02", "autonomy": "ask_all"},
        content_type="application/json",
    ).json()
    plan = Plan.objects.get(pk=body["id"])
    plan_approve(plan=plan, actor=owner)
    plan_transition(plan=plan, to_status="running", actor=owner)
    plan_execute(plan.pk)
    ask = Interaction.objects.get(plan=plan)
    card = ask.evidence["card"]
    assert ask.question.startswith("Allow step 1: Queue the Investigator for a detected work order")
    assert card["evidence"] == [f"WO-{wo.pk} on P-02 (detected): Vibration high on P-02"]
    assert card["on_approve"] == "Step 1 runs now as owen (safe); the plan goes on."
    assert card["on_reject"] == "Step 1 is skipped; the plan goes on without it."
    assert card["decider"] == "the plan owner"


def test_the_admin_shows_the_same_card_and_a_choices_options(client, make_user, p02):
    owner = make_user("owen", OPERATOR)
    ask = gated_ask(client, owner)
    admin = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get(f"/admin/orchestrator/interaction/{ask.pk}/change/").content.decode()
    assert "What changes: Change P-02 vibration alert limit 4.5 → 4.8 mm/s" in page
    assert "Why: The new bearing runs warmer" in page
    assert "Evidence: 1 alarm on this signal in the last 7 days" in page
    assert "If rejected: The limits stay as they are" in page
    assert "Decided by: someone with the approver scope, not the plan owner." in page
    f.make_cell("P-01")
    client.force_login(owner)
    body = client.post(f"{API}/plans", {"goal": "Show the vibration of the pump"}, content_type="application/json")
    choice = body.json()["interactions"][0]
    client.force_login(admin)
    page = client.get(f"/admin/orchestrator/plan/{choice['plan_id']}/change/").content.decode()
    assert "Options: P-01, P-02" in page
    assert "asked which one was meant" in page  # the planner notes, readable
