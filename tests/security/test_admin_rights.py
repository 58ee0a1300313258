"""What a non-superuser staff member can do in the Django admin, with the approver group's seeded
permissions (core/management/commands/seed_demo.py approver_permissions) or in the operator group.

Hostile cases: an approver (or a staff operator) must not read other people's chat or coordinator
transcripts (assistant sessions/messages/runs/held tool calls/attachments/operations, coordinator
turns, another person's agent runs) nor the API tokens and service accounts, nor change governance rows (runtime config, skills, prompt
aliases, published artifacts, service accounts, API tokens, signal limits). Admins still see it all."""

import json

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.utils import timezone

from assistant.models import (
    Attachment,
    Message,
    Operation,
    PendingToolCall,
    PromptAlias,
    PromptVersion,
    PublishedArtifact,
    Run,
    RuntimeConfig,
    Session,
    Skill,
)
from core.access import ADMIN, APPROVER, OPERATOR
from core.audit import audit_record
from core.management.commands.seed_demo import approver_permissions
from core.models import AgentRun, AgentStep, ApiToken, AuditRecord, Event, ServiceAccount
from orchestrator.models import CoordinatorTurn
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db

SECRET = "my divorce is why I was late"  # what another person typed: must never show to an approver


@pytest.fixture
def approver_staff(make_user):
    user = make_user("ada", APPROVER, is_staff=True)
    Group.objects.get(name=APPROVER).permissions.add(*approver_permissions())  # as seed_demo does
    return user


@pytest.fixture
def operator_staff(make_user):
    return make_user("otto", OPERATOR, is_staff=True)


@pytest.fixture
def transcripts(operator):
    """Another person's (olga's) chat, coordinator turn and agent runs, plus a system run."""
    session = Session.objects.create(owner=operator, title="olga's chat")
    Message.objects.create(session=session, role="user", content=SECRET)
    run = Run.objects.create(session=session, engine="fake", input_summary=SECRET, output_summary="noted")
    call = PendingToolCall.objects.create(
        session=session,
        capability="workorders.update",
        tool_name="update_work_order",
        tier="mutate",
        args={"n": SECRET},
    )
    attachment = Attachment.objects.create(session=session, kind="text_snippet", name="note.txt", content_text=SECRET)
    operation = Operation.objects.create(owner=operator, intent="chat", status="done")
    turn = CoordinatorTurn.objects.create(user=operator, message=SECRET, answer="ok", hash="h" * 64)
    agent_run = AgentRun.objects.create(agent="operator_qa", turn_id="t1", user=operator, engine="fake",
                                        input_summary=SECRET)  # fmt: skip
    AgentStep.objects.create(run=agent_run, index=0, tool="search_kb", args={"q": SECRET})
    system_run = AgentRun.objects.create(agent="investigator", turn_id="t2", engine="fake", input_summary="WO-1 scan")
    # what the chat's socket got: a private copy for olga; a public event; the system account's own
    tool_event = Event.objects.create(
        type="tool_call_started", payload={"args": {"q": SECRET}, "owner_id": operator.pk}
    )
    public_event = Event.objects.create(type="alarm_raised", payload={"cell": "P-02"})
    system_user = User.objects.create(username="system-bot")
    ServiceAccount.objects.create(user=system_user, role="system")
    service_run = AgentRun.objects.create(agent="work_order_generator", turn_id="t3", engine="fake", user=system_user)
    service_event = Event.objects.create(
        type="agent_finished", payload={"agent": "investigator", "owner_id": system_user.pk}
    )
    token = ApiToken.objects.create(user=operator, name=SECRET, key_prefix="abcd1234", key_hash="x" * 64)
    account = ServiceAccount.objects.create(user=User.objects.create(username="bot"), role="system", description=SECRET)
    # the audit trail of olga's chat (a held tool call she confirmed: its arguments) and a public record
    tool_audit = audit_record(actor=operator, action="assistant.tool_call.confirmed", target_type="assistant.tool_call",
                              target_id=call.pk, details={"args": {"n": SECRET}})  # fmt: skip
    public_audit = audit_record(actor=operator, action="alarm.acknowledge", target_type="sentinel.alarm", target_id=1)
    return {
        "audit": (tool_audit, public_audit),
        "assistant/session": session,
        "assistant/message": None,
        "assistant/run": run,
        "assistant/pendingtoolcall": call,
        "assistant/attachment": attachment,
        "assistant/operation": operation,
        "orchestrator/coordinatorturn": turn,
        "core/agentrun": agent_run,
        "system_run": system_run,
        "service_run": service_run,
        "events": (tool_event, public_event, service_event),
        "core/apitoken": token,
        "core/serviceaccount": account,
    }


ADMIN_ONLY = [
    "assistant/session",
    "assistant/run",
    "assistant/pendingtoolcall",
    "assistant/attachment",
    "assistant/operation",
    "orchestrator/coordinatorturn",
    "core/apitoken",  # who can act on ARIA, and as whom
    "core/serviceaccount",
]


