import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pydantic import BaseModel

from core.agents.engines.fake import FakeEngine, FakeReply
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.capabilities import CapabilityContext, Tier, capability, registry
from core.events.render_props import Props, register_ui_component, unregister_ui_component
from core.models import AgentRun, Event


class EchoInput(BaseModel):
    text: str


class Answer(BaseModel):
    answer: str


class ThingProps(Props):
    text: str


@pytest.fixture(scope="module", autouse=True)
def echo_capability():
    register_ui_component("thing", ThingProps)

    @capability("testkit.echo", description="Echo text back.", input=EchoInput, tier=Tier.READ)
    def echo(ctx, params):
        return {"echo": params.text}

    @capability(
        "testkit.render_thing", description="Render.", input=EchoInput, tier=Tier.READ, tool_name="render_thing"
    )
    def render(ctx, params):
        if params.text == "hostile":  # props that break the component's schema
            return {"component": "thing", "props": {"cell_id": "one", "text": "x", "onclick": "alert(1)"}}
        return {"component": "thing", "props": {"cell_id": 1, "text": params.text}}

    yield
    registry.unregister("testkit.echo")
    registry.unregister("testkit.render_thing")
    unregister_ui_component("thing")


def spec(**kw):
    return AgentSpec(
        name="tester",
        system_prompt="You test.",
        tools=["testkit.echo", "render_thing"],
        finish_tool=FinishTool("submit_answer", "Finish.", Answer),
        **kw,
    )


@pytest.mark.django_db
def test_loop_runs_tools_then_finish_and_records_every_step(operator):
    engine = FakeEngine(
        script=[
            FakeReply(thinking="hmm", tool_calls=[("echo", {"text": "hi"})]),
            FakeReply(tool_calls=[("render_thing", {"text": "x"})]),
            FakeReply(tool_calls=[("submit_answer", {"answer": "done"})]),
        ]
    )
    frames = []
    result = run_agent(
        spec(), messages="go", ctx=CapabilityContext(user=operator), engine=engine, on_frame=frames.append
    )

    assert result.finish_reason == "finish_tool" and result.end_reason == "submit_answer"
    assert result.output == {"answer": "done"}
    run = AgentRun.objects.get(pk=result.run.pk)
    assert run.status == "finished" and run.finish_reason == "submit_answer"
    assert [s.tool for s in run.steps.all()] == ["echo", "render_thing", "submit_answer"]
    types = list(Event.objects.filter(turn_id=run.turn_id).values_list("type", flat=True))
    assert types == [
        "agent_start",
        "thinking_delta",
        "tool_call_started",
        "tool_call_completed",
        "tool_call_started",
        "tool_call_completed",
        "ui_render",
        "agent_end",
    ]
    start, end = (Event.objects.get(turn_id=run.turn_id, type=t).payload for t in ("agent_start", "agent_end"))
    assert start == {"agent": "tester", "turn_id": run.turn_id, "parent_turn_id": None}
    # agent_end names the finishing tool (the contract), not the loop's internal "finish_tool"
    assert end == {"agent": "tester", "turn_id": run.turn_id, "finish_reason": "submit_answer"}
    assert {"type": "tool_result", "name": "echo", "summary": "1 field(s): echo"} in frames


@pytest.mark.django_db
def test_a_finish_tool_can_name_its_own_finish_reason_and_agent_end_can_be_deferred(operator):
    engine = FakeEngine(script=[FakeReply(tool_calls=[("submit_answer", {"answer": "yes"})])])
    answered = AgentSpec(
        name="kb_like",
        system_prompt="Answer.",
        finish_tool=FinishTool("submit_answer", "Finish.", Answer, finish_reason="answered"),
    )
    result = run_agent(answered, messages="go", ctx=CapabilityContext(user=operator), engine=engine, defer_end=True)
    assert result.end_reason == "answered" and result.ok
    # Deferred: nothing ends the run on the bus until the caller has applied its result
    assert not Event.objects.filter(type="agent_end").exists()
    Event.objects.create(type="rca_ready", payload={}, turn_id=result.run.turn_id)  # the caller's own event
    result.publish_end()
    result.publish_end()  # once only
    types = list(Event.objects.filter(turn_id=result.run.turn_id).order_by("id").values_list("type", flat=True))
    assert types[-2:] == ["rca_ready", "agent_end"]
    assert Event.objects.get(type="agent_end").payload["finish_reason"] == "answered"


