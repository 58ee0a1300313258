"""API payloads and the JSON shape of plans, steps and interactions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from django.contrib.auth.models import AbstractBaseUser
from ninja import Schema
from pydantic import ConfigDict, Field, WithJsonSchema

from core.agents.engines.fake import FakeEngine
from core.json_types import ROW_ID_MAX, not_blank_text
from orchestrator.choices import CONVERSATION_PATTERN
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning import ID_STRING_DIGITS
from orchestrator.planning.cells import cell_tags

# "work_order:7" (or "work_order#7"), or {"type": "work_order", "id": 7}: documented here, checked by
# orchestrator.planning.normalize_refs, which names the bad item (`context_refs.3`).
# An id is an integer within a row id's range, a string of at most 18 digits, or any other string
# (one with a non-digit in it, passed on as given): exactly what normalize_refs accepts.
_ROW_ID_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": -ROW_ID_MAX, "maximum": ROW_ID_MAX},
        {"type": "string", "pattern": rf"^[0-9]{{1,{ID_STRING_DIGITS}}}$"},
        {"type": "string", "pattern": r"^$|[^0-9]"},
    ]
}
_CONTEXT_REF_SCHEMA = {
    "anyOf": [
        {"type": "string", "pattern": rf"^\s*[a-z_]+[:#][0-9]{{1,{ID_STRING_DIGITS}}}\s*$"},
        {
            "type": "object",
            "required": ["type", "id"],
            "properties": {"type": {"type": "string"}, "id": _ROW_ID_SCHEMA},
        },
    ]
}
ContextRef = Annotated[Any, WithJsonSchema(_CONTEXT_REF_SCHEMA)]


class PlanCreateIn(Schema):
    goal: str = not_blank_text(2000)
    constraints: dict[str, Any] = Field(default_factory=dict)
    done_when: str = Field(default="", max_length=2000)
    context_refs: list[ContextRef] = Field(default_factory=list, max_length=50)
    autonomy: Literal["ask_all", "ask_mutations", "auto"] = "ask_mutations"
    planner: Literal["heuristic", "model"] = "heuristic"


class PlanPatchIn(Schema):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 422, not a silent no-op
    autonomy: Literal["ask_all", "ask_mutations", "auto"] | None = None
    status: Literal["cancelled"] | None = None


class AnswerIn(Schema):
    decision: str = ""
    choice: str | None = None
    inputs: dict[str, Any] | None = None


def _cell_id(step: PlanStep) -> int | None:
    cell_id = (step.inputs or {}).get("cell_id")
    return cell_id if isinstance(cell_id, int) and not isinstance(cell_id, bool) else None


def step_out(step: PlanStep, tags: dict[int, str] | None = None) -> dict[str, Any]:
    cell_id = _cell_id(step)
    return {
        "id": step.pk,
        "order": step.order,
        "depends_on": step.depends_on,
        "capability": step.capability,
        "inputs": step.inputs,
        # the tag people know the step's cell by ("C-01"), when the viewer can read it; else None
        "cell_tag": (tags or {}).get(cell_id) if cell_id is not None else None,
        "tier": step.tier,
        "quality_gate": step.quality_gate,
        "status": step.status,
        "attempts": step.attempts,
        "result": step.result,
        "job": {"kind": step.job_kind, "ref": step.job_ref} if step.job_kind else None,
        "error": step.error,
    }


def interaction_out(interaction: Interaction) -> dict[str, Any]:
    step = interaction.step
    return {
        "id": interaction.pk,
        "plan_id": interaction.plan_id,
        "step_id": interaction.step_id,
        "step": {"order": step.order, "capability": step.capability, "inputs": step.inputs} if step else None,
        "kind": interaction.kind,
        "question": interaction.question,
        "options": interaction.options,
        "evidence": interaction.evidence,
        "required_scope": interaction.required_scope,
        "coordinator_approvable": interaction.coordinator_approvable,
        "status": interaction.status,
        "answer": interaction.answer,
        "answered_by": interaction.answered_by.get_username() if interaction.answered_by_id else None,
        "answered_at": interaction.answered_at.isoformat() if interaction.answered_at else None,
        "created_at": interaction.created_at.isoformat(),
    }


def plans_out(plans: Iterable[Plan], viewer: AbstractBaseUser) -> list[dict[str, Any]]:
    """The plans as the API shows them to `viewer` (with their asks), each step's cell named by its tag:
    one read of the cells for all of them, whatever their number of steps."""
    plans = list(plans)
    tags = cell_tags(viewer, {c for p in plans for s in p.steps.all() if (c := _cell_id(s)) is not None})
    return [plan_out(p, with_interactions=True, tags=tags) for p in plans]


def plan_out(plan: Plan, *, with_interactions: bool = False, tags: dict[int, str] | None = None) -> dict[str, Any]:
    out = {
        "id": plan.pk,
        "owner": plan.owner.get_username(),
        "goal": plan.goal,
        "constraints": plan.constraints,
        "done_when": plan.done_when,
        "context_refs": plan.context_refs,
        "autonomy": plan.autonomy,
        "status": plan.status,
        "planner": plan.planner,
        "engine": plan.engine,  # the engine that proposed the steps ("" when no model ran)
        "offline": plan.engine == FakeEngine.name,  # as on session messages: the offline demo engine wrote it
        "template": plan.template,
        "planner_notes": plan.planner_notes,
        "derived_from": plan.derived_from_id,  # "same as plan N but …": N, and what changed
        "derivation": plan.derivation,
        "error": plan.error,
        "outcome": plan.outcome,  # completed without applying every change step: which and why ("" else)
        "created_at": plan.created_at.isoformat(),
        "updated_at": plan.updated_at.isoformat(),
        "steps": [step_out(s, tags) for s in plan.steps.all()],
    }
    if with_interactions:
        out["interactions"] = [interaction_out(i) for i in plan.interactions.all()]
    return out


class TurnIn(Schema):
    message: str = not_blank_text(4000)
    conversation: str = Field(default="default", max_length=80, pattern=CONVERSATION_PATTERN)


def turn_out(turn: Any, *, detail: bool = False) -> dict[str, Any]:
    out = {
        "id": turn.pk,
        "conversation": turn.conversation,
        "message": turn.message,
        "status": turn.status,
        "answer": turn.answer,
        "executed": [e["type"] for e in turn.executed],
        "created_at": turn.created_at.isoformat(),
        "hash": turn.hash,
        "details": turn_details(turn),
    }
    if detail:
        out.update(
            prompt_kind=turn.prompt_kind,
            context_packet=turn.context_packet,
            tool_calls=turn.tool_calls,
            action_plan=turn.action_plan,
            repair_turns=turn.repair_turns,
            validation=turn.validation,
            executed=turn.executed,
            references=turn.references,
            error=turn.error,
            agent_run_id=turn.agent_run_id,
            previous_hash=turn.previous_hash,
        )
    return out


def turn_details(turn: Any) -> dict[str, Any]:
    """The compact, expandable summary a chat UI shows under a coordinator answer."""
    actions = (turn.action_plan or {}).get("actions", [])
    return {
        "headline": (turn.answer.splitlines() or [""])[0][:200],
        "inspected": [
            {"tool": c["tool"], "summary": c["summary"][:160], "is_error": c["is_error"]} for c in turn.tool_calls
        ],
        "actions": [
            {
                "type": e["type"],
                "ok": bool(e["result"].get("ok")),
                "plan_id": e["result"].get("plan_id"),
                "interaction_id": e["result"].get("interaction_id"),
                "error": e["result"].get("error", ""),
            }
            for e in turn.executed
        ],
        "rejected": [
            {"type": actions[c["action_index"]]["type"], "check": c["check"], "reason": c["reason"]}
            for c in turn.validation
            if not c["ok"] and c["action_index"] is not None and c["action_index"] < len(actions)
        ],
        "failed_checks": [c for c in turn.validation if not c["ok"] and c["action_index"] is None],
        "links": {
            "detail": f"/api/v1/aria/coordinator/turns/{turn.pk}",
            "explain": f"/api/v1/aria/coordinator/turns/{turn.pk}/explain",
        },
    }


def turn_explain(turn: Any) -> dict[str, Any]:
    """Why did it do that: what it inspected, the evidence, what it chose, what was checked, the result."""
    plan = turn.action_plan or {}
    return {
        "id": turn.pk,
        "message": turn.message,
        "inspected": [c["tool"] for c in turn.tool_calls],
        "evidence": [
            {"tool": c["tool"], "args": c["args"], "summary": c["summary"], "is_error": c["is_error"]}
            for c in turn.tool_calls
        ],
        "selected_actions": plan.get("actions", []),
        "rationale": plan.get("rationale", ""),
        "validation_checks": turn.validation,
        "result": {"status": turn.status, "executed": turn.executed, "answer": turn.answer, "error": turn.error},
        "references": turn.references,
        "details": turn_details(turn),
    }
