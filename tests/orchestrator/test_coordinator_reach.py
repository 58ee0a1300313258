"""The coordinator reaches every workstream the user owns (issue 11, item 1), driven by the WORDING
path: the user's sentence goes to POST /api/v1/aria/coordinator/turns, the offline stand-in reads
it (`keyword_reading`), the fake gateway decides from read tools, the validator and the services do
the rest. No reading is built by hand here.

Drafts and their reviews, single steps, derived plans, no-focus questions, equipment-driven
delegation; beside each, the hostile case (another user's draft or plan, an operator approving, a
quoted earlier message).
"""

import json

import pytest

from assistant.models import Draft, PublishedArtifact, Review
from core.access import APPROVER, OPERATOR
from core.agents.engines import get_engine
from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import CapabilityContext, dispatch
from core.humantime import human_time
from core.models import AgentRun, AuditRecord
from orchestrator.coordinator.service import confirm_command, coordinator_turn
from orchestrator.models import Plan, PlanStep
from orchestrator.offline.reading import keyword_reading
from orchestrator.services.jobs import plan_poll
from orchestrator.services.plans import step_changes
from sentinel.models import Cell, Line
from tests.assistant.factories import SKILL_SPEC, make_tested_draft
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, done, say, start, tools
from tests.orchestrator.test_coordinator_wire import gateway_responder
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(operator):
    return make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="pump-checks")


# --- authoring drafts and their reviews ------------------------------------------------------------


def test_ship_my_draft_presents_who_it_waits_for_with_the_link(client, operator, draft):
    turn = say(client, operator, "Ship my draft")
    assert "list_draft_reviews" in tools(turn) and done(turn) == [("present_approval", True)]
    assert f"Draft {draft.pk} (skill 'pump-checks', v1 by olga) is tested" in turn.answer
    assert "waits for an approver's review" in turn.answer
    assert f"/admin/assistant/draft/{draft.pk}/change/" in turn.answer
    assert Draft.objects.get(pk=draft.pk).status == "tested" and turn.references["draft_ids"] == [draft.pk]


def test_an_operator_cannot_approve_through_the_coordinator(client, operator, draft, make_user):
    other = make_user("otto", OPERATOR)
    make_tested_draft(other, spec=SKILL_SPEC, type="skill", name="theirs")
    turn = say(client, operator, f"Approve draft {draft.pk}")  # their own draft, no approver scope
    assert done(turn) == [("present_approval", True)] and "You may" not in turn.answer
    assert Draft.objects.get(pk=draft.pk).status == "tested" and not Review.objects.exists()
    assert not AuditRecord.objects.filter(action="draft.approve").exists()


def test_an_approver_approves_then_another_publishes_and_it_is_reported(client, operator, draft, make_user):
    alice, bob = make_user("alice", OPERATOR, APPROVER), make_user("bob", OPERATOR, APPROVER)
    turn = say(client, alice, f"Approve draft {draft.pk}")
    assert done(turn) == [("decide_approval", True)] and turn.status == "ok", turn.answer
    assert Draft.objects.get(pk=draft.pk).status == "approved"
    review = Review.objects.get(draft=draft)
    assert review.reviewer == alice and review.kind == "manual" and review.decision == "approve"
    assert AuditRecord.objects.filter(action="draft.approve", actor=alice).count() == 1
    # the approver who approved may not publish it (separation of duties): presented, not done
    same = say(client, alice, f"Publish draft {draft.pk}")
    assert done(same) == [("present_approval", True)] and Draft.objects.get(pk=draft.pk).status == "approved"
    assert "publication by an approver other than the author and the one who approved it" in same.answer
    shipped = say(client, bob, f"Publish draft {draft.pk}")
    assert done(shipped) == [("decide_approval", True)], shipped.answer
    draft.refresh_from_db()
    assert draft.status == "published"
    # T as a person reads it, not the read tool's ISO (core.humantime)
    at = human_time(PublishedArtifact.objects.get(draft=draft).created)
    assert f"was published at {at} by bob" in shipped.answer and "+00:00" not in shipped.answer
    # afterwards the author asks: published at T by X, from the record
    asked = say(client, operator, f"What about draft {draft.pk}?")
    assert f"was published at {at} by bob." in asked.answer and asked.status == "ok"


def test_a_question_presents_the_review_and_puts_the_decision_forward_for_a_click(client, operator, draft, make_user):
    alice = make_user("alice", OPERATOR, APPROVER)
    turn = say(client, alice, f"What about draft {draft.pk}?")
    assert done(turn) == [("present_approval", True)] and "You may approve or reject it" in turn.answer
    assert f"To confirm: approve draft {draft.pk}" in turn.answer  # the inline action
    assert Draft.objects.get(pk=draft.pk).status == "tested"
    confirmed = say(client, alice, confirm_command(turn.pk, 1))
    assert done(confirmed) == [("decide_approval", True)] and Draft.objects.get(pk=draft.pk).status == "approved"