@pytest.mark.django_db
def test_a_handed_off_run_names_its_parent_turn(operator):
    engine = FakeEngine(script=[FakeReply(tool_calls=[("submit_answer", {"answer": "ok"})])])
    result = run_agent(
        spec(), messages="go", ctx=CapabilityContext(user=operator, turn_id="child-1"), engine=engine,
        parent_turn_id="parent-1",
    )  # fmt: skip
    start = Event.objects.get(type="agent_start")
    assert start.turn_id == result.run.turn_id == "child-1"
    assert start.payload == {"agent": "tester", "turn_id": "child-1", "parent_turn_id": "parent-1"}


@pytest.mark.django_db
def test_render_props_that_break_the_component_schema_are_a_tool_error_not_an_event(operator):
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("render_thing", {"text": "hostile"})]),
            FakeReply(tool_calls=[("submit_answer", {"answer": "done"})]),
        ]
    )
    frames = []
    result = run_agent(
        spec(), messages="go", ctx=CapabilityContext(user=operator), engine=engine, on_frame=frames.append
    )
    assert not Event.objects.filter(type="ui_render").exists()
    assert not [f for f in frames if f["type"] == "ui_render"]
    step = result.run.steps.get(index=0)
    assert step.is_error and "thing props.cell_id" in step.error
    assert result.messages[2]["content"][0]["is_error"] is True  # the model is told, and can repair


@pytest.mark.django_db
def test_thinking_is_on_the_bus_while_the_model_is_still_thinking(operator):
    seen_during_turn = []

    class Thinker(FakeEngine):
        """Streams its thinking in pieces and looks at the bus between them."""

        def complete(self, request, *, on_delta=None):
            if not any(m["role"] == "assistant" for m in request.messages):
                on_delta("thinking", "Check the ")
                seen_during_turn.append(
                    list(Event.objects.filter(type="thinking_delta").values_list("payload", flat=True))
                )
                on_delta("thinking", "bearing.")
            return super().complete(request, on_delta=None)

    engine = Thinker(script=[FakeReply(tool_calls=[("submit_answer", {"answer": "done"})])])
    result = run_agent(spec(), messages="go", ctx=CapabilityContext(user=operator), engine=engine)
    turn = result.run.turn_id
    # the first delta was published before the model finished its turn, with the exact fields
    assert seen_during_turn == [[{"agent": "tester", "content": "Check the ", "turn_id": turn}]]
    thoughts = list(Event.objects.filter(type="thinking_delta").order_by("id").values_list("payload", flat=True))
    assert "".join(t["content"] for t in thoughts) == "Check the bearing."
    assert all(set(t) == {"agent", "content", "turn_id"} for t in thoughts)
    # the rest was flushed at the end of the turn, before the run ended
    types = list(Event.objects.filter(turn_id=turn).order_by("id").values_list("type", flat=True))
    assert types.index("agent_end") > max(i for i, t in enumerate(types) if t == "thinking_delta")


@pytest.mark.django_db
def test_invalid_finish_input_is_returned_to_the_model_for_repair(operator):
    engine = FakeEngine(
        script=[
            FakeReply(tool_calls=[("submit_answer", {"wrong": 1})]),
            FakeReply(tool_calls=[("submit_answer", {"answer": "fixed"})]),
        ]
    )
    result = run_agent(spec(), messages="go", ctx=CapabilityContext(user=operator), engine=engine)
    assert result.output == {"answer": "fixed"}
    assert result.messages[2]["content"][0]["is_error"] is True


