"""The loop's hold hook: with `AgentSpec.hold_call`, a mutate-tier call is handed to the hook and
never dispatched (its step is `held`), a read-tier call still runs, and a refusal from the hook is
an ordinary tool error. Every run records the correlation id of the scope it started in."""

import pytest
from pydantic import BaseModel

from core.agents.correlation import correlation_scope
from core.agents.engines.fake import FakeEngine, FakeReply
from core.agents.loop import AgentSpec, run_agent
from core.capabilities import CapabilityContext, CapabilityResult, Tier, capability, registry
from core.models import AgentRun, AgentStep

pytestmark = pytest.mark.django_db
RAN: list[str] = []


class TextIn(BaseModel):
    text: str


@pytest.fixture(autouse=True)
def capabilities():
    @capability("holdkit.read", description="Read.", input=TextIn, tier=Tier.READ, tool_name="hk_read")
    def read(ctx, params):
        RAN.append(f"read {params.text}")
        return {"summary": "read"}

    @capability("holdkit.write", description="Write.", input=TextIn, tier=Tier.MUTATE, tool_name="hk_write")
    def write(ctx, params):
        RAN.append(f"write {params.text}")
        return {"summary": "written"}

    RAN.clear()
    yield
    registry.unregister("holdkit.read")
    registry.unregister("holdkit.write")


def run(hold, calls):
    spec = AgentSpec(
        name="holder", system_prompt="", tools=["hk_read", "hk_write"], max_tier=Tier.MUTATE, hold_call=hold
    )
    engine = FakeEngine(script=[FakeReply(tool_calls=calls), FakeReply(text="done")])
    return run_agent(spec, messages="go", ctx=CapabilityContext(user=None), engine=engine)


def test_a_mutate_call_goes_to_the_hook_and_a_read_call_runs():
    held = []

    def hold(cap, args, ctx):
        held.append((cap.name, args, ctx.extra["run_id"]))
        return CapabilityResult(cap.tool_name, content={"summary": "awaiting confirmation"})

    result = run(hold, [("hk_read", {"text": "a"}), ("hk_write", {"text": "b"})])
    assert RAN == ["read a"]
    assert held == [("holdkit.write", {"text": "b"}, result.run.pk)]
    kinds = dict(AgentStep.objects.filter(run=result.run).values_list("tool", "kind"))
    assert kinds == {"hk_read": "tool", "hk_write": "held"}


def test_a_refusal_from_the_hook_is_a_tool_error_not_a_held_step():
    result = run(
        lambda cap, args, ctx: CapabilityResult(cap.tool_name, is_error=True, message="no"),
        [("hk_write", {"text": "b"})],
    )
    step = AgentStep.objects.get(run=result.run)
    assert RAN == [] and step.is_error and step.kind == "tool"


def test_runs_record_the_correlation_id_of_their_scope():
    with correlation_scope("c0ffee"):
        inside = run(None, [("hk_write", {"text": "b"})])
    outside = run(None, [])
    assert RAN == ["write b"]  # no hook: the call runs
    assert AgentRun.objects.get(pk=inside.run.pk).correlation_id == "c0ffee"
    assert AgentRun.objects.get(pk=outside.run.pk).correlation_id == ""
