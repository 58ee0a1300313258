"""Routes: owner scoping (404), scopes (403), turns per mode, attachments caps, drafts, config."""

import io

import pytest
from pydantic import BaseModel

from assistant.models import Attachment, Draft, Run, Session
from core.access import OPERATOR
from core.capabilities import Capability, Tier, capability, registry
from core.models import AuditRecord, Event

from .factories import SKILL_SPEC, TOOL_SPEC, make_tested_draft, set_config

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture
def api(client, operator):
    client.force_login(operator)
    return client


def post(client, url, data=None):
    return client.post(url, data or {}, content_type="application/json")


def patch(client, url, data):
    return client.patch(url, data, content_type="application/json")


def test_sessions_crud_and_owner_scoping(client, operator, make_user, admin_user):
    client.force_login(operator)
    created = post(client, f"{API}/sessions", {"title": "Pump tools", "mode": "build"})
    assert created.status_code == 201
    sid = created.json()["id"]
    assert created.json()["mode"] == "build"
    renamed = patch(client, f"{API}/sessions/{sid}", {"title": "Renamed", "archived": True})
    assert renamed.json()["title"] == "Renamed" and renamed.json()["archived"] is True
    assert [s["id"] for s in client.get(f"{API}/sessions").json()] == [sid]

    other = make_user("otto", OPERATOR)
    client.force_login(other)
    assert client.get(f"{API}/sessions/{sid}").status_code == 404
    assert patch(client, f"{API}/sessions/{sid}", {"title": "mine"}).status_code == 404
    assert client.get(f"{API}/sessions/{sid}/messages").status_code == 404
    assert client.get(f"{API}/sessions").json() == []
    assert client.get(f"{API}/sessions?owner_id={operator.pk}").status_code == 403

    client.force_login(admin_user)
    assert [s["id"] for s in client.get(f"{API}/sessions?owner_id={operator.pk}").json()] == [sid]


def test_routes_need_operator(client, make_user):
    client.force_login(make_user("visitor"))
    assert client.get(f"{API}/sessions").status_code == 403
    assert post(client, f"{API}/sessions", {"title": "x"}).status_code == 403
    assert client.get(f"{API}/config").status_code == 403
    client.logout()
    assert client.get(f"{API}/sessions").status_code == 401


