"""Hiding an alarm needs a reason (ISA-18.2: taking an alarm out of service, or shelving it, is an
authorised act that records why). Blank, whitespace-only, missing or too long → 422 naming `comment`,
the alarm's state unchanged, no AlarmEvent and no audit record; with a reason → the move, and the
reason on the event and the audit record. Service, API and admin action alike."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.errors import InvalidInput
from core.models import AuditRecord
from sentinel.models import Alarm
from sentinel.schemas import REASON_PATTERN
from sentinel.services import alarm_put_out_of_service, alarm_raise, alarm_shelve
from sentinel.services.alarms import REASON_MAX_LENGTH
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db

# Zero-width and filler characters draw nothing: a reason of them reads as blank on every page.
INVISIBLE = ["\u200b", "\ufeff\u2060 \u200d", "\u3164", "\u2800\u00ad"]
BLANKS = ["", "   ", "\t\n", "\x1f \x1c", "\u00a0\u2003", *INVISIBLE]
ROUTES = {
    "out_of_service": ("out-of-service", {}, "out_of_service", "alarm.out_of_service"),
    "shelve": ("shelve", {"minutes": 30}, "shelved", "alarm.shelve"),
}


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


def _unchanged(alarm: Alarm) -> None:
    alarm.refresh_from_db()
    assert alarm.state == "active_unack"
    assert list(alarm.events.values_list("to_state", flat=True)) == ["active_unack"]
    assert not AuditRecord.objects.filter(action__in=["alarm.out_of_service", "alarm.shelve"]).exists()


def _hide(kind: str, alarm: Alarm, actor, comment) -> Alarm:
    if kind == "shelve":
        return alarm_shelve(alarm=alarm, actor=actor, minutes=30, comment=comment)
    return alarm_put_out_of_service(alarm=alarm, actor=actor, comment=comment)


# --- service ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ROUTES)
@pytest.mark.parametrize("comment", [*BLANKS, None, "x" * (REASON_MAX_LENGTH + 1)])
def test_service_refuses_a_blank_or_too_long_reason(alarm, operator, kind, comment):
    with pytest.raises(InvalidInput) as exc:
        _hide(kind, alarm, operator, comment)
    assert exc.value.field == "comment" and exc.value.status_code == 422
    _unchanged(alarm)


def test_service_out_of_service_has_no_default_reason(alarm, operator):
    with pytest.raises(TypeError):
        alarm_put_out_of_service(alarm=alarm, actor=operator)  # type: ignore[call-arg]
    _unchanged(alarm)


@pytest.mark.parametrize("kind", ROUTES)
def test_service_records_the_stripped_reason(alarm, operator, kind):
    _, _, state, action = ROUTES[kind]
    _hide(kind, alarm, operator, "  transmitter swap, permit 4711  ")
    alarm.refresh_from_db()
    assert alarm.state == state
    event = alarm.events.get(to_state=state)
    assert (event.comment, event.actor) == ("transmitter swap, permit 4711", operator)
    record = AuditRecord.objects.get(action=action, target_id=str(alarm.pk))
    assert record.details["comment"] == "transmitter swap, permit 4711"
    assert record.actor_label == "olga"


# --- API ----------------------------------------------------------------------------------------


def _post(client, url, body):
    if body is None:  # no body at all (the test client's post() would send "{}")
        return client.generic("POST", url, b"", content_type="application/json")
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("kind", ROUTES)
@pytest.mark.parametrize("comment", [*BLANKS, "x" * (REASON_MAX_LENGTH + 1), 42, None, "missing"])
def test_api_refuses_without_a_reason_naming_comment(api_client, alarm, kind, comment):
    path, extra, _, _ = ROUTES[kind]
    body = dict(extra) if comment == "missing" else {**extra, "comment": comment}
    response = _post(api_client, f"/api/v1/alarms/{alarm.pk}/{path}", body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "comment"
    assert response.json()["detail"].startswith("comment")
    _unchanged(alarm)


@pytest.mark.parametrize("kind", ROUTES)
def test_api_without_a_body_names_comment(api_client, alarm, kind):
    response = _post(api_client, f"/api/v1/alarms/{alarm.pk}/{ROUTES[kind][0]}", None)
    assert response.status_code == 422, response.content
    assert (response.json()["field"], response.json()["detail"]) == ("comment", "comment: Field required")
    assert [e["loc"] for e in response.json()["errors"]] == [["body", "payload", "comment"]]
    _unchanged(alarm)


@pytest.mark.parametrize("kind", ROUTES)
@pytest.mark.parametrize("comment", ["\x1f \x1c", "\x1d", " \x1e\t", "\x85", *INVISIBLE])
def test_api_reason_of_only_control_characters_is_refused_in_words(api_client, alarm, kind, comment):
    path, extra, _, _ = ROUTES[kind]
    response = _post(api_client, f"/api/v1/alarms/{alarm.pk}/{path}", {**extra, "comment": comment})
    assert response.status_code == 422, response.content
    detail = response.json()["detail"]
    assert detail == "comment: must give a reason: only spaces, control or invisible characters were sent"
    assert "pattern" not in detail and "\\x1c" not in detail
    _unchanged(alarm)


def test_the_schema_still_states_the_reason_pattern(api_client):
    schemas = api_client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    for name in ("ShelveIn", "ReasonIn"):
        pattern = schemas[name]["properties"]["comment"]["pattern"]
        # \x85 (NEL) by name: Python's \s has it (str.strip() removes it) but JSON Schema's (ECMA-262) has not
        assert pattern == REASON_PATTERN and pattern.startswith("[^\\s\\x1c-\\x1f\\x85\\u00ad")
        assert [re.search(pattern, text) is None for text in ("\u200b\ufeff", " ", "ok")] == [True, True, False]


@pytest.mark.parametrize("kind", ROUTES)
def test_api_with_a_reason_moves_and_records_it(api_client, alarm, kind):
    path, extra, state, action = ROUTES[kind]
    response = _post(api_client, f"/api/v1/alarms/{alarm.pk}/{path}", {**extra, "comment": " instrument swap "})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["state"] == state
    assert body["events"][-1]["comment"] == "instrument swap"
    assert AuditRecord.objects.get(action=action, target_id=str(alarm.pk)).details["comment"] == "instrument swap"


def test_api_scope_is_still_checked_first_for_a_reasoned_request(client, approver, alarm):
    client.force_login(approver)
    response = _post(client, f"/api/v1/alarms/{alarm.pk}/out-of-service", {"comment": "not mine to do"})
    assert response.status_code == 403
    _unchanged(alarm)


# --- admin action -------------------------------------------------------------------------------

ADMIN_ACTIONS = {
    "put_out_of_service": ("out_of_service", "alarm.out_of_service"),
    "shelve_one_hour": ("shelved", "alarm.shelve"),
}


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.mark.parametrize("action", ADMIN_ACTIONS)
@pytest.mark.parametrize("comment", ["", "   ", "\x1f\x1c", None, "\u200b\u200b"])
def test_admin_action_without_a_reason_changes_nothing(staff, alarm, action, comment):
    data = {"action": action, "_selected_action": [alarm.pk]}
    if comment is not None:
        data["comment"] = comment
    response = staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert response.status_code == 200
    said = [str(m) for m in response.context["messages"]]
    assert len(said) == 1 and said[0].startswith("Reason: say why the alarm is "), said
    assert "reason is required" in said[0] and "comment" not in said[0]
    _unchanged(alarm)


@pytest.mark.parametrize("action", ADMIN_ACTIONS)
def test_admin_action_with_a_too_long_reason_says_so(staff, alarm, action):
    data = {"action": action, "_selected_action": [alarm.pk], "comment": "x" * (REASON_MAX_LENGTH + 1)}
    response = staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert response.status_code == 200
    said = [str(m) for m in response.context["messages"]]
    assert said == [
        f"Reason: Ensure this value has at most {REASON_MAX_LENGTH} characters (it has {REASON_MAX_LENGTH + 1}). "
        "No alarm was changed."
    ]
    _unchanged(alarm)


def test_admin_without_an_action_still_says_no_action_selected(staff, alarm):
    data = {"action": "", "_selected_action": [alarm.pk], "comment": "x" * (REASON_MAX_LENGTH + 1)}
    response = staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert [str(m) for m in response.context["messages"]] == ["No action selected."]
    _unchanged(alarm)


@pytest.mark.parametrize("action", ADMIN_ACTIONS)
def test_admin_action_with_a_reason_records_it(staff, alarm, action):
    state, audit = ADMIN_ACTIONS[action]
    data = {"action": action, "_selected_action": [alarm.pk], "comment": "pump isolated for bearing work"}
    assert staff.post("/admin/sentinel/alarm/", data, follow=True).status_code == 200
    alarm.refresh_from_db()
    assert alarm.state == state
    assert alarm.events.get(to_state=state).comment == "pump isolated for bearing work"
    assert AuditRecord.objects.get(action=audit).details["comment"] == "pump isolated for bearing work"


def test_admin_changelist_offers_the_reason_field(staff, alarm):
    response = staff.get("/admin/sentinel/alarm/")
    assert response.status_code == 200
    assert b'name="comment"' in response.content
