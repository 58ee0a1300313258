"""OFFLINE STAND-INS for the specialist profiles run as plan steps (fake engine only).

The writing profiles each read, then write what they read:

- `work_order_writer` (the work_order_generator profile): reads the work order, its cell's KB and
  shifts, then writes the repair order through `update_work_order` (title, actions, parts, skills,
  duration) and submits what it wrote;
- `draft_author` (the authoring_assistant profile): turns the task into a skill or prompt draft
  through `create_draft` (owned by the plan owner, status draft) and submits the draft id.
A failed write ends the run without a submission, so the plan step fails with the reason. The plan
reviewer looks at the plan, then judges the earlier results it was given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.agents.engines.fake import FakeReply, FakeState, fake_policy


def _failed(state: FakeState, tool: str) -> str:
    errors = [o.content for o in state.outcomes if o.name == tool and o.is_error]
    return str(errors[-1]) if errors else ""


@fake_policy("work_order_writer")
def work_order_writer(state: FakeState) -> FakeReply:
    ctx = task_context(state.user_text)
    wo_id = ctx.get("work_order_id")
    if wo_id is None:
        return FakeReply(text="I need a work order to write the repair order for.")
    if not state.called("get_work_order"):
        return FakeReply(tool_calls=[("get_work_order", {"work_order_id": wo_id})])
    wo = state.result("get_work_order")
    if wo is None:
        return FakeReply(text=f"Work order {wo_id} could not be read: {_failed(state, 'get_work_order')}")
    if not state.called("get_equipment_kb"):
        return FakeReply(
            tool_calls=[
                ("get_equipment_kb", {"cell_id": wo["cell_id"]}),
                ("get_shift_assignments", {"cell_id": wo["cell_id"], "days": 3}),
            ]
        )
    if not state.called("update_work_order"):
        kb = (state.result("get_equipment_kb") or {}).get("data", {})
        return FakeReply(tool_calls=[("update_work_order", repair_order(wo, kb))])
    written = state.result("update_work_order")
    if written is None:
        return FakeReply(text=f"Writing work order {wo_id} failed: {_failed(state, 'update_work_order')}")
    sent = next(o.input for o in reversed(state.outcomes) if o.name == "update_work_order")
    fields = sorted(k for k in sent if k not in ("work_order_id", "note"))
    return FakeReply(
        tool_calls=[
            ("submit_work_order", {"work_order_id": wo_id, "written": fields, "title": written.get("title", ""),
                                   "status": written.get("status", ""), "summary": written.get("summary", "")})
        ]
    )  # fmt: skip


def repair_order(wo: dict[str, Any], kb: dict[str, Any]) -> dict[str, Any]:
    """The repair order the KB prescribes for the work order's failure mode (RCA), else an inspection."""
    mode = (wo.get("rca_details") or {}).get("failure_mode") or _mode_in(wo.get("rca_summary", ""), kb) or ""
    info = kb.get("failure_modes", {}).get(mode, {})
    stock = {p["ref"] for p in kb.get("spare_parts", []) if "ref" in p}
    parts = [{"ref": p["ref"], "qty": p.get("qty", 1)} for p in info.get("parts", []) if not stock or p["ref"] in stock]
    procedure = kb.get("procedures", {}).get(info.get("procedure", ""), {})
    actions = procedure.get("steps") or ([info["remedy"]] if info.get("remedy") else ["Inspect the equipment."])
    label = mode.replace("_", " ").capitalize() if mode else "Inspection"
    title = f"{label} on {wo.get('cell_tag', '')}: {procedure.get('title') or actions[0]}"
    order: dict[str, Any] = {
        "work_order_id": wo["id"],
        "title": title[:200],
        "description": f"Root cause: {wo.get('rca_summary') or 'not analyzed yet'}. "
        f"Procedure {info.get('procedure', 'n/a')}: {procedure.get('title', 'see actions')}.",
        "recommended_actions": actions,
        "required_parts": parts,
        "required_skills": info.get("skills", []),
        "note": "written by the work_order_generator specialist",
    }
    if info.get("duration_min"):
        order["estimated_duration_min"] = int(info["duration_min"])
    return order


def _mode_in(text: str, kb: dict[str, Any]) -> str:
    lowered = (text or "").lower()
    return next((m for m in kb.get("failure_modes", {}) if m in lowered or m.replace("_", " ") in lowered), "")


@fake_policy("draft_author")
def draft_author(state: FakeState) -> FakeReply:
    task = state.user_text.split("\nContext: ")[0].strip()
    if not state.called("create_draft"):
        return FakeReply(tool_calls=[("create_draft", draft_from(task))])
    created = state.result("create_draft")
    if created is None:
        return FakeReply(text=f"Creating the draft failed: {_failed(state, 'create_draft')}")
    return FakeReply(
        tool_calls=[
            ("submit_draft", {"draft_id": created["draft_id"], "type": created["type"], "name": created["name"],
                              "status": created["status"], "summary": created["summary"]})
        ]
    )  # fmt: skip


def draft_from(task: str) -> dict[str, Any]:
    """A prompt draft when the task asks for a prompt, else a skill: named, with the task's instruction."""
    named = re.search(r"\b(?:called|named)\s+([A-Za-z0-9_\-]+)", task)
    instruction = re.sub(r"^.*?\b(?:skill|prompt)\b\s*(?:that|to|which|for)?\s*", "", task, count=1, flags=re.I)
    instruction = (instruction or task).strip().rstrip(".")
    words = re.findall(r"[a-z0-9]+", instruction.lower())
    slug = "_".join(w for w in words if len(w) > 2)[:40].strip("_") or "draft"
    if re.search(r"\bprompt\b", task, re.I):
        agent = (re.search(r"\bfor (?:the )?([a-z_]+) agent\b", task, re.I) or [None, "investigator"])[1].lower()
        text = f"You are the {agent}. {instruction[:1].upper()}{instruction[1:]}."
        spec = {"agent": agent, "text": text, "variables": sorted(set(re.findall(r"\{\{\s*(\w+)\s*\}\}", text)))}
        return {"type": "prompt", "name": named.group(1) if named else f"{agent}_prompt", "spec": spec}
    spec = {"instructions": f"{instruction[:1].upper()}{instruction[1:]}.", "triggers": words[:3]}
    return {"type": "skill", "name": named.group(1) if named else slug, "spec": spec}


@fake_policy("plan_reviewer")
def plan_reviewer(state: FakeState) -> FakeReply:
    """Offline reviewer: looks at the plan, then judges the earlier results it was given."""
    context = task_context(state.user_text)
    plan_id = context.get("plan_id")
    if plan_id and not state.called("get_plan"):
        return FakeReply(tool_calls=[("get_plan", {"plan_id": plan_id})])
    results = context.get("earlier_results") or []
    empty = [r["order"] for r in results if not r.get("result")]
    verdict = "pass" if results and not empty else "needs_work"
    notes = (
        f"Checked {len(results)} earlier result(s)"
        + (f"; step(s) {empty} returned nothing." if empty else ".")
        + ("" if results else " Nothing to review yet.")
    )
    return FakeReply(tool_calls=[("submit_review", {"verdict": verdict, "notes": notes, "reviewed": len(results)})])


def task_context(text: str) -> dict[str, Any]:
    for line in reversed((text or "").splitlines()):
        if line.startswith("Context: "):
            try:
                value = json.loads(line[len("Context: ") :])
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}