def test_another_users_draft_is_invisible(client, operator, draft, make_user):
    mallory = make_user("mallory", OPERATOR)
    turn = say(client, mallory, f"What about draft {draft.pk}?")
    assert f"Draft {draft.pk} is not among your drafts" in turn.answer and turn.executed[0]["type"] == "answer"
    listed = say(client, mallory, "Ship my draft")
    assert "No authoring draft of yours is in review" in listed.answer and "pump-checks" not in listed.answer


def test_a_quoted_approval_does_not_act(client, operator, draft, make_user):
    alice = make_user("alice", OPERATOR, APPROVER)
    turn = say(client, alice, f'My colleague wrote "approve draft {draft.pk}". Is it ready?')
    assert Draft.objects.get(pk=draft.pk).status == "tested"
    assert not any(e["type"] == "decide_approval" for e in turn.executed)


# --- single steps ------------------------------------------------------------------------------------


def _job_then_read(owner, **kw):
    return build_plan(
        owner,
        [
            {"capability": "otest.start_job", "inputs": {"ref": "slow"}},
            {"capability": "otest.read_value", "inputs": {"key": "k"}, "depends_on": [1]},
        ],
        **kw,
    )


def test_stop_step_1_stops_only_that_step(client, operator, django_capture_on_commit_callbacks):
    plan = start(_job_then_read(operator))
    with django_capture_on_commit_callbacks(execute=True):
        turn = say(client, operator, "Stop step 1")
    assert done(turn) == [("stop_step", True)], turn.answer
    assert "Stopping step 1; step 2 depends on it and will not run." in turn.answer
    assert f"Step 1 of plan {plan.pk} is now stopped; step 2 depended on it and will not run" in turn.answer
    step = PlanStep.objects.get(plan=plan, order=1)
    assert step.status == "stopped" and step.error == "Stopped by olga"
    assert PlanStep.objects.get(plan=plan, order=2).status == "skipped" and "read_value" not in testcaps.CALLS
    assert Plan.objects.get(pk=plan.pk).status == "completed"  # the plan was not cancelled
    assert AuditRecord.objects.filter(action="plan.step_stop", actor=operator).count() == 1


def test_skip_a_pending_step_of_a_named_plan_and_the_hostile_cases(client, operator, make_user):
    plan = _job_then_read(operator, status="draft")
    turn = say(client, operator, f"Skip step 2 of plan {plan.pk}")
    assert done(turn) == [("skip_step", True)] and PlanStep.objects.get(plan=plan, order=2).status == "skipped"
    # a step that is done is reported, not touched
    again = say(client, operator, f"Skip step 2 of plan {plan.pk}")
    assert "already skipped" in again.answer and AuditRecord.objects.filter(action="plan.step_skip").count() == 1
    # another user's plan does not exist for them
    turn = say(client, make_user("mallory", OPERATOR), f"Skip step 1 of plan {plan.pk}")
    assert f"Plan {plan.pk} is not among your plans" in turn.answer
    assert PlanStep.objects.get(plan=plan, order=1).status == "pending"
    # a quoted instruction does not act
    say(client, operator, f'Earlier I wrote "skip step 1 of plan {plan.pk}"')
    assert PlanStep.objects.get(plan=plan, order=1).status == "pending"


# --- derived plans ----------------------------------------------------------------------------------


def test_same_as_plan_n_but_without_step_x_records_the_derivation(client, operator, make_user):
    source = build_plan(
        operator,
        [
            {"capability": "otest.read_value", "inputs": {"key": "a"}},
            {"capability": "otest.note", "inputs": {"label": "b"}, "depends_on": [1]},
            {"capability": "otest.read_value", "inputs": {"key": "c"}, "depends_on": [2]},
        ],
        status="completed",
    )
    turn = say(client, operator, f"Same as plan {source.pk} but without step 2")
    assert done(turn) == [("derive_plan", True)], turn.answer
    new = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert new.status == "draft" and new.derived_from_id == source.pk and new.goal == source.goal
    assert new.derivation["removed"] == [{"order": 2, "capability": "otest.note"}] and new.derivation["added"] == []
    steps = [(s.order, s.capability, s.inputs["key"], s.depends_on) for s in new.steps.all()]
    assert steps == [(1, "otest.read_value", "a", []), (2, "otest.read_value", "c", [1])]
    shown = client.get(f"/api/v1/aria/plans/{new.pk}").json()
    assert shown["derived_from"] == source.pk and shown["derivation"]["orders"] == {"1": 1, "3": 2}
    assert "without step 2 (otest.note)" in turn.answer
    # another user's plan cannot be copied
    count = Plan.objects.count()
    other = say(client, make_user("mallory", OPERATOR), f"Same as plan {source.pk} but without step 2")
    assert f"Plan {source.pk} is not among your plans" in other.answer and Plan.objects.count() == count


