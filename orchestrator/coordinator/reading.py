"""A reading of the user's message: the interpretation a model owns, as a small structure.

A real model reads the words and decides, in one go, what the user wants and which state to
inspect. The offline fake splits that in two so the second half can be tested on its own:

- a `Reading` says what the user asked for in domain terms — the dialogue act and what the user
  added — and nothing about which plan, ask, work order or profile that means;
- the fake gateway (`fake_gateway.decide`) takes a reading and finds everything else by calling
  read tools: which plan "that one" is, whether an ask is open or already decided, what failed,
  what ran and which smaller profile covers it, which work order "this" is.

The scenario suite hands the gateway a reading per turn, exactly as a model would produce it, so
no test depends on matching phrases. `keyword_reading` below is the offline demo's stand-in for
the model's language understanding (the run command has no model by default): a few dialogue-act
cues, English only, deliberately small. It is not used to decide anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from orchestrator.planning.cells import equipment_tags

Act = Literal["question", "explain", "stop", "proceed", "guide", "revise", "delegate", "plan"]
ACTS: tuple[str, ...] = Act.__args__


@dataclass(frozen=True)
class Reading:
    """What the user asked for.

    act:
      question — asks about state ("what happened?", "is P-02 ok?");
      explain  — wants an explanation and no action ("don't start yet, just explain");
      stop     — halt the work in focus (`smaller`: and hand it to a smaller agent);
      proceed  — go ahead with what is waiting ("apply it", "go on");
      guide    — continue the work in focus with `text` added as guidance;
      revise   — a new plan like the one in focus, changed by `text`;
      delegate — hand work to the named specialist `profiles` (`text` is the instruction);
      plan     — new work: draft a goal-plan for the goal in `text`.
    """

    act: Act
    text: str = ""
    profiles: tuple[str, ...] = ()
    smaller: bool = False
    equipment: tuple[str, ...] = ()
    work_order_id: int | None = None

    def __post_init__(self) -> None:
        if self.act not in ACTS:
            raise ValueError(f"act must be one of {', '.join(ACTS)}; got {self.act!r}")


INTERROGATIVE = {"what", "why", "how", "when", "which", "who", "where", "is", "are", "did", "does", "was", "can"}
RESTRAINT = re.compile(r"\b(don'?t|do not|not yet|no need)\b", re.I)
HALT = re.compile(r"\b(stop|cancel|abort|halt)\b", re.I)
SMALLER = re.compile(r"\b(smaller|lighter|cheaper|faster)\b", re.I)
PLAN = re.compile(r"^\s*(?:please\s+)?(?:plan|(?:create|make|draft) a plan)\b[\s:,-]*(?:to\s+)?", re.I)
WORK_ORDER = re.compile(r"\b(?:work[ -]?order|wo)[\s#-]*(\d+)\b", re.I)


def keyword_reading(message: str, specialists: dict[str, Any]) -> Reading:
    """The offline demo's reading of `message` from dialogue-act cues and the packet's profile roles."""
    text = message.strip()
    words = re.findall(r"[a-z']+", text.lower())
    named = tuple(
        name
        for name, profile in specialists.items()
        if any(re.search(rf"\b{re.escape(role)}", text, re.I) for role in profile.get("roles", []))
    )
    writers = tuple(n for n in named if specialists[n].get("writes"))
    addition = text.split(":", 1)[1].strip() if ":" in text else ""
    change = re.split(r"\bbut\b", text, maxsplit=1, flags=re.I)
    wo = WORK_ORDER.search(text)
    common = {"equipment": tuple(equipment_tags(text)), "work_order_id": int(wo.group(1)) if wo else None}
    if text.endswith("?") or (words and words[0] in INTERROGATIVE):
        return Reading("question", **common)
    if RESTRAINT.search(text):
        return Reading("explain", **common)
    if planned := PLAN.match(text):  # "Plan: raise the P-02 alert …", "make a plan to …"
        goal = text[planned.end() :].strip()
        return Reading("plan", text=goal[:1].upper() + goal[1:], **common) if goal else Reading("proceed", **common)
    if HALT.search(text):
        return Reading("stop", smaller=bool(SMALLER.search(text)), **common)
    if len(writers) == 1:  # "write the repair order …", "draft a skill …": a directive to the one writer
        return Reading("delegate", text=text, profiles=writers, **common)
    if len(named) > 1:
        return Reading("delegate", text=text, profiles=named, **common)
    if addition:
        return Reading("guide", text=addition, **common)
    if len(change) > 1:
        return Reading("revise", text=change[1].strip(), **common)
    if named:
        return Reading("delegate", text=text, profiles=named, **common)
    return Reading("proceed", **common)
