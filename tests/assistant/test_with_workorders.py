"""The assistant against the real maintenance capabilities (workorders), built with its factories."""

import pytest

pytest.importorskip("workorders.capabilities")

from assistant.models import Message
from assistant.services.chat import chat_turn
from assistant.services.drafts import draft_approve
from assistant.services.publish import draft_publish
from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import CapabilityContext, dispatch
from core.models import AgentRun
from tests.workorders import factories as f

from .factories import make_tested_draft

pytestmark = pytest.mark.django_db


@pytest.fixture
def p02():
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.ramp(vibration, peak=7.4)
    f.make_kb(cell)
    f.make_history(cell)
    return cell


def test_operator_asks_why_p02_tripped_against_the_real_capabilities(operator, p02):
    f.make_work_order(p02, status="analyzed", rca_summary="DE bearing wear: vibration 2 → 7.4 mm/s in an hour.")
    frames = []
    outcome = chat_turn(user=operator, content="Why did P-02 trip?", on_frame=frames.append)
    calls = [fr["name"] for fr in frames if fr["type"] == "tool_call"]
    assert calls[:2] == ["find_cells", "get_current_signals"]
    assert {"get_signal_trends", "render_signal_chart", "get_failure_history", "ask_investigator"} <= set(calls)
    assert not [fr for fr in frames if fr["type"] == "tool_result" and fr["summary"].startswith("error")]
    chart = next(fr for fr in frames if fr["type"] == "ui_render")
    assert chart["props"]["cell_id"] == p02.pk
    assert "DE bearing wear" in outcome.response and "Sources:" in outcome.response


def test_published_production_prompt_changes_what_the_investigator_is_told(
    operator, approver, make_user, p02, django_capture_on_commit_callbacks
):
    text = "You are the plant Investigator (published v1). Check {{focus}} before anything else. Then submit_rca."
    spec = {"agent": "investigator", "text": text, "variables": ["focus"]}
    draft = draft_approve(
        draft=make_tested_draft(operator, spec=spec, type="prompt", name="investigator"), actor=approver
    )
    assert draft_publish(draft=draft, actor=make_user("pat", "approver")).status == "published"

    work_order = f.make_work_order(p02, status="detected", triggered_by_signal_def=p02.signals.first())
    with django_capture_on_commit_callbacks(execute=True):
        result = dispatch(
            "workorders.start_investigation", {"work_order_id": work_order.pk}, ctx=CapabilityContext(user=operator)
        )
    assert not result.is_error, result.message
    run = AgentRun.objects.filter(agent="investigator").latest("id")
    signal = p02.signals.first()
    filled = text.replace("{{focus}}", f"{signal.display_name or signal.key} ({signal.key}) on P-02")
    assert run.system_prompt.startswith(filled)  # the investigator appends the case context
    assert "{{focus}}" not in run.system_prompt
    assert run.prompt_ref == "prompt:investigator@v1"


def _publish_prompt(operator, approver, make_user, agent, text, variables):
    spec = {"agent": agent, "text": text, "variables": variables}
    draft = draft_approve(draft=make_tested_draft(operator, spec=spec, type="prompt", name=agent), actor=approver)
    assert draft_publish(draft=draft, actor=make_user(f"pub-{agent}"[:30], "approver")).status == "published"


