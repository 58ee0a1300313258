"""OFFLINE STAND-IN for the Investigator (fake engine only): it decides from tool results.

Trend → breach pattern; signal features → a failure mode (`offline/diagnosis.py`); confirmed past
failures of that mode → the closest one (`offline/pattern.py`); charts and the pattern match are
rendered; the KB builder is asked about the matched mode; the diagnosis card is drawn; then
`submit_rca`.
"""

from __future__ import annotations

import json
from typing import Any

from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from workorders.agents.context import parse_context
from workorders.offline.diagnosis import evidence_pattern, failures_of_mode, offline_diagnosis
from workorders.offline.pattern import closest_failure, current_pattern
from workorders.shapes import kb_failure_modes, kb_list_of_str, kb_text


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
    # The failure mode is read from the signal features (offline/diagnosis.diagnose: rules over
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
    rca = _rca(current, match, score, kb, kb_answer, trends, diagnosis)
    if "render_diagnosis_card" in state.tool_names and not state.called("render_diagnosis_card"):
        return FakeReply(tool_calls=[("render_diagnosis_card", _card(ctx, cell_id, rca))])
    return FakeReply(tool_calls=[("submit_rca", rca)])


def _card(ctx: dict[str, Any], cell_id: int, rca: dict[str, Any]) -> dict[str, Any]:
    """The diagnosis drawn for the people watching, before the RCA is submitted."""
    confidence = rca["confidence"]
    return {
        "cell_id": cell_id,
        "title": f"{rca['failure_mode']} on {ctx.get('cell_tag', 'this cell')}"[:200],
        "findings": [rca["root_cause"][:300], *rca["contributing_factors"][:5]],
        "severity": "critical" if confidence >= 0.7 else "warning" if confidence >= 0.4 else "info",
        "confidence": confidence,
        "work_order_id": ctx.get("work_order_id"),
    }


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
    modes = kb_failure_modes(kb)  # a malformed stored KB (old rows) reads as fewer modes, not a crash
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
        keyed = [m for m, info in modes.items() if set(kb_list_of_str(info, "signals")) & set(current)]
        mode = keyed[0] if keyed else "undetermined"
        root = f"{mode}: no past failure shares this pattern; the KB lists {mode} for these signals."
        similar, confidence = "", 0.35 if keyed else 0.1
    info = modes.get(mode, {})
    if diagnosis is not None:
        factors += [f"signal features: {r}" for r in diagnosis.reasons]
        factors += [f"evidence signal: {key}" for key in diagnosis.evidence]
    factors += [f"KB signature: {s}" for s in kb_list_of_str(info, "signatures")[:2]]
    answer = kb_answer.get("answer") if isinstance(kb_answer, dict) else None
    action = kb_text(info, "remedy") or (answer if isinstance(answer, str) else "") or "Inspect the equipment."
    return {
        "root_cause": root[:2000],
        "confidence": confidence,
        "contributing_factors": factors,
        "recommended_action": action[:1000],
        "similar_past_failure": similar,
        "signal_patterns": current,
        "failure_mode": mode,
    }