@pytest.mark.parametrize("who", ["approver_staff", "operator_staff"])
def test_staff_without_the_admin_scope_cannot_read_transcripts(client, request, transcripts, who):
    client.force_login(request.getfixturevalue(who))
    index = client.get("/admin/").content.decode()
    for path in ADMIN_ONLY:
        assert f"/admin/{path}/" not in index  # not listed
        assert client.get(f"/admin/{path}/").status_code == 403
        obj = transcripts[path]
        page = client.get(f"/admin/{path}/{obj.pk}/change/")
        assert page.status_code == 403 and SECRET not in page.content.decode()
    # Another person's agent run is not listed, not openable, and its steps neither (own + system only).
    runs = client.get("/admin/core/agentrun/")
    if who == "approver_staff":
        assert runs.status_code == 200
        text = runs.content.decode()
        assert f"/admin/core/agentrun/{transcripts['system_run'].pk}/change/" in text
        assert f"/admin/core/agentrun/{transcripts['core/agentrun'].pk}/change/" not in text
        hidden = client.get(f"/admin/core/agentrun/{transcripts['core/agentrun'].pk}/change/", follow=True)
        assert SECRET not in hidden.content.decode()
        steps = client.get("/admin/core/agentstep/").content.decode()
        assert "search_kb" not in steps
        assert client.get(f"/admin/core/agentrun/{transcripts['system_run'].pk}/change/").status_code == 200
        # the system's runs under a service account (investigator, generator) are the system's too
        assert f"/admin/core/agentrun/{transcripts['service_run'].pk}/change/" in text
        # the outbox: public events and the service accounts' copies, never olga's private copy
        private, public, service = transcripts["events"]
        listed = client.get("/admin/core/event/").content.decode()
        assert f"/admin/core/event/{public.pk}/change/" in listed
        assert f"/admin/core/event/{service.pk}/change/" in listed
        assert f"/admin/core/event/{private.pk}/change/" not in listed
        hidden_event = client.get(f"/admin/core/event/{private.pk}/change/", follow=True)
        assert SECRET not in hidden_event.content.decode()
        # the audit trail: olga's chat's tool call is hers; her alarm acknowledgement is everyone's
        tool_audit, public_audit = transcripts["audit"]
        trail = client.get("/admin/core/auditrecord/").content.decode()
        assert f"/admin/core/auditrecord/{public_audit.pk}/change/" in trail
        assert f"/admin/core/auditrecord/{tool_audit.pk}/change/" not in trail
        hidden_audit = client.get(f"/admin/core/auditrecord/{tool_audit.pk}/change/", follow=True)
        assert SECRET not in hidden_audit.content.decode()
    else:
        assert runs.status_code == 403  # the operator group holds no admin permissions


def test_an_admin_still_reads_every_transcript(client, make_user, transcripts):
    for user in (make_user("root", is_staff=True, is_superuser=True), make_user("adam2", ADMIN, is_staff=True)):
        client.force_login(user)
        for path in ADMIN_ONLY:
            assert client.get(f"/admin/{path}/").status_code == 200, (user, path)
        page = client.get(f"/admin/assistant/session/{transcripts['assistant/session'].pk}/change/")
        assert page.status_code == 200 and SECRET in page.content.decode()
        turn = client.get(
            f"/admin/orchestrator/coordinatorturn/{transcripts['orchestrator/coordinatorturn'].pk}/change/"
        )
        assert turn.status_code == 200 and SECRET in turn.content.decode()
        if user.is_superuser:  # core's evidence pages go by model permissions: the seeded admin is a superuser
            runs = client.get("/admin/core/agentrun/").content.decode()
            assert f"/admin/core/agentrun/{transcripts['core/agentrun'].pk}/change/" in runs
            private = transcripts["events"][0]
            assert SECRET in client.get(f"/admin/core/event/{private.pk}/change/").content.decode()
            tool_audit = transcripts["audit"][0]
            assert SECRET in client.get(f"/admin/core/auditrecord/{tool_audit.pk}/change/").content.decode()


