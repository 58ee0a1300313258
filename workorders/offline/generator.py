"""OFFLINE STAND-IN for the Work Order Generator (fake engine only): it writes the repair order the
KB prescribes for the RCA's failure mode, in the first shift window with a technician of a needed
skill, shows the printable card (`render_work_order_card`) and submits the order."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from workorders.agents.context import parse_context
from workorders.shapes import kb_failure_modes, kb_list_of_str, kb_objects, kb_parts, kb_section, kb_text


@fake_policy("work_order_generator")
def work_order_generator(state: FakeState) -> FakeReply:
    ctx = parse_context(state.user_text)
    work_order_id, cell_id = ctx.get("work_order_id"), ctx.get("cell_id")
    if work_order_id is None or cell_id is None:
        return FakeReply(text="I need a work order and a cell.")
    if not state.called("get_work_order"):
        return FakeReply(
            tool_calls=[
                ("get_work_order", {"work_order_id": work_order_id}),
                ("get_equipment_kb", {"cell_id": cell_id}),
                ("get_shift_assignments", {"cell_id": cell_id, "days": 3}),
            ]
        )
    wo = state.result("get_work_order") or {}
    kb = (state.result("get_equipment_kb") or {}).get("data", {})
    shifts = (state.result("get_shift_assignments") or {}).get("assignments", [])
    card = ("render_work_order_card", {"work_order_id": work_order_id, "printable": True})
    return FakeReply(tool_calls=[card, ("submit_work_order", _order(wo, kb, shifts, ctx))])


def _order(wo: dict, kb: dict, shifts: list[dict], ctx: dict) -> dict[str, Any]:
    mode = (wo.get("rca_details") or {}).get("failure_mode") or ctx.get("failure_mode") or "undetermined"
    # Tolerant reads (workorders/shapes.py): a KB stored before its shape was checked may hold anything.
    kb = kb if isinstance(kb, dict) else {}
    info = kb_failure_modes(kb).get(mode, {})
    stock = {p["ref"] for p in kb_objects(kb.get("spare_parts")) if isinstance(p.get("ref"), str)}
    parts = [p for p in kb_parts(info.get("parts")) if not stock or p["ref"] in stock]
    procedure = kb_section(kb_section(kb, "procedures"), kb_text(info, "procedure"))
    remedy = kb_text(info, "remedy")
    actions = kb_list_of_str(procedure, "steps") or ([remedy] if remedy else ["Inspect the equipment."])
    skills = kb_list_of_str(info, "skills")
    minutes = info.get("duration_min")
    duration = minutes if isinstance(minutes, int) and not isinstance(minutes, bool) and 1 <= minutes <= 10_000 else 120
    start, who = _window(shifts, skills)
    tag = wo.get("cell_tag", "")
    title = f"{mode.replace('_', ' ').capitalize()} on {tag}: {kb_text(procedure, 'title') or actions[0]}"
    description = (
        f"Root cause: {wo.get('rca_summary', '')}\n"
        f"Procedure {kb_text(info, 'procedure') or 'n/a'}: {kb_text(procedure, 'title') or 'see actions'}.\n"
        f"Window: {start:%Y-%m-%d %H:%M} UTC{f' with {who}' if who else ''}."
    )
    return {
        "title": title[:200],
        "description": description,
        "recommended_actions": actions,
        "required_parts": parts,
        "required_skills": skills,
        "priority": wo.get("priority") or "medium",
        "estimated_duration_min": duration,
        "suggested_window_start": start.isoformat(),
        "suggested_window_end": (start + timedelta(minutes=duration)).isoformat(),
    }


def _window(shifts: list[dict], skills: list[str]) -> tuple[datetime, str]:
    """The first upcoming shift with a technician holding a needed skill, else two hours from now."""
    soon = timezone.now() + timedelta(hours=1)
    for shift in shifts:
        starts = datetime.fromisoformat(shift["starts_at"])
        if starts >= soon and (not skills or set(skills) & set(shift.get("skills", []))):
            return starts, f"{shift['technician']} ({shift['shift']} shift)"
    return (timezone.now() + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0), ""