@pytest.mark.django_db
def test_max_turns_and_crash_end_the_run_with_a_reason(operator):
    looping = FakeEngine(script=[FakeReply(tool_calls=[("echo", {"text": "again"})])] * 5)
    result = run_agent(spec(max_turns=3), messages="go", ctx=CapabilityContext(user=operator), engine=looping)
    assert result.finish_reason == "max_turns"
    assert result.run.status == "failed"

    class Broken(FakeEngine):
        def complete(self, request, *, on_delta=None):
            raise RuntimeError("provider down")

    result = run_agent(spec(), messages="go", ctx=CapabilityContext(user=operator), engine=Broken())
    assert result.finish_reason == "error"
    assert "provider down" in AgentRun.objects.get(pk=result.run.pk).error
    assert Event.objects.filter(type="agent_end", payload__finish_reason="error").exists()


@pytest.mark.usefixtures("steady_registry")
@pytest.mark.django_db
def test_queries_per_step_do_not_grow_with_steps(operator):
    def queries_for(n):
        engine = FakeEngine(
            script=[FakeReply(tool_calls=[("echo", {"text": str(i)})]) for i in range(n)]
            + [FakeReply(tool_calls=[("submit_answer", {"answer": "ok"})])]
        )
        with CaptureQueriesContext(connection) as ctx:
            run_agent(spec(max_turns=50), messages="go", ctx=CapabilityContext(user=operator), engine=engine)
        return len(ctx)

    queries_for(1)  # warm caches (the user's scopes)
    q5, q10, q20 = queries_for(5), queries_for(10), queries_for(20)
    assert (q10 - q5) / 5 == (q20 - q10) / 10 == 3  # step row + tool_call_started + tool_call_completed


def test_prompt_variables_are_filled_and_unknown_ones_stay_visible():
    from core.agents.prompts import fill_prompt_variables, system_prompt_for

    text = "Check {{focus}} on {{ cell_tag }}; {{unknown}} and {{empty}} stay; {not_a_variable}."
    assert fill_prompt_variables(text, {"focus": "bearing temperature", "cell_tag": "P-02", "empty": None}) == (
        "Check bearing temperature on P-02; {{unknown}} and {{empty}} stay; {not_a_variable}."
    )
    assert fill_prompt_variables(text, None) == text
    assert system_prompt_for("nobody-publishes-this", "Hi {{x}}", {"x": 7}) == ("Hi 7", "builtin")


class TargetInput(BaseModel):
    work_order_id: int
    title: str


@pytest.mark.django_db
def test_pinned_write_targets_refuse_writes_elsewhere(operator):
    writes = []

    @capability("testkit.retitle", description="Write.", input=TargetInput, tier=Tier.MUTATE)
    def retitle(ctx, params):
        writes.append(params.work_order_id)
        return {"ok": True}

    try:
        engine = FakeEngine(
            script=[
                FakeReply(tool_calls=[("retitle", {"work_order_id": 8, "title": "elsewhere"})]),
                FakeReply(tool_calls=[("retitle", {"work_order_id": 7, "title": "approved"})]),
                FakeReply(tool_calls=[("submit_answer", {"answer": "done"})]),
            ]
        )
        pinned = AgentSpec(
            name="writer",
            system_prompt="Write.",
            tools=["retitle"],
            max_tier=Tier.MUTATE,
            finish_tool=FinishTool("submit_answer", "Finish.", Answer),
            pinned_write_args={"work_order_id": 7},
        )
        result = run_agent(pinned, messages="go", ctx=CapabilityContext(user=operator), engine=engine)
    finally:
        registry.unregister("testkit.retitle")

    assert writes == [7]
    refused = result.run.steps.get(index=0)
    assert refused.is_error and "work_order_id=7" in refused.error
