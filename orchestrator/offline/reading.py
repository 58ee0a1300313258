"""OFFLINE STAND-IN: a reading of the user's message, the interpretation a model owns, as a small
structure.

A real model reads the words and decides, in one go, what the user wants and which state to
inspect. The offline fake splits that in two so the second half can be tested on its own:

- a `Reading` says what the user asked for in domain terms — the dialogue act and what the user
  added — and nothing about which plan, ask, work order or profile that means;
- the fake gateway (`offline/gateway.decide`) takes a reading and finds everything else by calling
  read tools: which plan "that one" is, whether an ask is open or already decided, what failed,
  what ran and which smaller profile covers it, which work order "this" is.

The scenario suite hands the gateway a reading per turn, exactly as a model would produce it, so
no test depends on matching phrases. `keyword_reading` below is the offline demo's stand-in for
the model's language understanding (the run command has no model by default): English only,
deliberately small, and safe by default. It reads only the user's own words
(`coordinator/wording.own_words`, shared with the validator: quotes and reported speech masked); a question is answered; a negation, a supposition or a
request to only describe is explained; a mutation needs an instruction at the start of a clause
("approve it", "stop that one", "plan: …"), with nothing after it that the reader does not
understand ("cancel plan 6. just kidding" takes it back), and ids in ASCII digits; anything else is
`unclear` — a clarifying answer, never a mutation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from orchestrator.coordinator.wording import SENTENCE, Sentence, follows_label, own_words, sentences
from orchestrator.offline.planner_phrases import LINE, LINE_NUMBER_WORDS
from orchestrator.planning.cells import equipment_tags

Act = Literal[
    "question",
    "explain",
    "unclear",
    "stop",
    "pause",
    "resume",
    "skip",
    "proceed",
    "guide",
    "revise",
    "delegate",
    "plan",
    "choose",
]
ACTS: tuple[str, ...] = Act.__args__


@dataclass(frozen=True)
class Reading:
    """What the user asked for.

    act:
      question — asks about state ("what happened?", "is P-02 ok?");
      explain  — wants an explanation and no action ("don't start yet, just explain");
      unclear  — not understood as an instruction: ask what the user wants, change nothing;
      stop     — halt the work in focus (`smaller`: and hand it to a smaller agent); with `step`,
                 only that step ("stop step 2");
      pause    — pause the running plan in focus (or `plan_id`): "pause plan 4", "hold it";
      resume   — resume the paused plan in focus (or `plan_id`): "resume plan 4", "unpause it";
      skip     — leave out one step that has not run (`step`, "skip step 3 of plan 4");
      proceed  — approve what is waiting ("approve it", "apply it"); `step`, `ask_id` and
                 `plan_id` name which checkpoint when the user said so ("approve step 2");
                 `decision` "publish" when the user asked to publish/ship (a draft);
      guide    — continue the work in focus with `text` added as guidance;
      revise   — a new plan like the one in focus (or `plan_id`), changed by `text`; `without`:
                 the step orders to leave out ("same as plan 4 but without step 2");
      delegate — hand work to the named specialist `profiles` (`text` is the instruction);
      plan     — new work: draft a goal-plan for the goal in `text`;
      choose   — the answer to an open choice ("which one did you mean?"): `option` (1-based; -1 the
                 last) for "the second one" / "option 2", else `pick`, the words naming it ("P-02A").
    plan_id: the plan the message names ("plan 4"), whatever the act.
    waiting: the message asks what waits for the user ("what do you need from me?").
    several: with `unclear`, what a decision named more than one of ("steps 2, 3"): one at a time.
    draft_id / drafts: the message names authoring draft N / is about drafts, reviews or publishing.
    lines: the production lines the message names ("line 2" → "line 2"), as guidance limits.
    investigation: the message is about an investigation (RCA, root cause): the agent runs answer it.
    quote: the words of the message that ask for the act (what a model puts in an action's
      `user_request_quote`); empty means the whole message.
    """

    act: Act
    text: str = ""
    profiles: tuple[str, ...] = ()
    smaller: bool = False
    equipment: tuple[str, ...] = ()
    work_order_id: int | None = None
    step: int | None = None
    ask_id: int | None = None
    plan_id: int | None = None
    draft_id: int | None = None
    drafts: bool = False
    investigation: bool = False
    decision: str = ""
    without: tuple[int, ...] = ()
    lines: tuple[str, ...] = ()
    option: int | None = None
    pick: str = ""
    waiting: bool = False
    quote: str = ""
    several: str = ""  # unclear: a decision's words name several plans, steps or asks ("plans 11, 12")

    def __post_init__(self) -> None:
        if self.act not in ACTS:
            raise ValueError(f"act must be one of {', '.join(ACTS)}; got {self.act!r}")


# A clause starts after a boundary; fillers before its verb ("yes, ok, please approve it") are skipped.
CLAUSE = re.compile(r"[^,;:.!?\n]+")
FILLER = re.compile(
    r"^(?:(?:yes|yeah|yep|ok|okay|sure|alright|please|then|now|so|and|also|fine|just|kindly)\b\s*)+", re.I
)
# A decision is the whole clause: the verb and, at most, what it is about ("approve step 2 of plan 6",
# "stop that one and …") — not "I approve of your analysis", "accept that I am busy", "stop worrying".
_TARGET = (
    r"(?:it|this|that|them|everything|(?:this|that)\s+one|(?:the|this|that|my)\s+(?:checkpoint|step|ask|change"
    r"|request|interaction|plan|run|work|draft|review)|(?:step|ask|checkpoint|interaction|plan|draft)\s*#?\s*\d+"
    r"(?:\s+(?:of|on|in|for)\s+plan\s*#?\s*\d+)?)"
)
APPROVE = re.compile(
    rf"^(?:(?:i\s+)?(?:approve|apply|accept|confirm|proceed|allow|publish|ship|release)(?:\s+{_TARGET})?"
    rf"|go\s+ahead(?:\s+and\s+(?:approve|apply)(?:\s+{_TARGET})?)?|(?:do|run)\s+it)(?:\s+(?:please|now))?$",
    re.I,
)
PUBLISH = re.compile(r"^(?:i\s+)?(?:publish|ship|release)\b", re.I)
SKIP = re.compile(rf"^skip\s+{_TARGET}(?:\s+(?:please|now))?$", re.I)
HALT = re.compile(rf"^(?:stop|cancel|abort|halt)(?:\s+{_TARGET})?(?:\s+(?:please|now))?(?:\s+and\s+.+)?$", re.I)
PAUSE = re.compile(rf"^(?:pause|suspend|hold)(?:\s+{_TARGET})?(?:\s+(?:please|now))?$", re.I)
RESUME = re.compile(rf"^(?:resume|unpause)(?:\s+{_TARGET})?(?:\s+(?:please|now))?$", re.I)
DIRECT = re.compile(
    r"^(?:research|investigate|write|draft|have|ask|let|get|check|review|build|create|delegate|hand)\b", re.I
)
CARRY_ON = re.compile(
    r"^(?:(?:yes|ok|okay|please|then|so|fine)\W+)*(?:continue|carry\s+on|keep\s+going|go\s+on)\b"
    r"(?:\s+(?:with\s+)?(?:the|that|this|my)\s+(?:plan|run|work))?[\s,;-]*(?:but\s+|and\s+|with\s+)?(?P<rest>\w.*)$",
    re.I,
)
GUIDE = re.compile(r"\b(?:continue|carry\s+on|keep\s+going|add(?:ed)?|constraint|guidance)\b", re.I)
REVISE = re.compile(r"\b(?:(?:previous|last|earlier|same|that|this)|same\s+as)\s+(?:plan|run)\b", re.I)
# "… without step 2", "minus steps 2 and 3", "but drop step 4": the steps a revised plan leaves out
WITHOUT = re.compile(
    r"\b(?:without|minus|except|drop(?:ping)?|skip(?:ping)?|leave\s+out|leaving\s+out|remove)\s+(?:the\s+)?"
    r"steps?\s*#?\s*(\d+(?:\s*(?:,|and|&|\+)\s*#?\s*\d+)*)",
    re.I,
)
DRAFT = re.compile(r"\b(?:drafts?|reviews?|publish\w*|ship|release)\b", re.I)
INVESTIGATION = re.compile(r"\b(?:investigat\w*|rca|root[- ]cause|diagnos\w*)\b", re.I)
DRAFT_ID = re.compile(r"\bdraft\s*#?\s*(\d+)\b", re.I)
SMALLER = re.compile(r"\b(smaller|lighter|cheaper|faster)\b", re.I)
# "Plan: …", "plan to …", "plan the …", "make a plan to …" — not "plan 7 looks fine", "plan #7", "Plan looks
# good" (a plan named or talked about is not new work to draft).
PLAN = re.compile(
    r"^\s*(?:please\s+)?(?:plan(?=\s*[:–—]|\s+-|\s+(?:to|the)\b)|(?:create|make|draft)\s+a\s+plan)\b"
    r"[\s:,\-–—]*(?:to\s+)?",
    re.I,
)
WORK_ORDER = re.compile(r"\b(?:work[ -]?order|wo)[\s#-]*(\d+)\b", re.I)
STEP = re.compile(r"\bstep\s*#?\s*(\d+)\b", re.I)
ASK = re.compile(r"\b(?:ask|interaction|checkpoint)\s*#?\s*(\d+)\b", re.I)
PLAN_ID = re.compile(r"\bplan\s*#?\s*(\d+)\b", re.I)
WAITING = re.compile(
    r"\b(?:need\w*\s+(?:from|of)\s+me|waiting\s+(?:on|for)\s+me|for\s+me\s+to\s+(?:decide|answer|choose|pick)"
    r"|(?:anything|something)\s+for\s+me|what\s+do\s+you\s+need)\b",
    re.I,
)
ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "last": -1,
}  # fmt: skip
# A whole clause that names one option: "the second one", "option 2", "I meant P-02A", "P-02 please".
CHOOSE = re.compile(
    r"^(?:(?:i\s+meant?|take|use|pick|choose|select|go\s+with|let'?s\s+(?:go\s+with|take|use)|make\s+it"
    r"|it'?s|it\s+is)\s+)?(?:the\s+)?(?:(?:option|number|no\.?|choice)\s*#?\s*|#\s*)?(?P<what>[\w./-]+)"
    r"(?:\s+(?:one|option|cell|pump|please))*$",
    re.I,
)


NON_ASCII_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script (ids are read in ASCII)


def chosen(clause: str) -> tuple[int | None, str] | None:
    """(option number, words) when `clause` names one option of a choice; None when it does not."""
    found = CHOOSE.match(clause.strip())
    if not found:
        return None
    what = found.group("what")
    if what.lower() in ORDINALS:
        return ORDINALS[what.lower()], ""
    if what.isascii() and what.isdigit() and len(what) <= 2:  # not "²" (a digit to isdigit, not to int)
        return int(what), ""
    if re.search(r"\d", what) and re.search(r"[a-z]", what, re.I):  # a tag-like option: P-02, P-02A
        return None, what
    return None


def _number(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text)
    return int(found.group(1)) if found else None


def _directives(text: str, original: str, *, decisions: bool = False) -> list[tuple[str, str]]:
    """(clause without its fillers, the clause as the user wrote it) for each clause of `text`. With
    `decisions`, only clauses that can carry a decision: in a sentence that is not put off, hedged or
    reported (`Sentence.decides`), and not after a label ("Boss: approve it")."""
    return [(bare, words) for bare, words, _end in _clauses(text, original, decisions=decisions)]


def _clauses(text: str, original: str, *, decisions: bool = False) -> list[tuple[str, str, int]]:
    """`_directives` with where each clause ends in the message."""
    out = []
    for sentence in SENTENCE.finditer(text):
        if decisions and not Sentence(sentence.group()).decides:
            continue
        for clause in CLAUSE.finditer(sentence.group()):
            if decisions and follows_label(sentence.group()[: clause.start()]):
                continue
            bare = FILLER.sub("", clause.group().strip())
            if bare:
                start, end = sentence.start() + clause.start(), sentence.start() + clause.end()
                out.append((bare, original[start:end].strip(), end))
    return out


# What may follow a decision without casting doubt on it: another decision, or a closing word.
CLOSER = re.compile(r"^(?:thanks?(?:\s+you)?|thx|ty|cheers|please|now|right\s+now|asap|quickly|immediately)$", re.I)


def _unread_after(decision: str, own: str, message: str) -> bool:
    """True when something the reader does not understand follows the decision the user wrote
    (`decision`, as in the message): "cancel plan 6. just kidding", "stop it — actually no",
    "Cancel plan 6. Translate that into German." Words after an instruction can take it back or
    make it the object of another request; not understood, they leave the message unclear."""
    clauses = _clauses(own, message)
    at = next((i for i, (_bare, words, _end) in enumerate(clauses) if words == decision), None)
    if at is None:
        return True
    return not all(_understood(bare) for bare, _words, _end in clauses[at + 1 :])


def _understood(clause: str) -> bool:
    """A clause the reader can place after a decision: another decision, a closing word, a request
    for a smaller agent ("…, use a smaller agent") or a directive to a specialist."""
    return bool(
        CLOSER.match(clause)
        or HALT.match(clause)
        or PAUSE.match(clause)
        or RESUME.match(clause)
        or SKIP.match(clause)
        or APPROVE.match(clause)
        or SMALLER.search(clause)
        or DIRECT.match(clause)
    )


def _several(text: str) -> str:
    """ "plans 11, 12" when the message names more than one plan (or step, or ask): a decision acts on
    one target, and the others would be dropped without a word."""
    for noun, pattern in (("plan", PLAN_ID), ("step", STEP), ("ask", ASK)):
        ids = sorted({int(n) for n in pattern.findall(text)})
        if len(ids) > 1:
            return f"{noun}s {', '.join(map(str, ids))}"
    return ""


def keyword_reading(message: str, specialists: dict[str, Any]) -> Reading:
    """The offline demo's reading of `message` from its own words' structure and the packet's roles."""
    own = own_words(message)
    text = " ".join(own.split())
    wo = WORK_ORDER.search(text)
    common = {
        "equipment": tuple(equipment_tags(text)),
        "work_order_id": int(wo.group(1)) if wo else None,
        "draft_id": _number(DRAFT_ID, text),
        "drafts": bool(DRAFT.search(PLAN.sub("", text, count=1))),  # not "draft a plan …"
        "investigation": bool(INVESTIGATION.search(text)),
        "lines": tuple(dict.fromkeys(f"line {LINE_NUMBER_WORDS.get(n.lower(), n)}" for n in LINE.findall(text))),
        "plan_id": _number(PLAN_ID, text),
        "waiting": bool(WAITING.search(text)),
    }
    parts = sentences(own)
    if not parts or NON_ASCII_DIGIT.search(text):  # "plan ١٨": an id the user may not have seen as 18
        return Reading("unclear", **common)
    if any(s.asks for s in parts):
        return Reading("question", **common)
    if not all(s.instructs for s in parts):  # a negation, a supposition, "only describe"
        return Reading("explain", **common)
    clauses = _directives(own, message)
    decisions = _directives(own, message, decisions=True)
    if planned := PLAN.match(text):  # "Plan: raise the P-02 alert …", "make a plan to …"
        goal = text[planned.end() :].strip()
        if not goal:
            return Reading("unclear", **common)
        return Reading("plan", text=goal[:1].upper() + goal[1:], quote=message.strip(), **common)
    targets = {"step": _number(STEP, text)}
    decisive = (HALT, PAUSE, RESUME, SKIP, APPROVE)
    decided = [(bare, w) for bare, w in decisions if any(p.match(bare) for p in decisive)]
    if decided and _unread_after(decided[-1][1], own, message):
        return Reading("unclear", **common)
    if decided and (several := _several(text)):  # "cancel plan 12 and plan 11": one would be dropped
        return Reading("unclear", several=several, **common)
    if halt := next((w for bare, w in decisions if HALT.match(bare)), None):
        return Reading("stop", smaller=bool(SMALLER.search(text)), quote=halt, **targets, **common)
    for act, pattern in (("pause", PAUSE), ("resume", RESUME)):
        if moved := next((w for bare, w in decisions if pattern.match(bare)), None):
            return Reading(act, quote=moved, **common)
    if skip := next((w for bare, w in decisions if SKIP.match(bare)), None):
        return Reading("skip", quote=skip, **targets, **common)
    if ":" in text and GUIDE.search(text.split(":", 1)[0]):
        return Reading("guide", text=text.split(":", 1)[1].strip(), quote=message.strip(), **common)
    if carry := CARRY_ON.match(text):  # "carry on, but only line 2": guidance without a colon
        return Reading("guide", text=carry.group("rest").strip(), quote=message.strip(), **common)
    if approve := next(((b, w) for b, w in decisions if APPROVE.match(b)), None):
        decision = "publish" if PUBLISH.match(approve[0]) else "approve"
        return Reading("proceed", quote=approve[1], decision=decision, ask_id=_number(ASK, text), **targets, **common)
    if any(DIRECT.match(bare) for bare, _ in clauses):
        named = tuple(
            name
            for name, profile in specialists.items()
            if any(re.search(rf"\b{re.escape(role)}", text, re.I) for role in profile.get("roles", []))
        )
        writers = tuple(n for n in named if specialists[n].get("writes"))
        if len(writers) == 1:  # "write the repair order …", "draft a skill …": a directive to the one writer
            return Reading("delegate", text=text, profiles=writers, quote=message.strip(), **common)
        if named:
            return Reading("delegate", text=text, profiles=named, quote=message.strip(), **common)
    change = re.split(r"\bbut\b", text, maxsplit=1, flags=re.I)
    without = WITHOUT.search(text)
    if REVISE.search(change[0]) and (len(change) > 1 or without):
        left_out = tuple(int(n) for n in re.findall(r"\d+", without.group(1))) if without else ()
        what = change[1].strip() if len(change) > 1 else text[without.start() :].strip()
        source = {**common, "plan_id": _number(PLAN_ID, change[0])}  # the plan before "but" is the one copied
        return Reading("revise", text=what, without=left_out, quote=message.strip(), **source)
    if len(decisions) == 1 and (pick := chosen(decisions[0][0])):  # "the second one", "P-02A"
        return Reading("choose", option=pick[0], pick=pick[1], quote=decisions[0][1], **common)
    return Reading("unclear", **common)