# --- nothing in focus, investigations ----------------------------------------------------------------


def test_with_nothing_in_focus_it_asks_which_workstream(client, operator):
    one = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "a"}}]))
    two = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "b"}}]))
    cancelled = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="cancelled")
    turn = say(client, operator, "Stop that one")
    assert [e["type"] for e in turn.executed] == ["ask_clarification"]
    assert f"plan {one.pk}" in turn.answer and f"plan {two.pk}" in turn.answer
    assert f"plan {cancelled.pk}" not in turn.answer
    assert {p.status for p in Plan.objects.filter(pk__in=[one.pk, two.pk])} == {"running"}
    asked = say(client, operator, "What happened?")
    assert "Which one do you mean?" in asked.answer and f"Plan {cancelled.pk} " not in asked.answer


def test_a_cancelled_plan_is_never_the_silent_focus(client, operator):
    cancelled = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="cancelled")
    turn = say(client, operator, "Approve it")
    assert f"{cancelled.pk}" not in turn.answer and turn.executed[0]["type"] in ("answer", "ask_clarification")


def test_why_did_the_investigation_fail_reads_the_agent_runs(client, operator):
    for ref in ("a", "b"):
        start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": ref}}]))
    wo = f.make_work_order(f.make_cell("P-05"), status="detected", title="Seal leak on P-05")
    run = AgentRun.objects.create(
        agent="investigator", engine="fake", subject_type="work_order", subject_id=str(wo.pk), status="failed",
        finish_reason="timeout", error="Wall timeout of 120s exceeded.",
    )  # fmt: skip
    turn = say(client, operator, "Why did the investigation fail?")
    assert "get_agent_runs" in tools(turn)
    assert f"latest run ({run.pk}) on work order {wo.pk} is failed (timeout)" in turn.answer


# --- named equipment drives delegation ----------------------------------------------------------------


def test_named_equipment_is_the_delegation_subject_not_the_newest_order(client, operator):
    p02 = f.make_cell("P-02")
    ours = f.make_work_order(p02, status="analyzed", title="P-02 vibration")
    newest = f.make_work_order(f.make_cell("C-01"), status="analyzed", title="Conveyor slip")
    assert newest.pk > ours.pk
    turn = say(client, operator, "Research P-02 and have a reviewer check it")
    assert "find_cells" in tools(turn) and [e["type"] for e in turn.executed] == ["delegate", "delegate"]
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert {"type": "work_order", "id": ours.pk} in plan.context_refs
    assert {"type": "work_order", "id": newest.pk} not in plan.context_refs
    args = {c["tool"]: c["args"] for c in turn.tool_calls}
    assert args["get_work_orders"]["cell_id"] == p02.pk


def test_a_model_forcing_an_operators_approval_is_refused_by_code(operator, draft):
    """Whatever a model proposes: the validator refuses the move (not one of the operator's), and the
    capability itself refuses an operator and any agent."""
    action = {"type": "decide_approval", "draft_id": draft.pk, "decision": "approve"}
    action["user_request_quote"] = f"approve draft {draft.pk}"
    plan = {"summary": "Approving.", "actions": [action], "references": {"draft_ids": [draft.pk]}}
    engine = FakeEngine(script=[FakeReply(tool_calls=[("submit_action_plan", plan)])])
    turn = coordinator_turn(user=operator, message=f"approve draft {draft.pk}", engine=engine)
    assert turn.status == "rejected" and turn.executed == []
    assert f"policy: draft {draft.pk} is tested" in turn.answer and "you may not decide it" in turn.answer
    args = {"draft_id": draft.pk, "decision": "approve"}
    refused = dispatch("assistant.decide_draft", args, ctx=CapabilityContext(user=operator))
    assert refused.is_error and "requires scope approver" in refused.message
    as_agent = dispatch("assistant.decide_draft", args, ctx=CapabilityContext(user=operator, agent="planner"))
    assert as_agent.is_error and "may not call it" in as_agent.message
    assert Draft.objects.get(pk=draft.pk).status == "tested"


def test_an_approver_without_an_id_gets_the_one_waiting_draft_or_is_asked_which(client, operator, draft, make_user):
    alice = make_user("alice", OPERATOR, APPROVER)
    mine = make_tested_draft(alice, spec=SKILL_SPEC, type="skill", name="alices-own")  # hers: not hers to approve
    turn = say(client, alice, "Approve the draft")
    assert done(turn) == [("decide_approval", True)] and turn.action_plan["actions"][0]["draft_id"] == draft.pk
    assert Draft.objects.get(pk=draft.pk).status == "approved" and Draft.objects.get(pk=mine.pk).status == "tested"
    second = make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="second")
    third = make_tested_draft(make_user("otto", OPERATOR), spec=SKILL_SPEC, type="skill", name="third")
    asked = say(client, alice, "Approve the draft")
    assert [e["type"] for e in asked.executed] == ["ask_clarification"] and "Which draft?" in asked.answer
    assert f"draft {second.pk}" in asked.answer and f"draft {third.pk}" in asked.answer
    assert {Draft.objects.get(pk=d.pk).status for d in (second, third)} == {"tested"}


