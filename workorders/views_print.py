"""The printable work order at /workorders/<id>/print: what a technician takes to the job.

Actions, parts (with what the equipment KB says is on hand), permits and skills, the window and
the RCA summary, laid out for paper by the template's print stylesheet. Read-only; operators and
approvers (the Control Room's watch scopes) may open it.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from workorders import selectors
from workorders.models import WorkOrder
from workorders.views import can_watch

# Permits a step's wording calls for, when the KB names none (the usual permit-to-work kinds).
PERMIT_RULES: tuple[tuple[str, str], ...] = (
    (r"\b(lock(ed)?[ -]?out|loto|isolat\w*)\b", "Isolation / lock-out tag-out (LOTO)"),
    (r"\b(drain\w*|depressuri[sz]\w*|line break\w*|open the casing)\b", "Line break / depressurise"),
    (r"\b(weld\w*|grind\w*|cut\w*|hot work)\b", "Hot work"),
    (r"\b(confined space|vessel entry|tank entry)\b", "Confined space entry"),
    (r"\b(lift\w*|crane|hoist\w*)\b", "Lifting operation"),
)


def permits_for(actions: list[Any], kb: dict[str, Any]) -> list[str]:
    """The KB's permits for this equipment if it lists them, else those the actions call for."""
    listed = kb.get("permits")
    if isinstance(listed, list) and listed:
        return [str(p) for p in listed][:20]
    text = " ".join(str(a) for a in actions).lower()
    return [name for pattern, name in PERMIT_RULES if re.search(pattern, text)]


def _action_text(action: Any) -> str:
    if isinstance(action, dict):
        return str(action.get("action") or action.get("text") or action)
    return str(action)


def _parts(work_order: WorkOrder, kb: dict[str, Any]) -> list[dict[str, Any]]:
    stock = {p.get("ref"): p for p in kb.get("spare_parts", []) if isinstance(p, dict)}
    rows = []
    for part in work_order.required_parts or []:
        ref = str(part.get("ref", "")) if isinstance(part, dict) else str(part)
        qty = part.get("qty", 1) if isinstance(part, dict) else 1
        known = stock.get(ref, {})
        on_hand = known.get("on_hand")
        rows.append(
            {
                "ref": ref,
                "name": known.get("name", ""),
                "qty": qty,
                "on_hand": on_hand,
                "short": isinstance(on_hand, int | float) and isinstance(qty, int | float) and on_hand < qty,
            }
        )
    return rows


def print_context(work_order: WorkOrder) -> dict[str, Any]:
    kb_row = selectors.equipment_kb(work_order.cell)
    kb = kb_row.data if kb_row and isinstance(kb_row.data, dict) else {}
    actions = [_action_text(a) for a in work_order.recommended_actions or []]
    rca = work_order.rca_details or {}
    try:
        report = work_order.completion_report  # select_related by work_orders_qs
    except ObjectDoesNotExist:
        report = None
    return {
        "wo": work_order,
        "report": report,
        "actions": actions,
        "parts": _parts(work_order, kb),
        "permits": permits_for(actions, kb),
        "skills": [str(s) for s in work_order.required_skills or []],
        "rca": {
            "summary": work_order.rca_summary,
            "confidence_pct": round((work_order.confidence or 0.0) * 100),
            "failure_mode": rca.get("failure_mode", ""),
            "factors": [str(f) for f in rca.get("contributing_factors", []) if f][:10],
            "similar": rca.get("similar_past_failure", ""),
            "fallback": bool(rca.get("fallback")),
            "offline": (selectors.rca_engine(work_order) or {}).get("real_provider") is False,
        },
    }


@login_required
@require_GET
def work_order_print(request: HttpRequest, work_order_id: int) -> HttpResponse:
    if not can_watch(request.user):
        return render(request, "workorders/work_order_print.html", {"forbidden": True}, status=403)
    work_order = selectors.work_orders_qs().filter(pk=work_order_id).first()
    if work_order is None:
        raise Http404(f"Work order {work_order_id} not found.")
    return render(request, "workorders/work_order_print.html", print_context(work_order))