def test_published_prompt_variables_are_filled_from_the_work_order(
    operator, approver, make_user, p02, django_capture_on_commit_callbacks
):
    """{{cell_tag}}, {{cell_name}}, {{work_order_id}}, {{recent_failures}} reach the model filled; an
    unknown variable stays visible; the Generator's prompt is filled too."""
    investigator_text = (
        "Investigator for {{cell_tag}} ({{cell_name}}), order {{work_order_id}}; watch {{ mystery }}.\n"
        "Past failures:\n{{recent_failures}}\nFinish with submit_rca."
    )
    _publish_prompt(
        operator,
        approver,
        make_user,
        "investigator",
        investigator_text,
        ["cell_tag", "cell_name", "work_order_id", "mystery", "recent_failures"],
    )
    _publish_prompt(
        operator,
        approver,
        make_user,
        "work_order_generator",
        "Generator: write the repair order for WO-{{work_order_id}} on {{cell_tag}}; submit_work_order.",
        ["work_order_id", "cell_tag"],
    )
    work_order = f.make_work_order(p02, status="detected", triggered_by_signal_def=p02.signals.first())
    with django_capture_on_commit_callbacks(execute=True):
        result = dispatch(
            "workorders.start_investigation", {"work_order_id": work_order.pk}, ctx=CapabilityContext(user=operator)
        )
    assert not result.is_error, result.message

    run = AgentRun.objects.filter(agent="investigator").latest("id")
    assert run.system_prompt.startswith(
        f"Investigator for P-02 ({p02.name}), order {work_order.pk}; watch {{{{ mystery }}}}.\nPast failures:\n"
        "Confirmed failures (a technician confirmed or corrected the cause):\n- #"
    )
    assert "{{cell_tag}}" not in run.system_prompt and "{{recent_failures}}" not in run.system_prompt
    assert "## Last 5 failures" not in run.system_prompt  # placed by the prompt itself, so not appended again
    generator_run = AgentRun.objects.filter(agent="work_order_generator").latest("id")
    assert generator_run.system_prompt.startswith(
        f"Generator: write the repair order for WO-{work_order.pk} on P-02; submit_work_order.\n\n## Built-in contract"
    )


def test_plan_mode_with_the_real_orchestrator_capability(client, operator, p02):
    pytest.importorskip("orchestrator.capabilities")
    f.make_work_order(p02, status="analyzed", rca_summary="bearing wear")
    client.force_login(operator)
    sid = client.post("/api/v1/assistant/sessions", {"mode": "plan"}, content_type="application/json").json()["id"]
    body = client.post(
        f"/api/v1/assistant/sessions/{sid}/messages",
        {"content": "Investigate why P-02 vibration is high"},
        content_type="application/json",
    ).json()
    assert body["plan_card"]["component"] == "plan_card", body
    assert body["plan_card"]["props"]["goal"] == "Investigate why P-02 vibration is high"
    assert "Plan created" in body["reply"]
    steps = [s["capability"] for s in body["plan_card"]["props"]["steps"]]
    assert "workorders.get_current_signals" in steps  # the cell P-02 resolved into the plan's context


def test_why_did_p02_trip_on_a_plant_without_work_orders_resolves_the_tag_and_charts(operator, p02):
    """A fresh plant has no work orders: the tag resolves through find_cells, not a dead end."""
    frames = []
    outcome = chat_turn(user=operator, content="why did P-02 trip?", on_frame=frames.append)
    calls = [fr["name"] for fr in frames if fr["type"] == "tool_call"]
    assert calls[0] == "find_cells", calls
    assert "render_signal_chart" in calls
    chart = next(fr for fr in frames if fr["type"] == "ui_render")
    assert chart["props"]["cell_id"] == p02.pk
    assert "could not find data" not in outcome.response


class RecordingEngine(FakeEngine):
    """The provider is what is faked: it records each request and answers from its script."""

    def __init__(self, script: list[FakeReply]) -> None:
        super().__init__(script=script)
        self.requests: list = []

    def complete(self, request, *, on_delta=None):
        self.requests.append(request)
        return super().complete(request, on_delta=on_delta)


def test_a_german_question_reaches_the_model_verbatim_and_its_german_answer_reaches_the_operator(operator, p02):
    """Answering in the operator's language is the model's job (the agent's prompt asks for it); the
    chat carries the question to the model and the answer back unchanged, umlauts and all."""
    question = "Warum ist die Pumpe P-02 ausgefallen? Lagertemperatur über 80 °C."
    answer = "Zu P-02: Die Schwingung stieg über den Grenzwert; Lagerverschleiß ist wahrscheinlich. Quellen: Signale."
    engine = RecordingEngine([FakeReply(text=answer)])
    frames: list[dict] = []
    outcome = chat_turn(user=operator, content=question, on_frame=frames.append, engine=engine)
    (request,) = engine.requests
    assert request.messages[0] == {"role": "user", "content": question}
    assert "operator's language" in request.system
    assert outcome.response == answer and not outcome.error
    assert "".join(fr["content"] for fr in frames if fr["type"] == "text_delta") == answer
    stored = Message.objects.filter(session=outcome.session).order_by("pk")
    assert [(m.role, m.content) for m in stored] == [("user", question), ("assistant", answer)]