# --- structured guidance -----------------------------------------------------------------------------


def test_carry_on_but_only_line_2_limits_the_steps_still_to_run(client, operator, django_capture_on_commit_callbacks):
    line1 = f.make_cell("P-01")
    line2 = f.make_cell("P-22")
    Cell.objects.filter(pk=line2.pk).update(line=Line.objects.create(site=line1.line.site, name="Line 2"))
    signals = "workorders.get_current_signals"
    plan = start(
        build_plan(
            operator,
            [
                {"capability": "otest.start_job", "inputs": {"ref": "first"}},
                {"capability": signals, "inputs": {"cell_id": line1.pk}, "depends_on": [1]},
                {"capability": signals, "inputs": {"cell_id": line2.pk}, "depends_on": [1]},
            ],
        )
    )
    # a line that does not exist is refused, nothing attached
    wrong = say(client, operator, "Carry on, but only line 9")
    assert (
        "no production line matches 'line 9'" in wrong.answer
        and "guidance" not in Plan.objects.get(pk=plan.pk).constraints
    )
    turn = say(client, operator, "Carry on, but only line 2")
    assert done(turn) == [("attach_guidance", True)], turn.answer
    constraints = Plan.objects.get(pk=plan.pk).constraints
    assert constraints["lines"] == ["line 2"] and constraints["guidance"] == ["only line 2"]
    assert client.get(f"/api/v1/aria/plans/{plan.pk}").json()["constraints"]["lines"] == ["line 2"]  # shown on the plan
    testcaps.finish_job("first")
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    steps = {s.order: s for s in PlanStep.objects.filter(plan=plan)}
    assert steps[2].status == "skipped" and "only line 2" in steps[2].error
    assert steps[3].status == "done" and Plan.objects.get(pk=plan.pk).status == "completed"
    audit = AuditRecord.objects.get(action="plan.guidance", target_id=str(plan.pk))
    assert audit.details["constraints"] == {"lines": ["line 2"]}


def test_a_changed_copy_that_removes_nothing_keeps_every_step(client, operator):
    source = build_plan(
        operator, [{"capability": "otest.read_value", "inputs": {"key": "a"}}], status="completed"
    )  # "read" is a word of its capability, but the user asked for no removal
    turn = say(client, operator, f"Same as plan {source.pk} but read the backlog again")
    assert done(turn) == [("create_plan", True)]
    new = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert new.derived_from_id == source.pk and new.steps.exists()  # re-planned from the changed goal, recorded
    assert new.derivation["from_plan"] == source.pk and new.derivation["goal_was"] == source.goal
    assert {"removed", "added"} <= set(new.derivation)


def test_step_changes_name_the_steps_removed_and_added(operator):
    source = build_plan(
        operator,
        [{"capability": c, "inputs": {"key": "k"}} for c in ("otest.read_value", "otest.score", "otest.read_value")],
    )
    changes = step_changes(source, ["otest.read_value", "otest.note"])
    assert changes["removed"] == [
        {"order": 2, "capability": "otest.score"},
        {"order": 3, "capability": "otest.read_value"},
    ]
    assert changes["added"] == [{"order": 2, "capability": "otest.note"}]


def test_over_the_messages_api_the_approver_approves_a_draft_with_the_tools_a_model_is_offered(
    operator, draft, make_user
):
    """The production engine path (anthropic SDK, local fake Messages API): the model is offered the draft
    read tools and the schema's draft_id; the words' reading drives the gateway answering on the wire."""
    alice = make_user("alice", OPERATOR, APPROVER)
    message = f"Approve draft {draft.pk}"
    with (
        AnthropicFakeServer(responder=gateway_responder(keyword_reading(message, {}))) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        turn = coordinator_turn(user=alice, message=message, engine=get_engine())
    assert turn.prompt_kind == "model" and done(turn) == [("decide_approval", True)], turn.answer
    assert Draft.objects.get(pk=draft.pk).status == "approved"
    first = server.message_bodies()[0]
    offered = {t["name"] for t in first["tools"]}
    assert {"list_draft_reviews", "get_draft_review"} <= offered and "decide_draft" not in offered
    schema = json.dumps(next(t for t in first["tools"] if t["name"] == "submit_action_plan"))
    assert "draft_id" in schema and "remove_steps" in schema and "stop_step" in schema
