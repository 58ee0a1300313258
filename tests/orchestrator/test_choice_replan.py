"""A choice's answer plans the draft again with the model planner OUTSIDE the transaction (issue 11):
the planner runs with nothing locked, then a short transaction locks the plan and the ask, checks
them again and writes. A state change while the planner runs is caught, never written over.

The planner is stubbed at the provider boundary: the offline engine's planner policy (what the model
answers), or on PostgreSQL a local fake Anthropic Messages API whose handler — another thread, another
database connection — probes the plan and ask rows while the planner call is in flight.
"""

import pytest
from django.db import DatabaseError, connection, transaction

from core.agents.engines.fake import load_offline_policies
from core.models import AuditRecord
from orchestrator.coordinator.execute import plan_attach_guidance
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_cancel
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use
from tests.workorders import factories as f

API = "/api/v1/aria"
SIGNALS = "workorders.get_current_signals"


def draft_with_a_choice(client, user) -> tuple[Plan, Interaction]:
    client.force_login(user)
    body = client.post(
        f"{API}/plans", {"goal": "Show the vibration of the pump", "planner": "model"}, content_type="application/json"
    ).json()
    (ask,) = body["interactions"]
    assert ask["options"] == ["P-01", "P-02"]
    return Plan.objects.get(pk=body["id"]), Interaction.objects.get(pk=ask["id"])


def answer(client, ask, choice):
    return client.post(f"{API}/interactions/{ask.pk}/answer", {"choice": choice}, content_type="application/json")


@pytest.fixture
def pumps(db):
    return f.make_cell("P-01"), f.make_cell("P-02")


@pytest.fixture
def planner_calls(monkeypatch):
    """Script the planner model: `calls` counts the planner requests, `during(n)` runs a concurrent change
    when request n arrives; the answer is then the offline planner's own."""
    policies = load_offline_policies()
    offline = policies["planner"]
    state = {"calls": 0, "during": {}}

    def planner(request_state):
        state["calls"] += 1
        if change := state["during"].pop(state["calls"], None):
            change()
        return offline(request_state)

    monkeypatch.setitem(policies, "planner", planner)
    return state


def steps_of(plan):
    return [(s.capability, s.inputs) for s in PlanStep.objects.filter(plan=plan)]


@pytest.mark.django_db
def test_a_draft_cancelled_while_the_model_plans_is_not_written(client, operator, pumps, planner_calls):
    plan, ask = draft_with_a_choice(client, operator)
    planner_calls["during"][1] = lambda: plan_cancel(plan=Plan.objects.get(pk=plan.pk), actor=operator)
    refused = answer(client, ask, "P-02")
    assert refused.status_code == 409 and "cancelled" in refused.json()["detail"]
    assert planner_calls["calls"] == 1
    assert [c for c, _ in steps_of(plan)] == ["workorders.find_cells"]  # the proposal was not written
    left = Interaction.objects.get(pk=ask.pk)  # closed with its plan by the cancel, not answered with the pick
    assert (left.status, left.answered_by, left.answer["decision"]) == ("closed", None, "closed")
    assert Plan.objects.get(pk=plan.pk).constraints == {}
    assert not AuditRecord.objects.filter(action="plan.replanned").exists()


@pytest.mark.django_db
def test_an_ask_answered_while_the_model_plans_is_answered_once(client, operator, pumps, planner_calls):
    p01, _ = pumps
    plan, ask = draft_with_a_choice(client, operator)
    # the same ask answered from another tab while the first answer's planner runs
    planner_calls["during"][1] = lambda: interaction_answer(
        interaction=Interaction.objects.get(pk=ask.pk), actor=operator, choice="P-01"
    )
    refused = answer(client, ask, "P-02")
    assert refused.status_code == 409 and "already answered" in refused.json()["detail"]
    assert steps_of(plan) == [(SIGNALS, {"cell_id": p01.pk})]  # the first answer's plan, not written over
    assert Interaction.objects.get(pk=ask.pk).answer["choice"] == "P-01"
    assert AuditRecord.objects.filter(action="plan.replanned").count() == 1
    assert AuditRecord.objects.filter(action="interaction.approve", target_id=str(ask.pk)).count() == 1


@pytest.mark.django_db
def test_guidance_given_while_the_model_plans_is_planned_with_not_lost(client, operator, pumps, planner_calls):
    _, p02 = pumps
    plan, ask = draft_with_a_choice(client, operator)
    planner_calls["during"][1] = lambda: plan_attach_guidance(
        plan=Plan.objects.get(pk=plan.pk), text="only P-02", actor=operator, constraints={"cells": ["P-02"]}
    )
    done = answer(client, ask, "P-02")
    assert done.status_code == 200, done.content
    assert planner_calls["calls"] == 2  # the first proposal was planned from constraints no longer there
    constraints = Plan.objects.get(pk=plan.pk).constraints
    assert constraints["cells"] == ["P-02"] and constraints["guidance"] == ["only P-02"]
    assert constraints["resolved"] == {"the pump": "P-02"}
    assert steps_of(plan) == [(SIGNALS, {"cell_id": p02.pk})]
    assert AuditRecord.objects.filter(action="plan.replanned").count() == 1


# --- PostgreSQL: nothing is locked while the model call is in flight -----------------------------------


def _probe(plan_id: int, ask_id: int) -> str:
    """From another connection: lock the plan and the ask without waiting, and write the plan."""
    try:
        with transaction.atomic():
            Plan.objects.select_for_update(nowait=True).get(pk=plan_id)
            Interaction.objects.select_for_update(nowait=True).get(pk=ask_id)
            Plan.objects.filter(pk=plan_id).update(done_when="probed while the planner ran")
        return "free"
    except DatabaseError as exc:
        return f"locked: {exc}"
    finally:
        connection.close()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_no_row_is_locked_while_the_planner_model_is_called(client, operator, pumps):
    assert connection.vendor == "postgresql"
    _, p02 = pumps
    plan, ask = draft_with_a_choice(client, operator)
    probes: list[str] = []

    def respond(recorded):  # the provider: runs in the fake server's thread, on its own connection
        probes.append(_probe(plan.pk, ask.pk))
        steps = [{"capability": SIGNALS, "inputs": {"cell_id": p02.pk}}]
        return anthropic_stream([tool_use("toolu_1", "submit_plan", {"steps": steps})], stop_reason="tool_use")

    with (
        AnthropicFakeServer(responder=respond) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        done = answer(client, ask, "P-02")
    assert done.status_code == 200, done.content
    assert probes == ["free"]
    assert len(server.message_bodies()) == 1
    stored = Plan.objects.get(pk=plan.pk)
    assert stored.done_when == "probed while the planner ran"  # the other connection's write stands
    assert steps_of(plan) == [(SIGNALS, {"cell_id": p02.pk})] and stored.planner == "model"
    assert Interaction.objects.get(pk=ask.pk).status == "answered"
