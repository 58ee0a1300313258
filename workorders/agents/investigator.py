"""The Investigator: finds the root cause of a detected anomaly and submits an RCA."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.agents.loop import AgentSpec, FinishTool
from core.agents.prompts import fill_prompt_variables, system_prompt_for, template_variables
from workorders.agents.context import context_line, linked_alarms, linked_alarms_text, work_order_variables
from workorders.models import WorkOrder

NAME = "investigator"

DEFAULT_PROMPT = """You are the Investigator of ARIA, a maintenance-operations platform for industrial plants.
A sentinel alarm opened a work order. Find the most likely root cause.

Method:
1. Look at the signal trends around the anomaly (get_signal_trends) and the current values; read the raw
   samples' features (signal_features: shift, slope, noise growth, one-sample jumps, flatlines, 1×/2×/
   high-frequency vibration bands, correlations) — a lone signal moving against its coupled peers, a
   flatline or an impossible jump points at the instrument, not the machine.
2. Read the equipment KB (failure modes and their signatures) and the cell's failure history.
3. Compare the current signal pattern (peak, duration beyond the limit, which signals move together) with
   the signal_patterns of past failures; name the closest one and say how it is similar. Prefer confirmed
   failures (a technician confirmed or corrected the cause; `failure_mode` is then the actual one): an
   unconfirmed row is an earlier RCA proposal, never evidence.
4. Use the logbook for operator observations. Ask the KB agent (ask_kb_builder) when the KB is unclear.
5. Show your evidence with render tools (signal chart, pattern match, diagnosis card) — every card needs
   the cell_id.
6. Finish by calling submit_rca once: root_cause starts with the failure mode slug (e.g. "bearing_wear: …"),
   confidence 0..1 reflects the evidence, contributing_factors and recommended_action are required,
   signal_patterns describe the current anomaly per signal key.
Be factual; never invent values that no tool returned."""

TOOLS = [
    "get_current_signals",
    "get_signal_trends",
    "get_signal_anomalies",
    "signal_features",
    "get_equipment_kb",
    "get_failure_history",
    "get_logbook_entries",
    "get_work_order",
    "render_signal_chart",
    "render_pattern_match",
    "render_diagnosis_card",
    "ask_kb_builder",
]


class SubmitRca(BaseModel):
    root_cause: str = Field(
        min_length=1, max_length=2000, description='Starts with the failure mode: "bearing_wear: …"'
    )
    confidence: float = Field(ge=0.0, le=1.0)
    # Required by the agent contract (with root_cause and confidence); the fields below are ARIA's.
    contributing_factors: list[str] = Field(max_length=20, description="What led to it; may be empty.")
    recommended_action: str = Field(min_length=1, max_length=1000)
    similar_past_failure: str = Field(default="", max_length=500, description="The past failure matched, or empty.")
    signal_patterns: dict[str, dict[str, float]] = Field(
        default_factory=dict, description='Current pattern per signal key, e.g. {"vibration_mm_s": {"peak": 5.1}}'
    )
    failure_mode: str = Field(default="", max_length=64, description="Slug, e.g. bearing_wear (optional).")


def build_spec(work_order: WorkOrder) -> AgentSpec:
    variables = work_order_variables(work_order)
    raw, ref = system_prompt_for(NAME, DEFAULT_PROMPT)
    prompt = fill_prompt_variables(raw, variables)  # a published prompt's {{cell_tag}}, {{focus}}, …
    if "recent_failures" not in template_variables(raw):  # a prompt that places them itself gets them once
        prompt = f"{prompt}\n\n## Last 5 failures of {work_order.cell.tag}\n{variables['recent_failures']}"
    return AgentSpec(
        name=NAME,
        system_prompt=prompt,
        prompt_ref=ref,
        tools=TOOLS,
        use_case="reasoning",
        thinking=True,
        finish_tool=FinishTool("submit_rca", "Submit the root-cause analysis (ends the investigation).", SubmitRca),
        max_turns=12,
        timeout_seconds=120,
    )


def task_message(work_order: WorkOrder) -> str:
    signal = work_order.triggered_by_signal_def
    context: dict[str, Any] = {
        "work_order_id": work_order.pk,
        "cell_id": work_order.cell_id,
        "cell_tag": work_order.cell.tag,
        "signal_def_id": signal.pk if signal else None,
        "signal_key": signal.key if signal else None,
        "anomaly_time": work_order.trigger_anomaly_time,
    }
    lines = [
        f"Investigate work order #{work_order.pk} on {work_order.cell.tag} ({work_order.cell.name}): {work_order.title}."
    ]
    alarms = linked_alarms(work_order)  # the opening alarm, repeats, and the cell's same-episode alarms
    if alarms:
        context["alarm_ids"] = [a["alarm_id"] for a in alarms]
        context["signal_keys"] = sorted({a["signal_key"] for a in alarms})
        lines.append(f"Alarms linked to this order ({len(alarms)}):\n{linked_alarms_text(alarms)}")
    lines.append("Find the root cause and call submit_rca.")
    lines.append(context_line(context))
    return "\n".join(lines)
