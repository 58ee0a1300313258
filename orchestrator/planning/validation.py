"""Proposed steps are checked against the capability registry before a plan is shown.

Each proposal is `{capability, inputs, depends_on?, quality_gate?}`. The capability must exist;
its inputs must pass the capability's input schema. Invalid inputs are repaired where that is
safe (unknown keys dropped, missing required ids filled from the context refs) and otherwise the
step is dropped; every repair and drop is recorded with its reason. The tier always comes from
the registry, never from the proposal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.capabilities import registry

GATE_OPS = ("gt", "gte", "lt", "lte", "eq", "ne")


@dataclass
class ValidatedStep:
    capability: str
    inputs: dict[str, Any]
    tier: str
    depends_on: list[int] = field(default_factory=list)  # positions (0-based) in the validated list
    quality_gate: dict[str, Any] | None = None


@dataclass
class Validation:
    steps: list[ValidatedStep]
    notes: list[dict[str, Any]]


def ref_values(context_refs: list[dict[str, Any]]) -> dict[str, Any]:
    """`[{"type": "work_order", "id": 7}]` → `{"work_order_id": 7}` (first ref of each type wins)."""
    values: dict[str, Any] = {}
    for ref in context_refs:
        values.setdefault(f"{ref['type']}_id", ref["id"])
    return values


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())


def validate_inputs(capability: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Strict check (answers that edit a step's inputs): the validated JSON or ValidationError."""
    cap = registry.get(capability)
    return cap.input.model_validate(inputs).model_dump(mode="json")


def _repair(cap, inputs: dict[str, Any], refs: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str], str]:
    """Try the inputs as given, then repaired. Returns (inputs or None, repairs, error)."""
    try:
        return cap.input.model_validate(inputs).model_dump(mode="json"), [], ""
    except ValidationError as exc:
        first_error = _errors(exc)
    fields = cap.input.model_fields
    repaired = {k: v for k, v in inputs.items() if k in fields}
    repairs = [f"dropped unknown input {k!r}" for k in inputs if k not in fields]
    for name, info in fields.items():
        if name not in repaired and info.is_required() and name in refs:
            repaired[name] = refs[name]
            repairs.append(f"filled {name!r} from the context refs")
    try:
        data = cap.input.model_validate(repaired).model_dump(mode="json")
    except ValidationError as exc:
        return None, repairs, _errors(exc)
    return data, repairs, first_error


def _gate(raw: Any) -> tuple[dict[str, Any] | None, str]:
    if raw in (None, {}):
        return None, ""
    if not isinstance(raw, dict) or not isinstance(raw.get("field"), str) or raw.get("op") not in GATE_OPS:
        return None, f"quality gate dropped: needs field, op in {GATE_OPS} and a numeric threshold"
    threshold = raw.get("threshold")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        return None, "quality gate dropped: threshold must be a number"
    return {"field": raw["field"], "op": raw["op"], "threshold": threshold}, ""


def validate_proposals(proposals: list[dict[str, Any]], *, context_refs: list[dict[str, Any]]) -> Validation:
    refs = ref_values(context_refs)
    steps: list[ValidatedStep] = []
    notes: list[dict[str, Any]] = []
    position: dict[int, int] = {}  # proposal index → validated position
    for index, proposal in enumerate(proposals):
        name = str(proposal.get("capability") or "")
        cap = registry.get(name)
        if cap is None or cap.ui_only:
            reason = "unknown capability" if cap is None else "a UI entry point, not a plan step"
            notes.append({"index": index, "capability": name, "action": "dropped", "reason": reason})
            continue
        raw_inputs = proposal.get("inputs") or {}
        if not isinstance(raw_inputs, dict):
            raw_inputs = {}
        inputs, repairs, error = _repair(cap, raw_inputs, refs)
        if inputs is None:
            notes.append({"index": index, "capability": cap.name, "action": "dropped", "reason": error})
            continue
        if repairs:
            notes.append(
                {"index": index, "capability": cap.name, "action": "repaired", "reason": error, "repairs": repairs}
            )
        depends: list[int] = []
        for dep in proposal.get("depends_on") or []:
            if isinstance(dep, int) and dep in position:
                depends.append(position[dep])
            else:
                notes.append(
                    {
                        "index": index,
                        "capability": cap.name,
                        "action": "repaired",
                        "reason": f"dependency {dep!r} is not an earlier kept step; removed",
                    }
                )
        gate, gate_note = _gate(proposal.get("quality_gate"))
        if gate_note:
            notes.append({"index": index, "capability": cap.name, "action": "repaired", "reason": gate_note})
        position[index] = len(steps)
        steps.append(ValidatedStep(cap.name, inputs, cap.tier.label, sorted(set(depends)), gate))
    return Validation(steps, notes)
