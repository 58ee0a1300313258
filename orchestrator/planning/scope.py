"""Which cells a goal is about: tags, production lines and the plan's structured guidance.

One `workorders.find_cells` read (as the plan owner) lists the plant's cells with their line;
"line 1" matches the cells whose line is named "Line 1 …", a tag matches its cell exactly, and
`constraints` ({"cells": ["P-02"], "lines": ["Line 1"], "resolved": {"P-2": "P-02"}}) narrow the
set. A tag with no exact cell but look-alikes becomes a `choice` for the owner ("which one?"); the
answer is stored in `constraints.resolved` and the goal is planned again. Everything the goal
names that cannot be resolved is a planner note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.errors import InvalidInput
from orchestrator.planning.cells import equipment_tags, read
from orchestrator.planning.phrases import EQUIPMENT_NOUNS, LINE, LINE_NUMBER_WORDS

FIND_CELLS = "workorders.find_cells"
LISTED = 100  # find_cells' largest page


@dataclass
class Scope:
    cells: list[dict[str, Any]] = field(default_factory=list)  # find_cells rows, in tag order
    named: bool = False  # the goal or the constraints named cells or lines
    lines: list[str] = field(default_factory=list)  # the line names resolved
    notes: list[dict[str, Any]] = field(default_factory=list)
    choices: list[dict[str, Any]] = field(default_factory=list)  # {term, question, options, evidence}

    @property
    def cell_ids(self) -> list[int]:
        return [c["cell_id"] for c in self.cells]


def _note(action: str, reason: str, capability: str = FIND_CELLS) -> dict[str, Any]:
    return {"action": action, "capability": capability, "reason": reason}


def check_constraints(constraints: dict[str, Any]) -> None:
    """422 naming the field when the guidance the planner reads is malformed (other keys pass through)."""
    if not isinstance(constraints, dict):
        raise InvalidInput("constraints must be an object.", field="constraints")
    for key in ("cells", "lines"):
        values = constraints.get(key)
        if values is not None and (
            not isinstance(values, list)
            or len(values) > 50
            or not all(isinstance(v, str) and v.strip() for v in values)
        ):
            raise InvalidInput(f"constraints.{key} must be a list of names (at most 50).", field=f"constraints.{key}")
    cap = constraints.get("max_steps")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 20):
        raise InvalidInput("constraints.max_steps must be a whole number from 1 to 20.", field="constraints.max_steps")
    resolved = constraints.get("resolved")
    if resolved is not None and (
        not isinstance(resolved, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in resolved.items())
    ):
        raise InvalidInput("constraints.resolved must map a term to a tag.", field="constraints.resolved")


def apply_resolved(goal: str, constraints: dict[str, Any]) -> str:
    """The goal with the owner's earlier choices substituted ("P-2" → "P-02")."""
    for term, chosen in (constraints.get("resolved") or {}).items():
        if isinstance(term, str) and isinstance(chosen, str) and term:
            goal = re.sub(rf"(?<![\w-]){re.escape(term)}(?![\w-])", chosen, goal, flags=re.IGNORECASE)
    return goal


def line_numbers(text: str) -> list[str]:
    """ "line 1", "line two" → ["1", "2"] (distinct, in order)."""
    found = (LINE_NUMBER_WORDS.get(m.lower(), m) for m in LINE.findall(text or ""))
    return list(dict.fromkeys(found))


def _on_line(cell: dict[str, Any], number: str) -> bool:
    return bool(re.match(rf"\s*line\s*0*{re.escape(number.lstrip('0') or '0')}\b", str(cell.get("line", "")), re.I))


def on_named_line(cell: dict[str, Any], name: str) -> bool:
    """Whether a find_cells row is on the line `name` names ("Line 1 – Pumps", "line 1", "line one")."""
    return str(cell.get("line", "")).lower() == name.lower() or any(_on_line(cell, n) for n in line_numbers(name))