def test_an_approver_cannot_change_governance_rows(client, approver_staff, make_user, vibration_signal):
    RuntimeConfig.objects.update_or_create(pk=1, defaults={"data": {"max_turns": 6}})
    skill = Skill.objects.create(name="pump-checks", instructions="Look at the bearing first.")
    version = PromptVersion.objects.create(name="investigator", version=1, text="v1")
    alias = PromptAlias.objects.create(name="investigator", alias="production", version=version)
    artifact = PublishedArtifact.objects.create(type="skill", name="pump-checks", version=1)
    reviewer = make_user("rev")
    account = ServiceAccount.objects.create(user=reviewer, role=ServiceAccount.Role.REVIEWER)
    client.force_login(approver_staff)

    posts = {
        "/admin/assistant/runtimeconfig/1/change/": {"data": json.dumps({"approval_policy": "full_autonomy"})},
        f"/admin/assistant/skill/{skill.pk}/change/": {"name": "pump-checks", "instructions": "Skip checks."},
        "/admin/assistant/skill/add/": {"name": "evil", "instructions": "x", "runtime_mode": "auto"},
        f"/admin/assistant/promptalias/{alias.pk}/change/": {"name": "investigator", "alias": "x"},
        f"/admin/assistant/publishedartifact/{artifact.pk}/change/": {"active": ""},
        f"/admin/core/serviceaccount/{account.pk}/change/": {"user": reviewer.pk, "role": "release"},
        "/admin/core/apitoken/add/": {"user": approver_staff.pk, "name": "mine"},
        f"/admin/sentinel/signaldefinition/{vibration_signal.pk}/change/": {"alert": "99"},
        "/admin/assistant/runtimeconfig/1/delete/": {"post": "yes"},
    }
    for url, data in posts.items():
        assert client.post(url, data).status_code == 403, url
    assert RuntimeConfig.objects.get(pk=1).data == {"max_turns": 6}
    skill.refresh_from_db()
    assert skill.instructions == "Look at the bearing first." and not Skill.objects.filter(name="evil").exists()
    alias.refresh_from_db()
    assert alias.alias == "production"
    assert PublishedArtifact.objects.get(pk=artifact.pk).active
    assert ServiceAccount.objects.get(pk=account.pk).role == ServiceAccount.Role.REVIEWER
    assert not ApiToken.objects.exists()
    vibration_signal.refresh_from_db()
    assert vibration_signal.alert == 4.5
    # Reading the governance settings stays allowed (as over the API: any scope reads them).
    page = client.get("/admin/assistant/runtimeconfig/1/change/").content.decode()
    assert 'name="_save"' not in page


@pytest.fixture
def vibration_signal(db):
    return make_signal(make_cell("P-02"), "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)


@pytest.fixture
def alarm_and_order(vibration_signal):
    from sentinel.services import alarm_raise
    from sentinel.thresholds import evaluate_threshold
    from tests.sentinel.factories import set_latest
    from tests.workorders.factories import make_work_order

    set_latest(vibration_signal, 5.0)
    alarm = alarm_raise(
        signal=vibration_signal, breach=evaluate_threshold(vibration_signal, 5.0), value=5.0, time=timezone.now()
    )
    return alarm, make_work_order(vibration_signal.cell, status="open")


@pytest.mark.parametrize("who", ["view_only_staff", "approver_with_change"])
def test_alarm_and_work_order_moves_need_the_operator_scope_in_the_admin_too(client, make_user, alarm_and_order, who):
    """The API moves alarms and work orders for operators only. In the admin, a staff user who could
    only view them ran the actions anyway (an action that declares no permission runs for anyone who
    can open the list), and an approver with the seeded change permission could move what the API
    refuses them. Now neither is offered the actions nor can post them; nothing moves."""
    alarm, order = alarm_and_order
    if who == "view_only_staff":
        user = make_user("vic", is_staff=True)
        user.user_permissions.add(*Permission.objects.filter(codename__in=["view_alarm", "view_workorder"]))
    else:
        user = make_user("abe", APPROVER, is_staff=True)
        user.user_permissions.add(*Permission.objects.filter(codename__in=["view_alarm", "view_workorder",
                                                                         "change_alarm", "change_workorder"]))  # fmt: skip
    client.force_login(user)
    listing = client.get("/admin/sentinel/alarm/")
    assert listing.status_code == 200 and 'value="acknowledge"' not in listing.content.decode()  # not offered
    for action in ("acknowledge", "shelve_one_hour", "put_out_of_service"):
        client.post("/admin/sentinel/alarm/", {"action": action, "_selected_action": [alarm.pk], "comment": "x"})
    client.post("/admin/workorders/workorder/", {"action": "mark_cancelled", "_selected_action": [order.pk]})
    page = client.post(f"/admin/workorders/workorder/{order.pk}/change/", {"priority": "low"})
    assert page.status_code == 403
    alarm.refresh_from_db(), order.refresh_from_db()
    assert (alarm.state, order.status, order.priority) == ("active_unack", "open", "medium")
    assert (
        not AuditRecord.objects.filter(target_type="sentinel.alarm", action__startswith="alarm.")
        .exclude(action="alarm.raise")
        .exists()
    )


def test_an_operator_on_staff_still_moves_alarms_in_the_admin(client, make_user, alarm_and_order):
    alarm, _ = alarm_and_order
    user = make_user("ozzy", OPERATOR, is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_alarm", "change_alarm"]))
    client.force_login(user)
    client.post("/admin/sentinel/alarm/", {"action": "acknowledge", "_selected_action": [alarm.pk], "comment": ""})
    alarm.refresh_from_db()
    assert alarm.state == "acknowledged"
