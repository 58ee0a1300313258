"""What publication makes live: prompt versions + production alias, sandboxed tools, skills,
workflows as plan templates; rollback moves the alias back."""

import pytest

from assistant.models import PromptAlias, PromptVersion, PublishedArtifact, Skill
from assistant.services.drafts import draft_approve, draft_test, draft_update, draft_validate
from assistant.services.publish import draft_publish, prompt_alias_move
from core.agents.prompts import compose_prompt, system_prompt_for
from core.capabilities import CapabilityContext, Tier, dispatch, project_tools, registry
from core.plan_templates import get_plan_template

from .factories import PROMPT_SPEC, SKILL_SPEC, TOOL_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db


@pytest.fixture
def publisher(make_user):
    return make_user("pat", "approver")


def publish(draft, approver, publisher):
    return draft_publish(draft=draft_approve(draft=draft, actor=approver), actor=publisher)


def test_prompt_publication_moves_production_and_rollback_moves_it_back(operator, approver, publisher):
    default = "You are the built-in investigator."
    assert system_prompt_for("investigator", default) == (default, "builtin")

    draft = publish(
        make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="investigator-v1"), approver, publisher
    )
    assert draft.status == "published"
    prompt, ref = system_prompt_for("investigator", default)
    assert ref == "prompt:investigator@v1"
    assert prompt == compose_prompt(PROMPT_SPEC["text"], default, ref) and prompt.endswith(default)

    draft = draft_update(
        draft=draft, actor=operator, spec={**PROMPT_SPEC, "text": "Second: check {{focus}}; submit_rca."}
    )
    draft_validate(draft=draft, actor=operator)
    draft_test(draft=draft, actor=operator)
    publish(draft, approver, publisher)
    assert system_prompt_for("investigator", default)[1] == "prompt:investigator@v2"

    prompt_alias_move(name="investigator", version=1, actor=approver)
    assert system_prompt_for("investigator", default)[0].startswith(PROMPT_SPEC["text"])
    assert system_prompt_for("investigator", default)[1] == "prompt:investigator@v1"
    assert PromptAlias.objects.get(name="investigator").version.version == 1


def test_prompt_versions_are_immutable(operator, approver, publisher):
    publish(make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="p"), approver, publisher)
    version = PromptVersion.objects.get()
    version.text = "tampered"
    with pytest.raises(ValueError):
        version.save()


def test_a_published_prompt_changes_what_the_investigator_is_told(operator, approver, publisher):
    """Any agent spec built with system_prompt_for records the published text on its AgentRun."""
    from core.agents.engines.fake import FakeEngine, FakeReply
    from core.agents.loop import AgentSpec, run_agent

    publish(make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="inv"), approver, publisher)
    prompt, ref = system_prompt_for("investigator", "built-in")
    result = run_agent(
        AgentSpec(name="investigator", system_prompt=prompt, prompt_ref=ref),
        messages="Investigate work order 7",
        ctx=CapabilityContext(user=operator),
        engine=FakeEngine(script=[FakeReply(text="done")]),
    )
    assert result.run.system_prompt.startswith(PROMPT_SPEC["text"])
    assert result.run.system_prompt.endswith("built-in")  # the built-in prompt always stays
    assert result.run.prompt_ref == "prompt:investigator@v1"


def test_a_published_tool_is_a_safe_capability_running_in_the_sandbox(operator, approver, publisher):
    publish(make_tested_draft(operator), approver, publisher)
    cap = registry.get("double")
    assert cap.name == "published.double" and cap.tier == Tier.SAFE
    assert project_tools(allow=["double"], max_tier=Tier.READ) == []
    [tool] = project_tools(allow=["double"], max_tier=Tier.SAFE)
    assert tool["input_schema"] == TOOL_SPEC["input_schema"]
    result = dispatch("double", {"x": 21}, ctx=CapabilityContext(user=operator))
    assert result.content == {"doubled": 42}, result.message
    bad = dispatch("double", {"x": "nope"}, ctx=CapabilityContext(user=operator))
    assert bad.is_error and "Invalid input" in bad.message
    assert PublishedArtifact.objects.get(type="tool").version == 1


