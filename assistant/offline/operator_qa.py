"""OFFLINE STAND-IN for the operator Q&A agent (fake engine only): it resolves the equipment the
question names (its tag, else a cell name from the plant's cells), reads its signals and history
through the same tools a model would, charts the trend over the window the question names ("last
6 hours", "since Monday"), asks the Investigator for "why" questions, answers KPI questions
(MTBF/MTTR/OEE of a cell or every cell ranked, over the named period), reads the work order the
question names (WO-1, "work order 1"), states the current value of the signals asked about, and
frames its answer in the operator's language (en, fr, de, es, it, pt; the templates in replies.py)
around the tools' data, citing what it used. A request to act (cancel, close, acknowledge, shelve,
assign…, asks.py) is never acted on — the Q&A tools only read, and such a request never reaches
ask_investigator (which may start an investigation): the answer says so, where the operator does
it, and the facts read (the work order, its open orders, the standing alarms)."""

from __future__ import annotations

import json
import re
from typing import Any

from django.utils import timezone

from assistant.offline.asks import Ask, plain, read_ask
from assistant.offline.operator_facts import (
    action_notice,
    open_work_orders_line,
    signal_lines,
    standing_alarms_line,
    work_order_line,
)
from assistant.offline.replies import WHY_CUES, reply_text
from assistant.tool_args import accepts, args_for
from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from core.languages import language_of
from core.timewindows import TimeWindow, parse_time_window

TAG = re.compile(r"\b((?i:[a-z]{1,4}-\d{1,4}[a-z]?)|[A-Z]{1,4}\d{1,4}[A-Z]?)\b")
RESOLVERS = ("find_cells", "find_cell", "resolve_cell", "search_cells", "list_cells", "get_cells", "get_cell")
KPI = re.compile(r"\b(mtbf|mttr|oee)\b", re.I)
WHY = re.compile(rf"\b(?:{WHY_CUES})\b")
KPI_FIELD = {"mtbf": ("mtbf_hours", "h"), "mttr": ("mttr_hours", "h"), "oee": ("oee", "")}
MAX_TREND_MINUTES = 7 * 24 * 60
DEFAULT_KPI_PERIOD = "last 90 days"


def _named_cell(content: Any, question: str) -> int | None:
    """The cell whose tag or name the question names, from a listing of the plant's cells."""
    rows = content.get("cells", []) if isinstance(content, dict) else []
    text = f" {re.sub(r'[^0-9a-z-]+', ' ', plain(question))} "
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("cell_id"), int):
            continue
        for label in (row.get("tag"), row.get("name")):
            words = re.sub(r"[^0-9a-z-]+", " ", plain(str(label or ""))).strip()
            if len(words) >= 3 and f" {words} " in text:
                return row["cell_id"]
    return None


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
        found = _find_cell_id(outcome.content, tag) if tag else _named_cell(outcome.content, state.user_text)
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


def _chart_signals(current: Any, stems: list[str], trigger: list[int] | None = None) -> list[int] | None:
    """The signals the question names (vibration, temperature…), else the abnormal signals of the
    cell, else the one that raised its work order, else the first one."""
    signals = (
        [s for s in (current or {}).get("signals", []) if isinstance(s, dict)] if isinstance(current, dict) else []
    )
    signals = [s for s in signals if isinstance(s.get("signal_def_id"), int)]
    abnormal = [s["signal_def_id"] for s in signals if s.get("state") not in (None, "normal", "unknown")]
    named = [
        s["signal_def_id"]
        for s in signals
        if any(stem in f"{s.get('key', '')} {s.get('name', '')}".lower() for stem in stems)
    ]
    ids = named or abnormal or trigger or [s["signal_def_id"] for s in signals[:1]]
    return ids[:4] or None


def _kpi_reply(kpi: str, result: dict, language: str) -> str:
    """The KPI's value for one cell, or the worst cell of the ranking and the next ones."""
    field, unit = KPI_FIELD[kpi]
    since = str(result.get("start", ""))[:10]
    name = kpi.upper()
    if isinstance(result.get("ranking"), list):
        valued = [r for r in result["ranking"] if isinstance(r, dict) and r.get(field) is not None]
        if not valued:
            return reply_text(language, "kpi_none").format(kpi=name, since=since)
        worst = valued[0]
        text = reply_text(language, "kpi_worst").format(
            kpi=name, since=since, tag=worst.get("cell_tag"), value=worst[field], unit=unit
        )
        ranking = ", ".join(f"{r.get('cell_tag')} {r[field]}" for r in valued[:5])
        return f"{text} {reply_text(language, 'ranking')}: {ranking}."
    if result.get(field) is None:
        return reply_text(language, "kpi_none").format(kpi=name, since=since)
    return reply_text(language, "kpi_cell").format(
        kpi=name, tag=result.get("cell_tag"), since=since, value=result[field], unit=unit
    )


