"""Coordinator turns in the admin: read-only (list, filters, detail with the explain view and the
turn's place in the hash chain), and admin-only: a turn is a person's conversation with the
coordinator, so an approver or other staff user does not read it here (core.admin.AdminScopeOnlyMixin). Nothing here adds, changes or deletes a turn: the transcript is
append-only and written only by the coordinator (orchestrator/coordinator/transcript.py)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.admin import AdminScopeOnlyMixin
from core.models import AgentRun
from orchestrator.coordinator.transcript import chain_body, chain_digest
from orchestrator.models import CoordinatorTurn
from orchestrator.schemas import turn_explain


def _rows(items: list[tuple[str, str]]) -> SafeString:
    return format_html_join("", "<li>{}{}</li>", items) or format_html("<li>{}</li>", "none")


@admin.register(CoordinatorTurn)
class CoordinatorTurnAdmin(AdminScopeOnlyMixin, admin.ModelAdmin):
    list_display = ("id", "user", "conversation", "status", "prompt_kind", "short_message", "created_at")
    list_filter = ("status", "prompt_kind", "created_at")
    list_select_related = ("user",)
    search_fields = ("message", "answer", "conversation", "user__username")
    date_hierarchy = "created_at"
    fieldsets = (
        (None, {"fields": ("user", "conversation", "message", "status", "answer", "error", "created_at", "finished_at")}),
        ("Explain: why did it do that", {"fields": ("engine", "explain_inspected", "explain_actions", "explain_checks", "explain_result")}),
        ("Hash chain", {"fields": ("chain_check", "previous_hash", "hash")}),
        ("Raw record", {"classes": ("collapse",), "fields": ("prompt_kind", "repair_turns", "agent_run_id", "raw_record")}),
    )  # fmt: skip
    readonly_fields = (
        *(f.name for f in CoordinatorTurn._meta.fields),
        "engine",
        "explain_inspected",
        "explain_actions",
        "explain_checks",
        "explain_result",
        "chain_check",
        "raw_record",
    )

    # Admins read the transcript; nobody edits it here (a POST to the change form is a 403).
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="message")
    def short_message(self, turn: CoordinatorTurn) -> str:
        return turn.message[:80]

    @admin.display(description="engine")
    def engine(self, turn: CoordinatorTurn) -> str:
        if not turn.agent_run_id:
            return "no model (confirmed in code, or no engine available)"
        name = AgentRun.objects.filter(pk=turn.agent_run_id).values_list("engine", flat=True).first() or "?"
        return f"{name} — offline demo engine" if name == "fake" else name

    @admin.display(description="inspected")
    def explain_inspected(self, turn: CoordinatorTurn) -> SafeString:
        evidence = turn_explain(turn)["evidence"]
        items = [
            (
                f"{e['tool']} {json.dumps(e['args'], sort_keys=True)} → ",
                ("ERROR " if e["is_error"] else "") + e["summary"],
            )
            for e in evidence
        ]
        return format_html("<ul>{}</ul>", _rows(items))

    @admin.display(description="selected actions")
    def explain_actions(self, turn: CoordinatorTurn) -> SafeString:
        x = turn_explain(turn)
        items = [
            (f"#{i} {a.get('type', '')}: ", json.dumps(a, sort_keys=True)) for i, a in enumerate(x["selected_actions"])
        ]
        rationale = format_html("<p>Rationale: {}</p>", x["rationale"]) if x["rationale"] else ""
        return format_html("{}<ul>{}</ul>", rationale, _rows(items))

    @admin.display(description="checks")
    def explain_checks(self, turn: CoordinatorTurn) -> SafeString:
        items = [
            (
                ("✓ " if c["ok"] else "✗ ")
                + c["check"]
                + ("" if c["action_index"] is None else f" #{c['action_index']}"),
                f": {c['reason']}" if c.get("reason") else "",
            )
            for c in turn.validation
        ]
        return format_html("<ul>{}</ul>", _rows(items))

    @admin.display(description="result")
    def explain_result(self, turn: CoordinatorTurn) -> SafeString:
        items = [
            (
                ("✓ " if e["result"].get("ok") else "✗ ") + e["type"],
                f": {e['result'].get('error')}" if e["result"].get("error") else "",
            )
            for e in turn.executed
        ]
        return format_html("<ul>{}</ul>", _rows(items))

    @admin.display(description="chain check")
    def chain_check(self, turn: CoordinatorTurn) -> str:
        if turn.hash == chain_digest(turn.previous_hash, chain_body(turn)):
            return "its fields match its hash (manage.py verify_transcripts checks the links of the whole chain)"
        return "BROKEN: its recorded fields do not match its hash"

    @admin.display(description="record")
    def raw_record(self, turn: CoordinatorTurn) -> SafeString:
        record = {"context_packet": turn.context_packet, "tool_calls": turn.tool_calls, "action_plan": turn.action_plan,
                  "validation": turn.validation, "executed": turn.executed, "references": turn.references}  # fmt: skip
        return format_html("<pre>{}</pre>", json.dumps(record, indent=1, sort_keys=True, default=str))