def test_published_tools_reload_from_the_table(operator, approver, publisher):
    from assistant.publishers import load_published_tools

    publish(make_tested_draft(operator), approver, publisher)
    registry.unregister("published.double")
    assert load_published_tools() == 1 and registry.get("double") is not None


def test_a_published_skill_joins_selection(operator, approver, publisher):
    publish(make_tested_draft(operator, spec=SKILL_SPEC, type="skill", name="pure-tools"), approver, publisher)
    skill = Skill.objects.get(name="pure-tools")
    assert skill.runtime_mode == "auto" and skill.triggers == ["tool"]


def test_a_published_workflow_is_a_plan_template(operator, approver, publisher, plant):
    spec = {
        "description": "Look back",
        "steps": [{"capability": "workorders.get_failure_history", "inputs": {"cell_id": "{cell_id}"}}],
    }
    draft = publish(make_tested_draft(operator, spec=spec, type="workflow", name="lookback"), approver, publisher)
    template = get_plan_template("lookback")
    assert template is not None and template.steps[0]["capability"] == "workorders.get_failure_history"
    assert template.source == f"assistant.workflow:{draft.pk}@v1"


def test_prompt_alias_routes(client, operator, approver, publisher):
    first = publish(make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="a"), approver, publisher)
    draft = draft_update(draft=first, actor=operator, spec={**PROMPT_SPEC, "text": "v2 {{focus}}, submit_rca"})
    draft_validate(draft=draft, actor=operator)
    draft_test(draft=draft, actor=operator)
    publish(draft, approver, publisher)
    client.force_login(operator)
    assert [v["version"] for v in client.get("/api/v1/assistant/prompts/investigator/versions").json()] == [2, 1]
    assert client.get("/api/v1/assistant/prompts/aliases").json() == [
        {"name": "investigator", "alias": "production", "version": 2}
    ]
    url = "/api/v1/assistant/prompts/investigator/aliases/production"
    assert client.put(url, {"version": 1}, content_type="application/json").status_code == 403  # operator
    client.force_login(approver)
    assert client.put(url, {"version": 1}, content_type="application/json").json()["version"] == 1
    assert client.put(url, {"version": 9}, content_type="application/json").status_code == 404
    assert system_prompt_for("investigator", "x")[1] == "prompt:investigator@v1"


def test_rollback_of_a_first_version_removes_the_alias_back_to_the_builtin_prompt(
    client, make_user, operator, approver
):
    """With only v1 published there is no version to move back to: removing the alias is the
    rollback (approver only, audited), and the agent is told its built-in prompt again."""
    from assistant.models import PromptAlias
    from assistant.services.drafts import draft_approve
    from assistant.services.publish import draft_publish
    from core.agents.prompts import system_prompt_for
    from core.models import AuditRecord

    from .factories import PROMPT_SPEC, make_tested_draft

    draft = draft_approve(
        draft=make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="inv"), actor=approver
    )
    draft_publish(draft=draft, actor=make_user("pat", "approver"))
    assert system_prompt_for("investigator", "BUILTIN")[1] != "builtin"

    client.force_login(operator)
    assert client.delete("/api/v1/assistant/prompts/investigator/aliases/production").status_code == 403
    client.force_login(approver)
    assert client.delete("/api/v1/assistant/prompts/investigator/aliases/staging").status_code == 404
    assert client.delete("/api/v1/assistant/prompts/investigator/aliases/production").status_code == 204
    assert not PromptAlias.objects.filter(name="investigator").exists()
    assert system_prompt_for("investigator", "BUILTIN") == ("BUILTIN", "builtin")
    assert AuditRecord.objects.filter(action="prompt.alias_remove", actor=approver).exists()