def _investigator_reply(result: Any, label: str, language: str) -> str:
    if not isinstance(result, dict):
        return _brief(result, 400)
    ref = ", ".join(str(s) for s in result.get("sources") or [])
    source = result.get("source")
    if source in ("recent_rca", "investigation") and result.get("answer"):
        return reply_text(language, "rca").format(ref=ref, text=str(result["answer"])[:400])
    if source == "investigation_started":
        work_order_id = (result.get("investigation") or {}).get("work_order_id")
        return reply_text(language, "started").format(ref=f"work_order #{work_order_id}")
    return reply_text(language, "no_rca").format(label=label)


def _trend_minutes(window: TimeWindow | None) -> int:
    """The trend window the question names ("last 6 hours"), else a day; at most a week."""
    return min(window.minutes, MAX_TREND_MINUTES) if window else 24 * 60


@fake_policy("operator_qa")
def operator_qa(state: FakeState) -> FakeReply:
    """Resolve the equipment or the work order, look at its signals and history, chart the trend,
    ask the investigator for 'why' questions, answer KPI questions, read the facts a request to act
    is about (never acting), then answer citing what was used."""
    tools = state.request.tools
    names = state.tool_names
    question = state.user_text
    language = language_of(question)
    window = parse_time_window(question, now=timezone.now())
    ask = read_ask(question)
    tag_match = TAG.search(ask.text)
    tag = tag_match.group(1).upper() if tag_match else None
    kpi_match = KPI.search(question)
    kpi = kpi_match.group(1).lower() if kpi_match else None
    cell_id = _cell_id(state, tag)
    # ask_investigator may start an investigation: a request to act never reaches it.
    why = bool(WHY.search(plain(question))) and not ask.action

    if ask.work_order_id is not None:
        wanted = {"work_order_id": ask.work_order_id, "limit": 100}
        tool = "get_work_order" if "get_work_order" in names else "get_work_orders"  # else the plant's listing
        if tool in names and not state.called(tool):
            return FakeReply(
                thinking=f"Read work order WO-{ask.work_order_id}.",
                tool_calls=[(tool, args_for(tool, wanted, tools))],
            )
        if not tag:  # about that work order alone
            return FakeReply(text=_answer(state, language, ask, tag, cell_id, kpi))
    if kpi and f"get_{kpi}" in names and not state.called(f"get_{kpi}") and (cell_id is not None or not tag):
        period = window.label if window else DEFAULT_KPI_PERIOD
        return FakeReply(
            thinking=f"{kpi.upper()} {'of cell ' + str(cell_id) if cell_id is not None else 'of every cell'}, {period}.",
            tool_calls=[(f"get_{kpi}", args_for(f"get_{kpi}", {"cell_id": cell_id, "period": period}, tools))],
        )
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
    if cell_id is None and not tag and not kpi and "find_cells" in names and not state.called("find_cells"):
        return FakeReply(
            thinking="Look for a cell the question names among the plant's cells.",
            tool_calls=[("find_cells", args_for("find_cells", {"limit": 100}, tools))],
        )
    if ask.action and ask.domain:
        for tool, known in _action_facts(ask, cell_id):
            if tool in names and not state.called(tool):
                return FakeReply(
                    thinking=f"Not acting on '{ask.action}' from the chat: reading the facts it is about.",
                    tool_calls=[(tool, args_for(tool, known, tools))],
                )
        return FakeReply(text=_answer(state, language, ask, tag, cell_id, kpi))
    if cell_id is not None and not kpi:
        minutes = _trend_minutes(window)
        known = {
            "cell_id": cell_id,
            "tag": tag,
            "question": question,
            "hours": round(minutes / 60, 2),
            "minutes": minutes,
            "signal_def_ids": _chart_signals(
                state.result("get_current_signals"),
                ask.signal_stems,
                _trigger_signal(state.result("get_work_orders"), cell_id),
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
    return FakeReply(text=_answer(state, language, ask, tag, cell_id, kpi))


def _action_facts(ask: Ask, cell_id: int | None) -> list[tuple[str, dict[str, Any]]]:
    """The read tools whose facts a request to act is about: the cell's alarms or the site's
    standing ones; the cell's work orders or the plant's."""
    if ask.domain == "alarm":
        if cell_id is not None:
            return [("get_signal_anomalies", {"cell_id": cell_id}), ("get_current_signals", {"cell_id": cell_id})]
        return [("alarm_performance", {"hours": 24})]
    return [("get_work_orders", {"cell_id": cell_id, "limit": 100})]


def _answer(state: FakeState, language: str, ask: Ask, tag: str | None, cell_id: int | None, kpi: str | None) -> str:
    sources: list[str] = []
    lines: list[str] = []
    label = tag or (f"cell {cell_id}" if cell_id is not None else reply_text(language, "the_plant"))
    work_order = _work_order(state, ask, language, lines, sources)
    if ask.work_order_id is not None and not tag:
        label = f"WO-{ask.work_order_id}"
    kpi_result = state.result(f"get_{kpi}") if kpi else None
    if isinstance(kpi_result, dict):
        lines.append(_kpi_reply(kpi or "", kpi_result, language))
        sources.append(reply_text(language, "KPIs"))
    investigator = state.result("ask_investigator")
    if investigator:
        lines.append(_investigator_reply(investigator, label, language))
        sources += [str(s) for s in investigator.get("sources", [])] if isinstance(investigator, dict) else []
    if ask.action and ask.domain:
        _action_lines(state, ask, cell_id, language, lines, sources)
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
                name = reply_text(language, source)
                sources.append(name)
                values = signal_lines(result, ask, language) if tool == "get_current_signals" else []
                if values:
                    lines += values
                elif not investigator and kpi_result is None:
                    lines.append(f"{name[:1].upper()}{name[1:]}: {_brief(result, 160)}")
    if not lines:
        lines.append(reply_text(language, "no_data").format(label=label))
        if ask.work_order_id is None and not tag and cell_id is None:
            lines.append(reply_text(language, "ask_what"))
    if ask.action:
        lines.insert(0, reply_text(language, "no_act"))
        if work_order is not None or ask.work_order_id is None:
            lines.append(action_notice(ask, work_order, language))
    answer = reply_text(language, "about").format(label=label) + " ".join(lines)
    if sources:
        answer += f"\n{reply_text(language, 'sources')}: " + ", ".join(dict.fromkeys(sources)) + "."
    return answer


def _work_order(state: FakeState, ask: Ask, language: str, lines: list[str], sources: list[str]) -> dict | None:
    """The work order the question names, as get_work_order read it (None when there is none)."""
    if ask.work_order_id is None or not (state.called("get_work_order") or state.called("get_work_orders")):
        return None
    result = state.result("get_work_order")
    listed = state.result("get_work_orders")
    if result is None and isinstance(listed, dict):  # no get_work_order: the plant's listing
        rows = [r for r in listed.get("work_orders") or [] if isinstance(r, dict)]
        result = next((r for r in rows if r.get("id") == ask.work_order_id), None)
    if isinstance(result, dict) and result.get("id") == ask.work_order_id:
        lines.append(work_order_line(result, language))
        sources.append(f"{reply_text(language, 'work order')} WO-{ask.work_order_id}")
        return result
    lines.append(reply_text(language, "wo_missing").format(id=ask.work_order_id))
    return None


def _action_lines(
    state: FakeState, ask: Ask, cell_id: int | None, language: str, lines: list[str], sources: list[str]
) -> None:
    """The facts a request to act is about: the standing alarms, or the open work orders."""
    if ask.domain == "alarm":
        for tool in ("get_signal_anomalies", "alarm_performance"):
            result = state.result(tool)
            if isinstance(result, dict):
                lines.append(standing_alarms_line(result, language))
                sources.append(reply_text(language, "alarms_source"))
                return
    elif ask.work_order_id is None and isinstance(state.result("get_work_orders"), dict):
        lines.append(open_work_orders_line(state.result("get_work_orders"), language, cell_id))
        sources.append(reply_text(language, "work order"))
