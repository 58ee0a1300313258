"""OFFLINE STAND-IN for the operator Q&A agent (fake engine only): it resolves the equipment the
question names, reads its signals and history through the same tools a model would, charts the
trend, asks the Investigator for "why" questions, and answers citing what it used. English only:
answering in the operator's language is the model's job (the agent's prompt asks for it)."""

from __future__ import annotations

import json
import re
from typing import Any

from assistant.tool_args import accepts, args_for
from core.agents.engines.fake import FakeReply, FakeState, fake_policy

TAG = re.compile(r"\b([A-Z]{1,4}-?\d{1,4}[A-Z]?)\b")
RESOLVERS = ("find_cells", "find_cell", "resolve_cell", "search_cells", "list_cells", "get_cells", "get_cell")


def _find_cell_id(content: Any, tag: str) -> int | None:
    """The id of the cell whose tag/name matches, searched through any JSON shape."""
    found: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            labels = [str(node.get(k, "")) for k in ("tag", "cell_tag", "name", "cell", "cell_name")]
            if any(label.upper() == tag.upper() or label.upper().startswith(tag.upper() + " ") for label in labels):
                keys = ("cell_id",) if "cell_tag" in node else ("cell_id", "id")
                for key in keys:
                    if isinstance(node.get(key), int):
                        found.append(node[key])
                        return
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(content)
    return found[0] if found else None


def _cell_id(state: FakeState, tag: str | None) -> int | None:
    match = re.search(r"\bcell[ _#]*(?:id)?[ :=#]*(\d+)", state.user_text, re.I)
    if match:
        return int(match.group(1))
    for outcome in state.outcomes:
        if outcome.is_error:
            continue
        if isinstance(outcome.input.get("cell_id"), int):
            return outcome.input["cell_id"]
        if tag:
            found = _find_cell_id(outcome.content, tag)
            if found is not None:
                return found
    return None


def _brief(content: Any, limit: int = 240) -> str:
    if isinstance(content, dict):
        for key in ("answer", "summary", "text"):
            if isinstance(content.get(key), str) and content[key]:
                return content[key][:limit]
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    return text[:limit]


def _trigger_signal(work_orders: Any, cell_id: int) -> list[int]:
    """The signal that raised the cell's latest work order (what a 'why did it trip' is about)."""
    rows = work_orders.get("work_orders", []) if isinstance(work_orders, dict) else []
    for row in rows:
        if (
            isinstance(row, dict)
            and row.get("cell_id") == cell_id
            and isinstance(row.get("triggered_by_signal_def_id"), int)
        ):
            return [row["triggered_by_signal_def_id"]]
    return []


def _chart_signals(current: Any, question: str = "", trigger: list[int] | None = None) -> list[int] | None:
    """The abnormal signals of the cell, else the one that raised its work order, else the one
    the question names, else the first one."""
    signals = (
        [s for s in (current or {}).get("signals", []) if isinstance(s, dict)] if isinstance(current, dict) else []
    )
    signals = [s for s in signals if isinstance(s.get("signal_def_id"), int)]
    abnormal = [s["signal_def_id"] for s in signals if s.get("state") not in (None, "normal", "unknown")]
    words = set(re.findall(r"[a-z]{4,}", question.lower()))
    named = [
        s["signal_def_id"] for s in signals if words & set(re.findall(r"[a-z]{4,}", str(s.get("key", "")).lower()))
    ]
    ids = abnormal or trigger or named or [s["signal_def_id"] for s in signals[:1]]
    return ids[:4] or None


@fake_policy("operator_qa")
def operator_qa(state: FakeState) -> FakeReply:
    """Resolve the equipment, look at its signals and history, chart the trend, ask the
    investigator for 'why' questions, then answer citing what was used."""
    tools = state.request.tools
    names = state.tool_names
    question = state.user_text
    tag_match = TAG.search(question)
    tag = tag_match.group(1) if tag_match else None
    cell_id = _cell_id(state, tag)
    why = bool(re.search(r"\b(why|cause|trip|tripped|fail|failed|wrong)\b", question, re.I))

    if cell_id is None and tag:
        for resolver in (*RESOLVERS, "get_current_signals"):
            if resolver in names and not state.called(resolver) and accepts(resolver, "tag", tools):
                return FakeReply(
                    thinking=f"First resolve {tag} to a cell.",
                    tool_calls=[(resolver, args_for(resolver, {"tag": tag}, tools))],
                )
        # No resolver by tag: the plant's work orders name their cell's tag.
        if "get_work_orders" in names and not state.called("get_work_orders"):
            return FakeReply(
                thinking=f"Find the cell tagged {tag} through its work orders.",
                tool_calls=[("get_work_orders", args_for("get_work_orders", {"limit": 100}, tools))],
            )
    if cell_id is not None:
        known = {
            "cell_id": cell_id,
            "tag": tag,
            "question": question,
            "hours": 24,
            "minutes": 24 * 60,
            "signal_def_ids": _chart_signals(
                state.result("get_current_signals"), question, _trigger_signal(state.result("get_work_orders"), cell_id)
            ),
        }
        # A why-question is about what raised the cell's latest work order: chart that signal.
        plan = ["get_current_signals", *(["get_work_orders"] if why else []), "get_signal_trends"]
        plan += ["render_signal_chart", "get_failure_history"]
        if why:
            plan += ["get_logbook_entries", "ask_investigator"]
        else:
            plan.append("render_equipment_kb_card")
        for tool in plan:
            if tool in names and not state.called(tool):
                if (
                    tool == "render_signal_chart"
                    and accepts(tool, "signal_def_ids", tools)
                    and not known["signal_def_ids"]
                ):
                    continue
                return FakeReply(tool_calls=[(tool, args_for(tool, known, tools))])

    sources = []
    lines = []
    label = tag or (f"cell {cell_id}" if cell_id is not None else "the plant")
    investigator = state.result("ask_investigator")
    if investigator:
        lines.append(_brief(investigator, 400))
        sources += [str(s) for s in investigator.get("sources", [])] if isinstance(investigator, dict) else []
    for tool, source in (
        ("get_current_signals", "signals"),
        ("get_signal_trends", "signal trends"),
        ("get_failure_history", "failure history"),
        ("get_logbook_entries", "logbook"),
        ("get_equipment_kb", "KB"),
        ("render_equipment_kb_card", "KB"),
    ):
        if state.called(tool):
            result = state.result(tool)
            if result is not None:
                sources.append(source)
                if not investigator and tool != "render_signal_chart":
                    lines.append(f"{source.capitalize()}: {_brief(result, 160)}")
    if not lines:
        lines.append(f"I could not find data for {label}.")
    answer = f"About {label}: " + " ".join(lines)
    if sources:
        answer += "\nSources: " + ", ".join(dict.fromkeys(sources)) + "."
    return FakeReply(text=answer)
