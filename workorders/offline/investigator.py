"""Offline policies for the maintenance agents (fake engine). They decide from tool results:
the Investigator matches the current pattern to the closest past failure; the Generator writes
the order from the KB; the KB agents answer from the KB JSON they were given."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from workorders.agents.context import parse_context
from workorders.agents.diagnosis_features import evidence_pattern, failures_of_mode, offline_diagnosis
from workorders.agents.pattern import closest_failure, current_pattern


@fake_policy("investigator")
def investigator(state: FakeState) -> FakeReply:
    ctx = parse_context(state.user_text)
    cell_id = ctx.get("cell_id")
    if cell_id is None:
        return FakeReply(text="I cannot investigate without a cell.")
    if not state.called("get_signal_trends"):
        return FakeReply(
            thinking="Start from the signal trends around the anomaly.",
            tool_calls=[("get_signal_trends", {"cell_id": cell_id, "minutes": 240, "buckets": 24})],
        )
    trends = state.result("get_signal_trends") or {}
    current = current_pattern(trends, ctx.get("signal_key"))
    if not state.called("get_equipment_kb"):
        return FakeReply(
            thinking=f"Current pattern: {json.dumps(current)}. Compare with the KB and past failures.",
            tool_calls=[
                ("get_equipment_kb", {"cell_id": cell_id}),
                ("get_failure_history", {"cell_id": cell_id, "limit": 20, "confirmed_only": True}),
                *(
                    [("signal_features", {"cell_id": cell_id, "minutes": 240})]
                    if "signal_features" in state.tool_names
                    else []
                ),
            ],
        )
    failures = (state.result("get_failure_history") or {}).get("failures", [])
    # Confirmed failures only (resolved: a technician closed the order). Unresolved rows are earlier
    # RCAs not yet confirmed; matching those would only echo the agent's own guesses, and once a
    # cell has many of them they push the real failures out of the newest-first window.
    # The failure mode is read from the signal features (diagnosis_features.diagnose: offline rules over
    # slope, shift, noise, jumps, flatlines, bands, correlation); past failures are compared within it.
    features = state.result("signal_features") or {}
    diagnosis = offline_diagnosis(features)
    current = evidence_pattern(current, features, diagnosis)
    candidates = failures_of_mode([x for x in failures if x.get("resolved_time")], diagnosis)
    match, score = closest_failure(current, candidates)
    if not state.called("render_signal_chart"):
        ids = [s["signal_def_id"] for s in trends.get("signals", []) if s["key"] in current]
        ids = ids or ([ctx["signal_def_id"]] if ctx.get("signal_def_id") else [])
        calls: list[tuple[str, dict[str, Any]]] = []
        if ids:
            calls.append(("render_signal_chart", {"signal_def_ids": ids[:8], "minutes": 240}))
        if match:
            calls.append(
                (
                    "render_pattern_match",
                    {"cell_id": cell_id, "failure_id": match["id"], "current_pattern": current, "similarity": score},
                )
            )
        thought = (
            f"Closest past failure: #{match['id']} {match['failure_mode']} (similarity {score:.2f})."
            if match
            else "No past failure shares this pattern."
        )
        if calls:
            return FakeReply(thinking=thought, tool_calls=calls)
    if match and not state.called("ask_kb_builder"):
        question = f"What does the KB say about {match['failure_mode']} on {ctx.get('cell_tag', 'this cell')}?"
        return FakeReply(tool_calls=[("ask_kb_builder", {"cell_id": cell_id, "question": question})])
    kb = (state.result("get_equipment_kb") or {}).get("data", {})
    kb_answer = state.result("ask_kb_builder") or {}
    return FakeReply(tool_calls=[("submit_rca", _rca(current, match, score, kb, kb_answer, trends, diagnosis))])


def _own_cause(failure: dict[str, Any]) -> str:
    """The matched failure's cause without the "<mode>: the current pattern matches …" lead an
    earlier RCA put in front of it (else every RCA would nest the one before it)."""
    cause = str(failure.get("root_cause") or "")
    while True:
        mode, sep, rest = cause.partition(": the current pattern matches the ")
        if not sep or " " in mode or ")." not in rest:
            return cause.strip()
        cause = rest.split(").", 1)[1].strip()


def _rca(current, match, score, kb, kb_answer, trends, diagnosis=None) -> dict[str, Any]:
    units = {s["key"]: s.get("unit", "") for s in trends.get("signals", [])}
    factors = [
        f"{key} peaked at {p['peak']:g} {units.get(key, '')} with {p.get('duration_min', 0):g} min beyond its limit".replace(
            "  ", " "
        )
        for key, p in current.items()
    ]
    modes = kb.get("failure_modes", {})
    if match:
        mode = match["failure_mode"]
        date = match["failure_time"][:10]
        past = ", ".join(f"{k} peak {v.get('peak')}" for k, v in match["signal_patterns"].items())
        root = f"{mode}: the current pattern matches the {mode} failure of {date} ({past}). {_own_cause(match)}"
        factors.append(f"similar to failure #{match['id']} ({mode}, {date}), similarity {score:.2f}")
        similar = f"#{match['id']} {mode} {date}"
        confidence = round(min(0.95, 0.5 + 0.45 * score), 2)
    elif diagnosis is not None:
        mode = diagnosis.failure_mode
        root = f"{mode}: {'; '.join(diagnosis.reasons)}. No confirmed past failure of this mode on the cell."
        similar, confidence = "", round(diagnosis.confidence * 0.8, 2)
    else:
        keyed = [m for m, info in modes.items() if set(info.get("signals", [])) & set(current)]
        mode = keyed[0] if keyed else "undetermined"
        root = f"{mode}: no past failure shares this pattern; the KB lists {mode} for these signals."
        similar, confidence = "", 0.35 if keyed else 0.1
    info = modes.get(mode, {})
    if diagnosis is not None:
        factors += [f"signal features: {r}" for r in diagnosis.reasons]
        factors += [f"evidence signal: {key}" for key in diagnosis.evidence]
    factors += [f"KB signature: {s}" for s in info.get("signatures", [])[:2]]
    action = info.get("remedy") or kb_answer.get("answer") or "Inspect the equipment."
    return {
        "root_cause": root[:2000],
        "confidence": confidence,
        "contributing_factors": factors,
        "recommended_action": action[:1000],
        "similar_past_failure": similar,
        "signal_patterns": current,
        "failure_mode": mode,
    }


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
    return FakeReply(tool_calls=[("submit_work_order", _order(wo, kb, shifts, ctx))])


def _order(wo: dict, kb: dict, shifts: list[dict], ctx: dict) -> dict[str, Any]:
    mode = (wo.get("rca_details") or {}).get("failure_mode") or ctx.get("failure_mode") or "undetermined"
    info = kb.get("failure_modes", {}).get(mode, {})
    stock = {p["ref"] for p in kb.get("spare_parts", []) if "ref" in p}
    parts = [p for p in info.get("parts", []) if not stock or p["ref"] in stock]
    procedure = kb.get("procedures", {}).get(info.get("procedure", ""), {})
    actions = procedure.get("steps") or ([info["remedy"]] if info.get("remedy") else ["Inspect the equipment."])
    skills = info.get("skills", [])
    duration = int(info.get("duration_min") or 120)
    start, who = _window(shifts, skills)
    tag = wo.get("cell_tag", "")
    title = f"{mode.replace('_', ' ').capitalize()} on {tag}: {procedure.get('title') or actions[0]}"
    description = (
        f"Root cause: {wo.get('rca_summary', '')}\n"
        f"Procedure {info.get('procedure', 'n/a')}: {procedure.get('title', 'see actions')}.\n"
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


def answer_from_kb(kb: dict, question: str, tag: str) -> dict[str, Any]:
    q = question.lower()
    for mode, info in kb.get("failure_modes", {}).items():
        if mode in q or mode.replace("_", " ") in q:
            procedure = kb.get("procedures", {}).get(info.get("procedure", ""), {})
            parts = ", ".join(f"{p['qty']}× {p['ref']}" for p in info.get("parts", []))
            answer = (
                f"{mode} on {tag}: signatures {'; '.join(info.get('signatures', []))}. "
                f"Remedy: {info.get('remedy', 'n/a')}. Procedure {info.get('procedure', 'n/a')}"
                f" ({procedure.get('title', '')}). Parts: {parts or 'none listed'}."
            )
            return {"answer": answer, "source": f"kb:failure_modes.{mode}", "confidence": 0.85}
    if "part" in q or "spare" in q:
        parts = "; ".join(
            f"{p['ref']} {p.get('name', '')} (on hand {p.get('on_hand', '?')})" for p in kb.get("spare_parts", [])
        )
        if parts:
            return {"answer": f"Spare parts of {tag}: {parts}.", "source": "kb:spare_parts", "confidence": 0.8}
    for key, value in kb.items():
        if key.replace("_", " ") in q or key in q:
            return {"answer": f"{key} of {tag}: {json.dumps(value)[:1500]}", "source": f"kb:{key}", "confidence": 0.6}
    return {"answer": f"The KB of {tag} does not cover that.", "source": "none", "confidence": 0.1}


@fake_policy("kb_builder")
def kb_builder(state: FakeState) -> FakeReply:
    ctx = parse_context(state.user_text)
    if not state.called("get_equipment_kb"):
        return FakeReply(tool_calls=[("get_equipment_kb", {"cell_id": ctx.get("cell_id", 0)})])
    result = state.result("get_equipment_kb") or {}
    answer = answer_from_kb(result.get("data", {}), ctx.get("question", ""), result.get("cell_tag", "this cell"))
    return FakeReply(tool_calls=[("submit_kb_answer", answer)])


@fake_policy("kb_qa")
def kb_qa(state: FakeState) -> FakeReply:
    text = state.user_text
    question = text.split("\n", 1)[0].removeprefix("Question: ")
    try:
        data = json.loads(text.split("Equipment data:\n", 1)[1])
    except (IndexError, ValueError):
        return FakeReply(text=json.dumps({"answer": "No equipment data given.", "source": "none", "confidence": 0.0}))
    return FakeReply(text=json.dumps(answer_from_kb(data.get("kb", {}), question, data.get("cell_tag", ""))))
