import pytest
from pydantic import BaseModel

from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import CapabilityContext, Tier, capability, registry
from core.errors import InvalidInput
from core.models import AgentRun
from core.plan_templates import register_plan_template, unregister_plan_template
from orchestrator.planning import normalize_refs
from orchestrator.planning.heuristic import heuristic_steps
from orchestrator.planning.model import ModelPlanner
from orchestrator.planning.validation import validate_proposals
from orchestrator.services.plans import plan_create

pytestmark = pytest.mark.django_db


class _WoIn(BaseModel):
    work_order_id: int


class _NoIn(BaseModel):
    pass


class _CellIn(BaseModel):
    cell_id: int | None = None


def _stand_ins() -> None:
    """Stand-ins for the workorders capabilities when that app has not registered them."""

    def reg(name, model, tier, job=False):
        if name not in registry:
            capability(name, description="stand-in", input=model, tier=tier, returns_job=job)(
                lambda ctx, params: {"stand_in": name}
            )

    reg("workorders.get_work_order", _WoIn, Tier.READ)
    reg("workorders.start_investigation", _WoIn, Tier.SAFE, job=True)
    reg("workorders.get_work_orders", _NoIn, Tier.READ)
    reg("workorders.get_current_signals", _CellIn, Tier.READ)


_stand_ins()


def test_refs_normalise_both_spellings():
    assert normalize_refs(["work_order:7", {"type": "cell", "id": "3"}]) == [
        {"type": "work_order", "id": 7},
        {"type": "cell", "id": 3},
    ]
    with pytest.raises(InvalidInput) as bad:
        normalize_refs(["nonsense"])
    assert bad.value.field == "context_refs.0"


def test_heuristic_maps_a_work_order_ref_to_look_investigate_reread():
    steps = heuristic_steps("Investigate the vibration on this pump", [{"type": "work_order", "id": 7}])
    assert [(s["capability"], s["inputs"], s["depends_on"]) for s in steps] == [
        ("workorders.get_work_order", {"work_order_id": 7}, []),
        ("workorders.start_investigation", {"work_order_id": 7}, [0]),
        ("workorders.get_work_order", {"work_order_id": 7}, [1]),
        ("workorders.get_current_signals", {}, []),
    ]


def test_heuristic_without_refs_lists_work_orders():
    assert [s["capability"] for s in heuristic_steps("what is on the backlog", [])] == ["workorders.get_work_orders"]


def test_validation_repairs_and_drops_with_reasons():
    result = validate_proposals(
        [
            {"capability": "otest.read_value", "inputs": {"key": "a", "colour": "red"}},  # unknown key
            {"capability": "nope.unknown", "inputs": {}},  # unknown capability
            {"capability": "otest.read_value", "inputs": {"key": "b", "n": "lots"}},  # wrong type
            {"capability": "otest.read_value", "inputs": {"key": "c"}, "depends_on": [1, 0]},
            {"capability": "otest.score", "inputs": {"score": 0.5}, "quality_gate": {"field": "x", "op": "??"}},
            {"capability": "get_work_order", "inputs": {}},  # by tool name; id filled from refs
        ],
        context_refs=[{"type": "work_order", "id": 9}],
    )
    assert [(s.capability, s.inputs) for s in result.steps] == [
        ("otest.read_value", {"key": "a", "n": 1}),
        ("otest.read_value", {"key": "c", "n": 1}),
        ("otest.score", {"score": 0.5}),
        ("workorders.get_work_order", {"work_order_id": 9}),
    ]
    assert result.steps[1].depends_on == [0]  # the dependency on the dropped step was removed
    assert result.steps[2].quality_gate is None
    assert [s.tier for s in result.steps] == ["read", "read", "read", "read"]
    by_index = {}
    for note in result.notes:
        by_index.setdefault(note["index"], []).append(note)
    assert by_index[0][0]["action"] == "repaired" and "colour" in by_index[0][0]["repairs"][0]
    assert by_index[1][0] == {
        "index": 1,
        "capability": "nope.unknown",
        "action": "dropped",
        "reason": "unknown capability",
    }
    assert by_index[2][0]["action"] == "dropped" and "n" in by_index[2][0]["reason"]
    assert "dependency 1" in by_index[3][0]["reason"]
    assert "quality gate" in by_index[4][-1]["reason"]