def _look_alikes(cells: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """Cells whose tag has the same letters and number (P-2 ~ P-02), else the same letters."""
    letters, _, number = tag.partition("-")
    same_letters = [c for c in cells if str(c["tag"]).upper().split("-")[0] == letters.upper()]
    same_number = [c for c in same_letters if str(c["tag"]).split("-")[-1].lstrip("0") == number.lstrip("0")]
    return same_number or same_letters


def _choice(term: str, options: list[dict[str, Any]], why: str) -> dict[str, Any]:
    return {
        "term": term,
        "question": f"{why} Which one did you mean?",
        "options": [str(c["tag"]) for c in options],
        "evidence": {
            "purpose": "resolve_equipment",
            "term": term,
            "candidates": [{k: c.get(k) for k in ("tag", "name", "line", "cell_id")} for c in options],
        },
    }


def resolve_scope(goal: str, constraints: dict[str, Any], user: AbstractBaseUser) -> Scope:
    """The cells the goal (after earlier choices) and the constraints name; see the module doc."""
    goal = apply_resolved(goal, constraints)
    scope = Scope()
    found, error = read(user, FIND_CELLS, {"query": "", "limit": LISTED})
    if found is None:
        scope.notes.append(_note("unresolved", f"could not list the plant's cells: {error}"))
        return scope
    cells: list[dict[str, Any]] = found.get("cells") or []
    by_tag = {str(c["tag"]).upper(): c for c in cells}
    picked: dict[int, dict[str, Any]] = {}

    for number in line_numbers(goal):
        on_line = [c for c in cells if _on_line(c, number)]
        if not on_line:
            known = ", ".join(sorted({str(c.get("line")) for c in cells})) or "none"
            scope.notes.append(_note("unresolved", f"no production line matches 'line {number}' (lines: {known})"))
            continue
        line_name = str(on_line[0]["line"])
        scope.lines.append(line_name)
        tags = ", ".join(str(c["tag"]) for c in on_line)
        scope.notes.append(_note("resolved", f"line {number} is {line_name}: {tags}"))
        picked.update({c["cell_id"]: c for c in on_line})
    if len(cells) >= LISTED:  # a bigger plant: look each named tag up by itself as well
        for tag in equipment_tags(goal):
            if tag not in by_tag:
                more, _ = read(user, FIND_CELLS, {"query": tag, "limit": 20})
                by_tag.update({str(c["tag"]).upper(): c for c in (more or {}).get("cells") or []})
        scope.notes.append(_note("capped", f"the plant lists more than {LISTED} cells; lines match the first {LISTED}"))
    for tag in equipment_tags(goal):
        if tag in by_tag:
            cell = by_tag[tag]
            picked[cell["cell_id"]] = cell
            scope.notes.append(_note("resolved", f"{tag} is cell {cell['cell_id']}"))
        elif alikes := _look_alikes(cells, tag):
            scope.choices.append(_choice(tag, alikes, f"No cell is tagged {tag}."))
            scope.notes.append(_note("unresolved", f"no cell is tagged {tag}; asked which one was meant"))
        else:
            scope.notes.append(_note("unresolved", f"no cell is tagged {tag}"))
    if not picked and not equipment_tags(goal):
        for noun in dict.fromkeys(n.lower() for n in EQUIPMENT_NOUNS.findall(goal)):
            matches = [c for c in cells if noun in f"{c.get('equipment_type', '')} {c.get('name', '')}".lower()]
            if len(matches) == 1:
                picked[matches[0]["cell_id"]] = matches[0]
                scope.notes.append(_note("resolved", f"the {noun} is {matches[0]['tag']}"))
            elif matches:
                scope.choices.append(_choice(f"the {noun}", matches, f"Several cells are a {noun}."))
                scope.notes.append(_note("unresolved", f"several cells are a {noun}; asked which one was meant"))
    scope.named = bool(picked) or bool(scope.choices) or bool(line_numbers(goal)) or bool(equipment_tags(goal))
    chosen = list(picked.values()) if picked else ([] if scope.named else cells)
    scope.cells = sorted(_constrained(chosen, constraints, cells, scope), key=lambda c: str(c["tag"]))
    return scope


def _constrained(
    chosen: list[dict[str, Any]], constraints: dict[str, Any], cells: list[dict[str, Any]], scope: Scope
) -> list[dict[str, Any]]:
    """Apply `constraints.cells` / `constraints.lines`: only cells they allow stay, with a note."""
    allowed_tags = {str(t).upper() for t in constraints.get("cells") or []}
    allowed_lines = [str(x) for x in constraints.get("lines") or []]
    if not allowed_tags and not allowed_lines:
        return chosen

    def allowed(cell: dict[str, Any]) -> bool:
        return str(cell["tag"]).upper() in allowed_tags or any(on_named_line(cell, name) for name in allowed_lines)

    if not scope.named:  # the guidance alone says which cells
        chosen = cells
        scope.named = True
    kept = [c for c in chosen if allowed(c)]
    left_out = [str(c["tag"]) for c in chosen if not allowed(c)]
    guidance = "; ".join(
        part
        for part in (
            f"cells {', '.join(sorted(allowed_tags))}" if allowed_tags else "",
            f"lines {', '.join(allowed_lines)}" if allowed_lines else "",
        )
        if part
    )
    if left_out:
        scope.notes.append(
            _note("constrained", f"left out {', '.join(left_out)}: outside the plan's guidance ({guidance})", "")
        )
    if not kept:
        scope.notes.append(_note("unresolved", f"no cell the goal names is within the guidance ({guidance})", ""))
    return kept
