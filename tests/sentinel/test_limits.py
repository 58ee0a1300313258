"""Management of change for alarm limits: `signal_limits_change` and the gated capability over it."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from core.access import APPROVER, OPERATOR
from core.audit import audit_verify
from core.capabilities import CapabilityContext, Tier, dispatch, registry
from core.errors import InvalidInput
from core.models import AuditRecord, Event
from sentinel.models import Alarm, SignalDefinition, SignalLatest
from sentinel.services.evaluation import signals_evaluate
from sentinel.services.limits import signal_for_change, signal_limits_change
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db
CAPABILITY = "sentinel.change_signal_limits"
REASON = "The new bearing runs warmer."


def change(signal, actor, reason=REASON, key="", **changes):
    return signal_limits_change(signal=signal, changes=changes, reason=reason, actor=actor, idempotency_key=key)


def limit_audits(signal) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(action="signal.limits_change", target_id=str(signal.pk)))


def test_a_change_is_written_audited_and_published(vibration, operator):
    result = change(vibration, operator, alert=4.8, deadband=0.3)

    vibration.refresh_from_db()
    assert (vibration.alert, vibration.deadband, vibration.trip) == (4.8, 0.3, 7.1)
    assert result.changed == ["alert", "deadband"] and not result.replayed
    [record] = limit_audits(vibration)
    assert record.actor == operator and record.target_type == "sentinel.signal" and record.pk == result.audit_id
    details = record.details
    assert details["before"]["alert"] == 4.5 and details["after"]["alert"] == 4.8
    assert details["before"]["trip"] == details["after"]["trip"] == 7.1
    assert details["reason"] == REASON and details["requested_by"] == "olga" and details["changed"] == result.changed
    [event] = Event.objects.filter(type="signal_limits_changed")
    assert event.payload == {
        "cell_id": vibration.cell_id,
        "signal_def_id": vibration.pk,
        "changes": {"alert": {"before": 4.5, "after": 4.8}, "deadband": {"before": 0.2, "after": 0.3}},
        "reason": REASON,
    }
    assert "alert 4.5 → 4.8" in result.summary()
    assert audit_verify() is None


@pytest.mark.parametrize(
    ("fixture", "changes", "field", "words"),
    [
        ("vibration", {"alert": 7.5}, "alert", "must be below trip (7.1)"),
        ("vibration", {"trip": 4.0}, "trip", "must be above alert (4.5)"),
        ("vibration", {"high_alert": 8.0}, "high_alert", "must be below trip"),
        ("vibration", {"alert": 5.0, "high_alert": 5.0}, "alert", "must be below high_alert"),
        ("vibration", {"deadband": -0.1}, "deadband", "0 or more"),
        ("vibration", {"on_delay_seconds": -1}, "on_delay_seconds", "whole number"),
        ("pressure", {"low_alert": 9.5}, "low_alert", "must be below alert (9)"),
        ("pressure", {"alert": 2.0}, "alert", "must be above low_alert (3)"),
        ("pressure", {"deadband": 3.0}, "deadband", "no normal band"),
    ],
)
def test_an_inconsistent_set_is_refused_naming_the_field(request, operator, fixture, changes, field, words):
    signal = request.getfixturevalue(fixture)
    before = SignalDefinition.objects.values().get(pk=signal.pk)

    with pytest.raises(InvalidInput) as refused:
        change(signal, operator, **changes)

    assert refused.value.field == field and words in refused.value.message
    assert refused.value.message.startswith(f"{field}: ")
    assert SignalDefinition.objects.values().get(pk=signal.pk) == before
    assert not limit_audits(signal) and not Event.objects.filter(type="signal_limits_changed").exists()


@pytest.mark.parametrize("reason", ["   ", "\u200b\u2060", " \ufeff "])  # blank, or only zero-width characters
def test_a_change_needs_a_reason(vibration, operator, reason):
    with pytest.raises(InvalidInput) as refused:
        change(vibration, operator, reason=reason, alert=4.8)
    assert refused.value.field == "reason"
    vibration.refresh_from_db()
    assert vibration.alert == 4.5


def test_the_signal_is_found_by_id_or_tag_and_key_and_misses_name_the_field(vibration, pressure):
    assert signal_for_change(signal_id=vibration.pk) == vibration
    assert signal_for_change(cell_tag="p-02", signal_key="discharge_pressure_bar") == pressure
    misses = [
        ({"signal_id": 999_999}, "signal_id"),
        ({"cell_tag": "X-99", "signal_key": "vibration_mm_s"}, "cell_tag"),
        ({"cell_tag": "P-02", "signal_key": "flow_m3_h"}, "signal_key"),
        ({"cell_tag": "P-02"}, "signal_id"),
    ]
    for lookup, field in misses:
        with pytest.raises(InvalidInput) as missed:
            signal_for_change(**lookup)
        assert missed.value.field == field and missed.value.message.startswith(f"{field}: ")
    with pytest.raises(InvalidInput) as listed:
        signal_for_change(cell_tag="P-02", signal_key="flow_m3_h")
    assert "discharge_pressure_bar, vibration_mm_s" in listed.value.message


def test_raising_the_limit_clears_an_alarm_now_inside_limit_minus_deadband(vibration, operator):
    # Given an alert alarm raised at 4.7 and a value that fell to 4.55 (still above 4.5 - 0.2)
    set_latest(vibration, 4.7)
    [alarm_id] = signals_evaluate(signal_ids=[vibration.pk]).raised
    set_latest(vibration, 4.55)
    assert signals_evaluate(signal_ids=[vibration.pk]).cleared == []

    # When the alert limit goes to 4.8 (clear below 4.6)
    result = change(vibration, operator, alert=4.8)

    # Then the ordinary evaluation clears it, after the change in the audit chain
    assert result.alarms == {"raised": [], "escalated": [], "cleared": [alarm_id]}
    assert Alarm.objects.get(pk=alarm_id).state == "cleared"
    actions = list(AuditRecord.objects.filter(id__gte=result.audit_id).values_list("action", flat=True))
    assert actions[:2] == ["signal.limits_change", "alarm.clear"]
    assert "cleared alarm #" in result.summary()


def test_a_limit_still_below_the_value_plus_deadband_keeps_the_alarm(vibration, operator):
    set_latest(vibration, 4.7)
    [alarm_id] = signals_evaluate(signal_ids=[vibration.pk]).raised
    set_latest(vibration, 4.65)

    result = change(vibration, operator, alert=4.8)  # 4.65 is not below 4.8 - 0.2

    assert result.alarms["cleared"] == [] and Alarm.objects.get(pk=alarm_id).state == "active_unack"


def test_lowering_the_limit_below_the_value_raises_an_alarm(vibration, operator):
    set_latest(vibration, 4.3)
    assert signals_evaluate(signal_ids=[vibration.pk]).raised == []

    result = change(vibration, operator, alert=4.0)

    [alarm] = Alarm.objects.filter(signal=vibration)
    assert result.alarms["raised"] == [alarm.pk]
    assert (alarm.threshold_field, alarm.threshold_value, alarm.value) == ("alert", 4.0, 4.3)


def test_lowering_the_limit_respects_the_on_delay(vibration, operator):
    vibration.on_delay_seconds = 10
    vibration.save(update_fields=["on_delay_seconds"])
    set_latest(vibration, 4.3)

    result = change(vibration, operator, alert=4.0)

    assert result.alarms["raised"] == [] and not Alarm.objects.filter(signal=vibration).exists()
    # the breach clock started; a later scan raises once the on-delay has passed
    assert SignalLatest.objects.get(signal=vibration).breach_since is not None


def test_a_retried_step_attempt_applies_once(vibration, operator):
    first = change(vibration, operator, key="plan1-step2-abc", alert=4.8)
    # someone else moves the limit before the retry arrives
    change(vibration, operator, key="other", alert=5.0)

    again = change(vibration, operator, key="plan1-step2-abc", alert=4.8)

    vibration.refresh_from_db()
    assert vibration.alert == 5.0  # the retry did not apply 4.8 over the later change
    assert again.replayed and again.audit_id == first.audit_id and again.changed == ["alert"]
    assert again.before["alert"] == 4.5 and again.after["alert"] == 4.8
    assert len(limit_audits(vibration)) == 2
    assert Event.objects.filter(type="signal_limits_changed").count() == 2


def test_a_request_that_changes_nothing_is_a_no_op(vibration, operator):
    result = change(vibration, operator, key="k1", alert=4.5, trip=7.1)

    assert result.changed == [] and result.audit_id is None and "unchanged" in result.summary()
    assert not limit_audits(vibration) and not Event.objects.filter(type="signal_limits_changed").exists()


# --- the capability --------------------------------------------------------------------------------


def call(user, args, **extra):
    return dispatch(CAPABILITY, args, ctx=CapabilityContext(user=user, agent="orchestrator", extra=extra))


def test_the_capability_is_gated_for_operators():
    cap = registry.get(CAPABILITY)
    assert cap.tier == Tier.GATED and cap.scopes == (OPERATOR,) and cap.tool_name == "change_signal_limits"


def test_the_capability_changes_by_tag_and_key_and_honours_the_attempt_key(vibration, operator):
    args = {"cell_tag": "P-02", "signal_key": "vibration_mm_s", "alert": 4.8, "reason": REASON}
    extra = {"idempotency_key": "plan7-step2-x", "plan_id": 7, "step_id": 12}

    first = call(operator, args, **extra)
    second = call(operator, args, **extra)

    assert not first.is_error, first.message
    assert first.content["changed"] == ["alert"] and first.content["after"]["alert"] == 4.8
    assert second.content["replayed"] and second.content["audit_id"] == first.content["audit_id"]
    [record] = limit_audits(vibration)
    assert (record.details["plan_id"], record.details["step_id"]) == (7, 12)
    assert record.details["idempotency_key"] == "plan7-step2-x" and record.details["approved_by"] is None


def test_the_capability_records_an_approver_the_context_carries(vibration, operator, approver):
    result = call(operator, {"signal_id": vibration.pk, "trip": 7.5, "reason": REASON}, approved_by=approver)
    assert not result.is_error, result.message
    assert limit_audits(vibration)[0].details["approved_by"] == "april"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"signal_id": 1, "alert": 4.8}, "reason"),
        ({"signal_id": 1, "alert": 4.8, "reason": "  "}, "reason"),
        ({"signal_id": 1, "alert": 4.8, "reason": "\u200b"}, "reason"),
        ({"signal_id": 1, "reason": REASON}, "give at least one of low_alert"),
        ({"alert": 4.8, "reason": REASON}, "give signal_id, or cell_tag and signal_key"),
        ({"signal_id": 1, "cell_tag": "P-02", "signal_key": "x", "alert": 4.8, "reason": REASON}, "not both"),
        ({"signal_id": 1, "alert": 4.8, "reason": REASON, "colour": "red"}, "colour"),
        ({"signal_id": 1, "on_delay_seconds": -5, "reason": REASON}, "on_delay_seconds"),
    ],
)
def test_bad_input_is_a_tool_error_naming_the_field(operator, args, words):
    result = call(operator, args)
    assert result.is_error and words in result.message


def test_domain_errors_reach_the_caller_naming_the_field(vibration, operator, make_user):
    too_high = call(operator, {"signal_id": vibration.pk, "alert": 7.5, "reason": REASON})
    unknown = call(operator, {"cell_tag": "P-02", "signal_key": "nope", "alert": 4.8, "reason": REASON})
    denied = call(make_user("ann", APPROVER), {"signal_id": vibration.pk, "alert": 4.8, "reason": REASON})

    assert too_high.is_error and too_high.message.startswith("alert: ")
    assert unknown.is_error and unknown.message.startswith("signal_key: ")
    assert denied.is_error and "Permission denied" in denied.message
    vibration.refresh_from_db()
    assert vibration.alert == 4.5


# --- PostgreSQL: the row lock serialises concurrent changes ----------------------------------------


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_concurrent_changes_serialise_on_the_signal_row(vibration, operator):
    """A holds the lock with alert → 6.0 uncommitted; B's trip → 5.5 waits, then validates against
    6.0 and is refused. Without the lock both would pass and leave alert 6.0 above trip 5.5."""
    assert connection.vendor == "postgresql"
    a_changed, a_release, b_done = threading.Event(), threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def a() -> None:
        try:
            with transaction.atomic():
                change(vibration, operator, alert=6.0)
                a_changed.set()
                a_release.wait(10)
        finally:
            connection.close()

    def b() -> None:
        try:
            a_changed.wait(10)
            change(vibration, operator, trip=5.5)
            outcome["b"] = "applied"
        except InvalidInput as exc:
            outcome["b"] = exc
        finally:
            b_done.set()
            connection.close()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    assert a_changed.wait(10)
    time.sleep(0.5)
    assert not b_done.is_set()  # B is blocked on A's row lock
    a_release.set()
    for thread in threads:
        thread.join(15)

    refused = outcome["b"]
    assert isinstance(refused, InvalidInput) and refused.field == "trip" and "above alert (6)" in refused.message
    vibration.refresh_from_db()
    assert (vibration.alert, vibration.trip) == (6.0, 7.1)
    assert len(limit_audits(vibration)) == 1
