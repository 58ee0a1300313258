"""Admin for connectors: configuration (credentials by environment-variable name only), the
tag mapping inline, and the live status columns written by the running connector."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import AdminScopeWritesMixin
from core.audit import audit_record
from sentinel.connectors.config import (
    credential_env_problem,
    endpoint_host_problem,
    endpoint_port_problem,
    topic_filter_problem,
)
from sentinel.connectors.endpoints import CREDENTIALS_REFUSED, carries_credentials, endpoint_shown
from sentinel.connectors.rate import rate_shown
from sentinel.models import Connector, ConnectorTag

STATUS_FIELDS = [
    "status",
    "status_changed_at",
    "last_message_at",
    "rate",
    "messages_total",
    "samples_total",
    "last_error",
    "error_count",
    "bad_quality_count",
    "unknown_tag_count",
    "unknown_tags",
]
SCHEMES = {
    Connector.Kind.MQTT_JSON: ("mqtt://", "mqtts://"),
    Connector.Kind.MQTT_SPARKPLUG_B: ("mqtt://", "mqtts://"),
    Connector.Kind.OPCUA: ("opc.tcp://",),
}


class ConnectorForm(forms.ModelForm):
    class Meta:
        model = Connector
        fields = [
            "name",
            "kind",
            "endpoint",
            "topic_filter",
            "username_env",
            "password_env",
            "security_mode",
            "security_policy",
            "certificate_path",
            "private_key_path",
            "enabled",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        kind, endpoint = data.get("kind"), data.get("endpoint") or ""
        if kind in SCHEMES and not endpoint.startswith(SCHEMES[kind]):
            self.add_error("endpoint", f"must start with {' or '.join(SCHEMES[kind])}")
        elif carries_credentials(endpoint):
            self.add_error("endpoint", CREDENTIALS_REFUSED)
        elif problem := endpoint_port_problem(endpoint) or endpoint_host_problem(endpoint):
            self.add_error("endpoint", problem)  # the words the session would stop with at start
        topic_filter = data.get("topic_filter") or ""
        if kind != Connector.Kind.OPCUA and topic_filter and (problem := topic_filter_problem(topic_filter)):
            self.add_error("topic_filter", problem)
        for name in ("username_env", "password_env"):
            if data.get(name) and (problem := credential_env_problem(data[name])):
                self.add_error(name, problem)
        if data.get("security_mode", "None") != "None":
            for name in ("security_policy", "certificate_path", "private_key_path"):
                if not data.get(name):
                    self.add_error(name, "is required when the security mode is Sign or SignAndEncrypt")
        return data


class ConnectorTagForm(forms.ModelForm):
    class Meta:
        model = ConnectorTag
        fields = ["source", "signal", "scale", "offset"]

    def clean_source(self) -> str:
        source = self.cleaned_data["source"].strip()
        if not source:
            raise forms.ValidationError("is required")
        return source


class ConnectorTagInline(AdminScopeWritesMixin, admin.TabularInline):
    model = ConnectorTag
    form = ConnectorTagForm
    extra = 1
    autocomplete_fields = ["signal"]


@admin.register(Connector)
class ConnectorAdmin(AdminScopeWritesMixin, admin.ModelAdmin):
    form = ConnectorForm
    list_display = [
        "name",
        "kind",
        "address",
        "enabled",
        "status",
        "last_message_at",
        "rate",
        "last_error",
        "unknown_tag_count",
    ]
    list_filter = ["kind", "enabled", "status"]
    search_fields = ["name", "endpoint"]
    readonly_fields = STATUS_FIELDS
    inlines = [ConnectorTagInline]

    @admin.display(description="endpoint", ordering="endpoint")
    def address(self, obj: Connector) -> str:
        """A row saved before credentials were refused in the URL still never shows them."""
        return endpoint_shown(obj.endpoint)

    @admin.display(description="messages/s", ordering="messages_per_second")
    def rate(self, obj: Connector) -> str:
        """Rounded: a row written before the rate was rounded shows 13.96, not 13.95767844861457."""
        return rate_shown(obj.messages_per_second)

    def save_model(self, request: HttpRequest, obj: Connector, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        audit_record(
            actor=request.user,
            action="connector.change" if change else "connector.create",
            target_type="sentinel.connector",
            target_id=obj.pk,
            details={f: str(form.cleaned_data.get(f)) for f in form.changed_data},
        )

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        super().save_formset(request, form, formset, change)
        changes = [
            *({"added": t.source, "signal_id": t.signal_id} for t in formset.new_objects),
            *({"changed": t.source, "fields": fields} for t, fields in formset.changed_objects),
            *({"removed": t.source} for t in formset.deleted_objects),
        ]
        if changes:
            audit_record(
                actor=request.user,
                action="connector.tags_change",
                target_type="sentinel.connector",
                target_id=form.instance.pk,
                details={"changes": changes},
            )

    def delete_model(self, request: HttpRequest, obj: Connector) -> None:
        _audit_delete(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Connector]) -> None:
        """The changelist's "Delete selected" bypasses delete_model: each connector is audited here."""
        with transaction.atomic():
            for connector in queryset.order_by("pk"):
                _audit_delete(request, connector)
            super().delete_queryset(request, queryset)


def _audit_delete(request: HttpRequest, connector: Connector) -> None:
    audit_record(
        actor=request.user,
        action="connector.delete",
        target_type="sentinel.connector",
        target_id=connector.pk,
        details={"name": connector.name},
    )
