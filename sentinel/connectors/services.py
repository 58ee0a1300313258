"""Connector writes: status, staleness from the source, enabling. Every write goes through here."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F

from core.audit import audit_record
from core.events import publish
from sentinel.connectors.feed import MAX_UNKNOWN_LISTED, Drained
from sentinel.connectors.rate import rate_rounded
from sentinel.models import Connector, SignalLatest, StaleCondition

EVENT_TYPE = "connector_status"


def signals_mark_stale(*, signal_ids: Iterable[int], now: datetime) -> int:
    """Mark signals stale at once (the source said they are dead or bad): the latest value is
    flagged and one open StaleCondition each. Returns how many became stale."""
    ids = sorted(set(signal_ids))
    if not ids:
        return 0
    with transaction.atomic():
        fresh = list(
            SignalLatest.objects.select_for_update()
            .filter(signal_id__in=ids, stale=False)
            .order_by("signal_id")
            .values_list("signal_id", flat=True)
        )
        SignalLatest.objects.filter(signal_id__in=fresh).update(stale=True)
        StaleCondition.objects.bulk_create(
            [StaleCondition(signal_id=s, raised_at=now) for s in ids], ignore_conflicts=True
        )
    return len(fresh)


def _payload(connector: Connector) -> dict:
    return {
        "connector_id": connector.pk,
        "name": connector.name,
        "kind": connector.kind,
        "status": connector.status,
        "last_message_at": connector.last_message_at.isoformat() if connector.last_message_at else None,
        "messages_per_second": rate_rounded(connector.messages_per_second),
        "last_error": connector.last_error,
        "unknown_tags": connector.unknown_tag_count,
    }


def _storable(text: str) -> str:
    """Text from the plant (a Sparkplug metric name, an error naming one) as the database stores it:
    PostgreSQL refuses NUL in text and jsonb, and one refused status write was put back and tried
    again every round, so the connector's status and counters were never written again."""
    return text.replace("\x00", "\ufffd")


def connector_status_record(
    *, connector_id: int, drained: Drained, samples: int, rate: float, now: datetime, status: str | None = None
) -> Connector | None:
    """Fold what a session reported into the connector's status row. Publishes
    `connector_status` when the status changes. None if the connector was deleted."""
    with transaction.atomic():
        connector = Connector.objects.select_for_update().filter(pk=connector_id).first()
        if connector is None:
            return None
        new_status = status or drained.status or connector.status
        changed = new_status != connector.status
        fields: dict[str, Any] = {"messages_per_second": rate_rounded(rate)}
        if changed:
            fields.update(status=new_status, status_changed_at=now)
        if drained.last_message_at:
            fields["last_message_at"] = drained.last_message_at
        if drained.last_error:
            fields["last_error"] = _storable(drained.last_error)
        listed = list(connector.unknown_tags)
        for source in sorted(drained.unknown):
            if len(listed) >= MAX_UNKNOWN_LISTED:
                break
            shown = _storable(source[:300])
            if shown not in listed:
                listed.append(shown)
        if listed != connector.unknown_tags:
            fields["unknown_tags"] = listed
        Connector.objects.filter(pk=connector_id).update(
            messages_total=F("messages_total") + drained.messages,
            samples_total=F("samples_total") + samples,
            error_count=F("error_count") + drained.errors,
            bad_quality_count=F("bad_quality_count") + drained.bad_quality,
            unknown_tag_count=F("unknown_tag_count") + drained.unknown_total,
            **fields,
        )
        connector.refresh_from_db()
        if changed:
            publish(EVENT_TYPE, _payload(connector))
    return connector


def connector_set_enabled(*, connector: Connector, enabled: bool, actor: AbstractBaseUser | None = None) -> Connector:
    with transaction.atomic():
        Connector.objects.filter(pk=connector.pk).update(enabled=enabled)
        audit_record(
            actor=actor,
            action="connector.enabled" if enabled else "connector.disabled",
            target_type="sentinel.connector",
            target_id=connector.pk,
            details={"name": connector.name},
        )
    connector.refresh_from_db()
    return connector