def test_plan_create_stores_validated_steps_and_notes(operator):
    plan = plan_create(owner=operator, goal="Investigate why", context_refs=["work_order:7"])
    assert plan.status == "draft" and plan.planner == "heuristic"
    steps = list(plan.steps.all())
    assert [s.order for s in steps] == [1, 2, 3]
    assert steps[2].depends_on == [2] and steps[1].tier == "safe"


def test_plan_create_with_nothing_valid_is_422(operator):
    register_plan_template("broken-flow", steps=[{"capability": "nope.nothing", "inputs": {}}])
    try:
        with pytest.raises(InvalidInput) as bad:
            plan_create(owner=operator, goal="run template:broken-flow")
        assert bad.value.field == "goal" and bad.value.extra["notes"][0]["reason"] == "unknown capability"
    finally:
        unregister_plan_template("broken-flow")


def test_template_named_in_the_goal_is_used(operator):
    register_plan_template(
        "pump-check",
        steps=[
            {"capability": "otest.read_value", "inputs": {"key": "wo-{work_order_id}"}},
            {
                "capability": "workorders.get_work_order",
                "inputs": {"work_order_id": "{work_order_id}"},
                "depends_on": [0],
            },
        ],
        source="assistant.workflow:1@v1",
    )
    try:
        plan = plan_create(owner=operator, goal="Run the Pump-Check on this order", context_refs=["work_order:12"])
    finally:
        unregister_plan_template("pump-check")
    assert plan.template == "pump-check"
    assert [s.inputs for s in plan.steps.all()] == [{"key": "wo-12", "n": 1}, {"work_order_id": 12}]


def test_model_planner_offline_policy_looks_then_submits(operator):
    plan = plan_create(
        owner=operator, goal="Investigate the root cause", context_refs=["work_order:7"], planner="model"
    )
    assert plan.planner == "model"
    assert [s.capability for s in plan.steps.all()][:2] == [
        "workorders.get_work_order",
        "workorders.start_investigation",
    ]
    run = AgentRun.objects.get(agent="planner")
    assert [s.tool for s in run.steps.order_by("index")] == ["get_work_order", "submit_plan"]


def test_model_planner_proposals_are_repaired_before_showing(operator):
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("read_value", {"key": "look"})]),
            FakeReply(
                tool_calls=[
                    (
                        "submit_plan",
                        {
                            "steps": [
                                {"capability": "otest.read_value", "inputs": {"key": "x", "extra": 1}},
                                {"capability": "otest.invented", "inputs": {}},
                                {"capability": "otest.note", "inputs": {"label": "n"}, "depends_on": [0]},
                            ]
                        },
                    )
                ]
            ),
        ]
    )
    proposal = ModelPlanner(engine=engine).propose(goal="look around", context_refs=[], constraints={}, user=operator)
    result = validate_proposals(proposal.steps, context_refs=[])
    assert [s.capability for s in result.steps] == ["otest.read_value", "otest.note"]
    assert result.steps[1].depends_on == [0]
    assert {n["action"] for n in result.notes} == {"repaired", "dropped"}


def test_model_planner_without_submit_reports_why(operator):
    engine = FakeEngine(script=[FakeReply(text="I would rather not.")])
    proposal = ModelPlanner(engine=engine).propose(goal="x", context_refs=[], constraints={}, user=operator)
    assert proposal.steps == [] and "without submit_plan" in proposal.notes[0]["reason"]


def test_create_plan_capability_for_plan_mode(operator):
    from core.capabilities import dispatch

    result = dispatch(
        "orchestrator.create_plan",
        {"goal": "read template:none", "planner": "heuristic", "context_refs": ["work_order:3"]},
        ctx=CapabilityContext(user=operator),
    )
    assert not result.is_error, result.message
    assert result.content["status"] == "draft" and result.content["steps"][0]["inputs"] == {"work_order_id": 3}