def test_build_turn_creates_a_draft_and_records_the_run(api, operator):
    from assistant.models import Skill

    Skill.objects.create(name="prompt-style", instructions="Short prompts.", triggers=["prompt"])
    Skill.objects.create(name="always", instructions="Be exact.", runtime_mode="pinned")
    Skill.objects.create(name="off", instructions="x", triggers=["prompt"], runtime_mode="disabled")
    sid = post(api, f"{API}/sessions", {"mode": "build"}).json()["id"]
    response = post(
        api,
        f"{API}/sessions/{sid}/messages",
        {"content": 'Write a prompt for the investigator: "Check {{focus}} first."'},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert [d["type"] for d in body["drafts"]] == ["prompt"] and body["drafts"][0]["status"] == "draft"
    assert body["drafts"][0]["spec"]["variables"] == ["focus"]
    run = Run.objects.get(pk=body["run_id"])
    assert run.status == "completed" and run.mode == "build" and run.agent_run is not None
    assert [s["name"] for s in run.selected_skills] == ["always", "prompt-style"]
    assert "Mode: build." in run.agent_run.system_prompt and "Short prompts." in run.agent_run.system_prompt
    roles = [m["role"] for m in api.get(f"{API}/sessions/{sid}/messages").json()]
    assert roles == ["user", "assistant"]
    assert api.get(f"{API}/runs/{run.pk}").json()["selected_skills"][0]["name"] == "always"


def test_skill_selection_is_deterministic(operator):
    from assistant.models import Skill
    from assistant.skills import select_skills

    for name in ("b", "a", "c"):
        Skill.objects.create(name=name, instructions=name, triggers=["pump", "tool"] if name == "c" else ["tool"])
    first = [s.name for s in select_skills(text="a pump tool", mode="build", draft_types=[])]
    assert first == ["c", "a", "b"] == [s.name for s in select_skills(text="a pump tool", mode="build", draft_types=[])]


def test_chat_mode_never_materialises_drafts(api):
    sid = post(api, f"{API}/sessions", {"mode": "chat"}).json()["id"]
    body = post(api, f"{API}/sessions/{sid}/messages", {"content": "Write a prompt for the investigator"}).json()
    assert body["drafts"] == [] and Draft.objects.count() == 0


def test_max_drafts_per_session(api):
    set_config(max_drafts_per_session=1)
    sid = post(api, f"{API}/sessions", {"mode": "build"}).json()["id"]
    post(api, f"{API}/sessions/{sid}/messages", {"content": "Make a skill called one"})
    body = post(api, f"{API}/sessions/{sid}/messages", {"content": "Make a skill called two"}).json()
    assert body["drafts"] == [] and "max_drafts_per_session" in body["delta_errors"][0]


def test_tools_projected_per_mode_never_include_approve_or_publish(operator, plant):
    from assistant.agents.author import author_tools
    from assistant.conf import AssistantConfig

    class In(BaseModel):
        draft_id: int

    @capability("testkit.approve_draft", description="x", input=In, tier="read")
    def approve(ctx, p):
        return {}

    try:
        read = author_tools("chat", AssistantConfig())
        build = author_tools("build", AssistantConfig())
        assert "workorders.get_failure_history" in read and "workorders.start_investigation" not in read
        assert "workorders.start_investigation" in build
        assert not any("approve" in n or "publish" in n for n in read + build)
        assert "workorders.get_failure_history" not in author_tools(
            "chat", AssistantConfig(disabled_domains=["workorders"])
        )
    finally:
        registry.unregister("testkit.approve_draft")


def test_plan_mode_creates_a_plan_through_the_orchestrator_capability(api, operator, swap_capability):
    class PlanIn(BaseModel):
        goal: str

    calls = []

    def create_plan(ctx, p):
        calls.append((ctx.user, p.goal))
        return {"id": 5, "title": p.goal, "status": "draft", "steps": [{"capability": "x"}]}

    swap_capability(
        Capability(
            "orchestrator.create_plan", "x", PlanIn, Tier.SAFE, (OPERATOR,), create_plan, tool_name="create_plan"
        )
    )
    sid = post(api, f"{API}/sessions", {"mode": "plan"}).json()["id"]
    body = post(api, f"{API}/sessions/{sid}/messages", {"content": "Replace the P-02 bearing"}).json()
    assert calls == [(operator, "Replace the P-02 bearing")]
    assert body["plan_card"] == {
        "component": "plan_card",
        "props": {"id": 5, "title": "Replace the P-02 bearing", "status": "draft", "steps": [{"capability": "x"}]},
    }
    assert "1 step(s)" in body["reply"]


def test_prompt_draft_is_stateless(api, operator):
    body = post(api, f"{API}/prompt-draft", {"content": "Make a skill called tidy"}).json()
    assert body["draft_deltas"][0]["type"] == "skill"
    assert Draft.objects.count() == 0 and Session.objects.count() == 0
    # its run's events are the user's own, like a session turn's (red team: they went to every socket)
    events = Event.objects.filter(type__in=["agent_start", "agent_end"])
    assert events.count() >= 2
    assert {e.payload.get("owner_id") for e in events} == {operator.pk}


def test_attachments_caps_and_extraction(api, operator):
    set_config(upload_max_bytes=2000)
    sid = post(api, f"{API}/sessions").json()["id"]
    big = post(api, f"{API}/sessions/{sid}/attachments", {"kind": "text_snippet", "name": "big", "text": "x" * 60_000})
    assert big.status_code == 201 and big.json()["truncated"] is True and big.json()["content_chars"] == 50_000

    csv_file = io.BytesIO(b"signal,value\nvibration,7.4\n")
    csv_file.name = "trend.csv"
    up = api.post(f"{API}/sessions/{sid}/attachments/upload", {"file": csv_file})
    assert up.status_code == 201, up.content
    assert Attachment.objects.get(pk=up.json()["id"]).content_text == "signal | value\nvibration | 7.4"

    huge = io.BytesIO(b"x" * 2001)
    huge.name = "huge.txt"
    assert api.post(f"{API}/sessions/{sid}/attachments/upload", {"file": huge}).status_code == 413

    for i in range(23):
        assert (
            post(api, f"{API}/sessions/{sid}/attachments", {"kind": "text_snippet", "text": f"n{i}"}).status_code == 201
        )
    over = post(api, f"{API}/sessions/{sid}/attachments", {"kind": "text_snippet", "text": "26th"})
    assert over.status_code == 422 and Attachment.objects.filter(session_id=sid).count() == 25

    att_id = up.json()["id"]
    assert api.delete(f"{API}/attachments/{att_id}").status_code == 204


def test_pdf_and_json_uploads_are_extracted(api):
    from pypdf import PdfWriter

    sid = post(api, f"{API}/sessions").json()["id"]
    buffer = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.write(buffer)
    pdf = io.BytesIO(buffer.getvalue())
    pdf.name = "manual.pdf"
    assert api.post(f"{API}/sessions/{sid}/attachments/upload", {"file": pdf}).status_code == 201
    js = io.BytesIO(b'{"a": 1}')
    js.name = "x.json"
    assert api.post(f"{API}/sessions/{sid}/attachments/upload", {"file": js}).status_code == 201
    bad = io.BytesIO(b"{nope")
    bad.name = "bad.json"
    assert api.post(f"{API}/sessions/{sid}/attachments/upload", {"file": bad}).status_code == 422


def test_library_resources_render_through_capabilities(api, plant):
    sid = post(api, f"{API}/sessions").json()["id"]
    kb = post(
        api, f"{API}/sessions/{sid}/attachments", {"kind": "library_resource", "resource_type": "kb_entry", "ref": "2"}
    )
    assert kb.status_code == 201, kb.content
    assert "SKF 6309" in Attachment.objects.get(pk=kb.json()["id"]).content_text
    missing = post(
        api,
        f"{API}/sessions/{sid}/attachments",
        {"kind": "library_resource", "resource_type": "prompt", "ref": "nobody"},
    )
    assert missing.status_code == 404


def test_attachment_of_another_owner_is_404(api, make_user):
    sid = post(api, f"{API}/sessions").json()["id"]
    att = post(api, f"{API}/sessions/{sid}/attachments", {"kind": "text_snippet", "text": "x"}).json()["id"]
    api.force_login(make_user("otto", OPERATOR))
    assert api.delete(f"{API}/attachments/{att}").status_code == 404
    assert post(api, f"{API}/sessions/{sid}/attachments", {"kind": "text_snippet", "text": "x"}).status_code == 404


def test_drafts_routes(client, operator, approver, make_user):
    client.force_login(operator)
    created = post(client, f"{API}/drafts", {"type": "tool", "name": "double", "spec": TOOL_SPEC})
    assert created.status_code == 201
    did = created.json()["id"]
    assert post(client, f"{API}/drafts/{did}/test").status_code == 409
    assert post(client, f"{API}/drafts/{did}/test").json()["allowed"] == ["validating"]
    assert post(client, f"{API}/drafts/{did}/validate").json()["status"] == "validated"
    assert post(client, f"{API}/drafts/{did}/test").json()["status"] == "tested"
    assert post(client, f"{API}/drafts/{did}/approve").status_code == 403  # operator is no approver

    client.force_login(make_user("otto", OPERATOR))
    assert client.get(f"{API}/drafts/{did}").status_code == 404
    assert patch(client, f"{API}/drafts/{did}", {"name": "mine"}).status_code == 404

    client.force_login(approver)
    assert post(client, f"{API}/drafts/{did}/approve", {"reason": "ok"}).json()["status"] == "approved"
    client.force_login(make_user("pat", OPERATOR, "approver"))
    assert post(client, f"{API}/drafts/{did}/publish").json()["status"] == "published"
    client.force_login(operator)
    assert [r["decision"] for r in client.get(f"{API}/drafts/{did}/reviews").json()] == ["approve"]
    edited = patch(client, f"{API}/drafts/{did}", {"spec": {**TOOL_SPEC, "description": "v2"}})
    assert edited.json()["status"] == "draft" and edited.json()["version"] == 2


def test_author_approving_own_draft_via_api_is_403(client, make_user):
    both = make_user("bea", OPERATOR, "approver")
    draft = make_tested_draft(both, spec=SKILL_SPEC, type="skill", name="s")
    client.force_login(both)
    response = post(client, f"{API}/drafts/{draft.pk}/approve")
    assert response.status_code == 403 and response.json()["code"] == "separation_of_duties"


def test_config_get_for_operators_patch_for_admins_rebuilds_and_audits(api, admin_user):
    body = api.get(f"{API}/config").json()
    assert body["engine"] == "fake" and body["agent_review"]["ready"] is False
    assert body["editable"] is False
    assert set(body["bounds"]) == {
        "max_turns",
        "max_questions_per_turn",
        "max_drafts_per_session",
        "max_open_drafts_per_author",
        "run_timeout_seconds",
    }
    assert patch(api, f"{API}/config", {"max_turns": 4}).status_code == 403  # governance is the admin's
    api.force_login(admin_user)
    patched = patch(api, f"{API}/config", {"max_turns": 4, "disabled_intents": ["create_tool"], "reasoning": True})
    assert patched.status_code == 200, patched.content
    assert patched.json()["bounds"]["max_turns"] == 4 and patched.json()["reasoning"] is True
    assert patched.json()["editable"] is True
    assert AuditRecord.objects.filter(action="assistant.config_update").count() == 1
    assert patch(api, f"{API}/config", {"max_turns": 0}).status_code == 422
    assert patch(api, f"{API}/config", {"engine": "nonsense"}).status_code == 422
    assert patch(api, f"{API}/config", {"bogus": 1}).status_code == 422


def test_disabled_intent_blocks_the_delta(api):
    set_config(disabled_intents=["create_skill"])
    sid = post(api, f"{API}/sessions", {"mode": "build"}).json()["id"]
    body = post(api, f"{API}/sessions/{sid}/messages", {"content": "Make a skill called x"}).json()
    assert body["drafts"] == [] and body["delta_errors"] == ["create_skill is disabled."]


def test_run_of_another_owner_is_404(api, make_user):
    sid = post(api, f"{API}/sessions", {"mode": "chat"}).json()["id"]
    run_id = post(api, f"{API}/sessions/{sid}/messages", {"content": "hello"}).json()["run_id"]
    assert api.get(f"{API}/runs/{run_id}").status_code == 200
    api.force_login(make_user("otto", OPERATOR))
    assert api.get(f"{API}/runs/{run_id}").status_code == 404


def test_library_resources_of_every_kind(api, operator, approver, make_user, plant, swap_capability):
    from assistant.models import Skill
    from assistant.services.drafts import draft_approve
    from assistant.services.publish import draft_publish

    from .factories import PROMPT_SPEC

    class WoIn(BaseModel):
        work_order_id: int

    swap_capability(
        Capability(
            "workorders.get_work_order", "x", WoIn, Tier.READ, (OPERATOR,),
            lambda ctx, p: {"id": p.work_order_id, "title": "P-02 trip", "rca_summary": "bearing"},
            tool_name="get_work_order",
        )
    )  # fmt: skip
    Skill.objects.create(name="tidy", instructions="Keep it tidy.")
    releaser = make_user("pat", "approver")
    draft_publish(draft=draft_approve(draft=make_tested_draft(operator), actor=approver), actor=releaser)
    prompt = make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="inv")
    draft_publish(draft=draft_approve(draft=prompt, actor=approver), actor=releaser)
    sid = post(api, f"{API}/sessions").json()["id"]
    expected = {
        ("prompt", "investigator"): "Always check {{focus}}",
        ("prompt", "investigator@v1"): "Always check {{focus}}",
        ("skill", "tidy"): "Keep it tidy.",
        ("tool", "double"): "params['x'] * 2",
        ("work_order", "7"): "P-02 trip",
    }
    for (kind, ref), text in expected.items():
        response = post(
            api, f"{API}/sessions/{sid}/attachments", {"kind": "library_resource", "resource_type": kind, "ref": ref}
        )
        assert response.status_code == 201, (kind, response.content)
        assert text in Attachment.objects.get(pk=response.json()["id"]).content_text
    bad = post(
        api, f"{API}/sessions/{sid}/attachments", {"kind": "library_resource", "resource_type": "secrets", "ref": "1"}
    )
    assert bad.status_code == 422


