"""The context packet: everything the coordinator should know before it looks further, compactly."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.capabilities import Tier, registry
from core.models import AgentRun
from orchestrator.choices import PLAN_FINISHED
from orchestrator.compact import compact_plan
from orchestrator.coordinator.profiles import PROFILES
from orchestrator.models import CoordinatorTurn
from orchestrator.planning.cells import equipment_tags
from orchestrator.selectors import interactions_needing, plans_for

# Where the packet starts in the coordinator's user message (the offline stand-in reads it back).
PACKET_MARKER = "COORDINATOR_CONTEXT_JSON:"
READ_TOOLS = (
    "orchestrator.list_plans",
    "orchestrator.get_plan",
    "orchestrator.list_pending_interactions",
    "orchestrator.get_agent_runs",
    "orchestrator.list_approvals",
    "orchestrator.list_conversation_events",
    "orchestrator.read_drafts",
    "assistant.list_draft_reviews",
    "assistant.get_draft_review",
    "workorders.get_work_orders",
    "workorders.get_work_order",
    "workorders.get_signal_anomalies",
    "workorders.find_cells",
    "workorders.get_current_signals",
)


def read_tools() -> list[str]:
    return [name for name in READ_TOOLS if (cap := registry.get(name)) is not None and cap.tier == Tier.READ]


def recent_investigations(limit: int = 5) -> list[dict[str, Any]]:
    """The Investigator's latest runs on work orders (in flight first): what is being, or was just,
    investigated. Work-order runs are plant-wide, visible to every operator (as get_agent_runs)."""
    runs = AgentRun.objects.filter(agent="investigator", subject_type="work_order").order_by("-id")[: limit * 2]
    rows = sorted(runs, key=lambda r: (r.status != AgentRun.Status.RUNNING, -r.pk))[:limit]
    return [
        {
            "agent_run_id": r.pk,
            "work_order_id": int(r.subject_id) if r.subject_id.isdigit() else r.subject_id,
            "status": r.status,
            "finish_reason": r.finish_reason,
            "started_at": r.started_at.isoformat(),
        }
        for r in rows
    ]


def build_context_packet(user: AbstractBaseUser, conversation: str, message: str = "") -> dict[str, Any]:
    """The whole conversation (not a window), active + recent plans and investigations, pending
    asks, tools, profiles, and the equipment tags the message names (resolve them with find_cells)."""
    turns = CoordinatorTurn.objects.filter(user=user, conversation=conversation).order_by("id")
    plans = list(plans_for(user)[:20])
    active = [p for p in plans if p.status not in PLAN_FINISHED]
    recent = [p for p in plans if p.status in PLAN_FINISHED][:5]
    return {
        "conversation": [
            {"turn_id": t.pk, "user": t.message, "answer": t.answer, "executed": [e["type"] for e in t.executed]}
            for t in turns
        ],
        "active_plans": [compact_plan(p) for p in active],
        "recent_plans": [compact_plan(p) for p in recent],
        "investigations": recent_investigations(),
        "pending_interactions": [
            {
                "id": i.pk,
                "plan_id": i.plan_id,
                "step_order": i.step.order if i.step_id else None,
                "kind": i.kind,
                "question": i.question,
                "options": i.options,
                "required_scope": i.required_scope,
                "coordinator_approvable": i.coordinator_approvable,
            }
            for i in interactions_needing(user)
        ],
        "tools": read_tools(),
        "conversation_id": conversation,
        "named_equipment": equipment_tags(message),
        "specialists": {name: profile.packet() for name, profile in PROFILES.items()},
    }
