"""Writing specialists (issue 5, delegate): the work-order generator and the authoring assistant
write — through workorders.update_work_order and assistant.create_draft — so the coordinator
delegates them through orchestrator.run_writing_specialist (tier mutate). Under ask_mutations the
step pauses for the owner's permission before the specialist may write; after the answer the
write is there, read back through the models, and the plan and transcript record it.
"""

import pytest

from core.models import AgentRun, AuditRecord
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction, Plan
from orchestrator.offline.specialists import draft_from
from orchestrator.services.executor import plan_start
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_approve
from tests.orchestrator.test_coordinator_scenarios import SURVEY, allowed, tools, transcript
from tests.workorders.factories import P02_KB

pytestmark = pytest.mark.django_db
WRITER = "orchestrator.run_writing_specialist"


def _analyzed_order():
    from tests.workorders import factories as f

    cell = f.make_cell("P-02")
    f.make_kb(cell)
    wo = f.make_work_order(
        cell, status="analyzed", title="Vibration alarm", rca_summary="Drive-end bearing wear.",
        rca_details={"failure_mode": "bearing_wear"},
    )  # fmt: skip
    return cell, wo


def _delegated_plan(turn) -> Plan:
    assert allowed(turn) == ["delegate"] and turn.status == "ok", turn.answer
    return Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])


def _run_until_asked(plan: Plan, owner, capture) -> Interaction:
    plan_approve(plan=plan, actor=owner)
    with capture(execute=True):
        plan_start(plan=plan, actor=owner)
    plan.refresh_from_db()
    assert plan.status == "paused"
    ask = Interaction.objects.get(plan=plan, status="open")
    assert ask.kind == "permission" and ask.step.capability == WRITER and not ask.required_scope
    assert not ask.coordinator_approvable  # a write is the owner's decision, never the coordinator's
    return ask


def test_write_the_repair_order_pauses_then_writes_the_work_order(operator, django_capture_on_commit_callbacks):
    from workorders.models import WorkOrder

    cell, wo = _analyzed_order()
    turn = coordinator_turn(user=operator, message=f"Write the repair order for work order {wo.pk}")
    assert tools(turn) == [*SURVEY, "get_work_order"] and turn.tool_calls[-1]["args"] == {"work_order_id": wo.pk}
    plan = _delegated_plan(turn)
    (step,) = plan.steps.all()
    assert (step.capability, step.tier, plan.autonomy) == (WRITER, "mutate", "ask_mutations")
    assert step.inputs["profile"] == "work_order_generator"
    assert step.inputs["context"] == {"work_order_id": wo.pk, "cell_id": cell.pk}
    stored = transcript(turn)
    assert stored.references["work_order_ids"] == [wo.pk] and stored.executed[0]["result"]["plan_id"] == plan.pk

    ask = _run_until_asked(plan, operator, django_capture_on_commit_callbacks)
    assert WorkOrder.objects.get(pk=wo.pk).title == "Vibration alarm"  # nothing written before the answer
    assert not AuditRecord.objects.filter(action="work_order.update").exists()

    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=operator, decision="approve")
    plan.refresh_from_db()
    step.refresh_from_db()
    assert plan.status == "completed", step.error
    written = WorkOrder.objects.get(pk=wo.pk)
    mode = P02_KB["failure_modes"]["bearing_wear"]
    procedure = P02_KB["procedures"][mode["procedure"]]
    assert written.title == f"Bearing wear on P-02: {procedure['title']}"
    assert written.recommended_actions == procedure["steps"]
    assert written.required_parts == [{"ref": p["ref"], "qty": p["qty"]} for p in mode["parts"]]
    assert written.required_skills == mode["skills"] and written.estimated_duration_min == mode["duration_min"]
    assert written.status == "analyzed"  # the generator writes the plan fields; it moves no status
    audit = AuditRecord.objects.get(action="work_order.update", target_id=str(wo.pk))
    assert audit.actor_id == operator.pk  # written as the plan owner
    # the plan records what ran, on which model, and the write it made
    result = step.result
    assert result["profile"] == "work_order_generator" and result["use_case"] == "reasoning"
    assert result["tools_used"] == ["get_work_order", "get_equipment_kb", "get_shift_assignments", "update_work_order"]
    assert [w["tool"] for w in result["writes"]] == ["update_work_order"]
    assert result["writes"][0]["args"]["work_order_id"] == wo.pk
    assert result["output"]["work_order_id"] == wo.pk and "recommended_actions" in result["output"]["written"]
    assert AgentRun.objects.get(pk=result["agent_run_id"]).agent == "work_order_writer"
    # asked again later, the coordinator explains the finished plan from state
    after = coordinator_turn(user=operator, message="What happened?")
    assert f"Plan {plan.pk}" in after.answer and "completed" in after.answer


def test_refusing_the_permission_writes_nothing(operator, django_capture_on_commit_callbacks):
    from workorders.models import WorkOrder

    _, wo = _analyzed_order()
    plan = _delegated_plan(coordinator_turn(user=operator, message=f"Write the repair order for WO-{wo.pk}"))
    ask = _run_until_asked(plan, operator, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=operator, decision="reject")
    assert plan.steps.get().status in ("skipped", "failed")
    assert WorkOrder.objects.get(pk=wo.pk).title == "Vibration alarm"
    assert not AgentRun.objects.filter(agent="work_order_writer").exists()


def test_an_unknown_work_order_is_asked_about_not_delegated(operator):
    turn = coordinator_turn(user=operator, message="Write the repair order for work order 999")
    assert tools(turn) == [*SURVEY, "get_work_order"] and allowed(turn) == ["ask_clarification"]
    assert "Work order 999 was not found" in turn.answer and not Plan.objects.exists()


def test_draft_a_skill_creates_a_draft_owned_by_the_plan_owner(operator, django_capture_on_commit_callbacks):
    from assistant.models import Draft

    message = "Draft a skill that checks the seal for drips every shift"
    turn = coordinator_turn(user=operator, message=message)
    assert tools(turn) == SURVEY  # nothing else to inspect: the instruction is the subject
    plan = _delegated_plan(turn)
    (step,) = plan.steps.all()
    assert (step.capability, step.inputs["profile"], step.inputs["task"]) == (WRITER, "authoring_assistant", message)
    transcript(turn)

    ask = _run_until_asked(plan, operator, django_capture_on_commit_callbacks)
    assert not Draft.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=operator, decision="approve")
    plan.refresh_from_db()
    step.refresh_from_db()
    assert plan.status == "completed", step.error
    draft = Draft.objects.get()
    assert draft.owner == operator and draft.type == "skill" and draft.status == "draft"
    assert draft.spec["instructions"] == "Checks the seal for drips every shift."
    assert step.result["output"]["draft_id"] == draft.pk and step.result["tools_used"] == ["create_draft"]
    assert step.result["use_case"] == "chat"
    # created, never validated, approved or published by the specialist
    actions = set(AuditRecord.objects.filter(target_type="assistant.draft").values_list("action", flat=True))
    assert actions == {"draft.create"}


def test_the_draft_author_writes_a_prompt_when_asked_for_one():
    prompt = draft_from("Draft a prompt for the investigator agent: check the bearing temperature first")
    assert prompt["type"] == "prompt" and prompt["spec"]["agent"] == "investigator"
    assert "bearing temperature" in prompt["spec"]["text"]
    skill = draft_from("Draft a skill called seal_watch that flags drips")
    assert skill["type"] == "skill" and skill["name"] == "seal_watch" and "flags drips" in skill["spec"]["instructions"]