def test_patches_refuse_unknown_fields_and_an_empty_draft_edit_changes_nothing(client, operator):
    """A client typo (or {"status": "published"}) is a 422 naming the field, and writes nothing."""
    client.force_login(operator)
    sid = client.post("/api/v1/assistant/sessions", {"title": "t"}, content_type="application/json").json()["id"]
    response = client.patch(f"/api/v1/assistant/sessions/{sid}", {"titel": "x"}, content_type="application/json")
    assert response.status_code == 422 and response.json()["field"] == "titel", response.content

    draft = make_tested_draft(operator)
    before = (draft.status, draft.version)
    for body in ({"status": "published"}, {}):
        response = client.patch(f"/api/v1/assistant/drafts/{draft.pk}", body, content_type="application/json")
        assert response.status_code == 422, (body, response.content)
        assert response.json()["field"] in ("status", "spec"), response.content
    draft.refresh_from_db()
    assert (draft.status, draft.version) == before  # no partial write: still tested, same version


def test_draft_list_refuses_an_unknown_status(client, operator):
    client.force_login(operator)
    response = client.get("/api/v1/assistant/drafts?status=bogus")
    assert response.status_code == 422 and response.json()["field"] == "status", response.content


@pytest.mark.parametrize("flag", ["no", "false", 0])
def test_archiving_a_session_takes_only_a_json_boolean(client, operator, flag):
    """ "no" archived the session (a non-empty string read as true); now a 422 naming the field."""
    client.force_login(operator)
    sid = post(client, f"{API}/sessions", {"title": "Keep me"}).json()["id"]
    response = patch(client, f"{API}/sessions/{sid}", {"archived": flag})
    assert response.status_code == 422 and response.json()["field"] == "archived"
    assert client.get(f"{API}/sessions/{sid}").json()["archived"] is False
    assert patch(client, f"{API}/sessions/{sid}", {"archived": False}).json()["archived"] is False
