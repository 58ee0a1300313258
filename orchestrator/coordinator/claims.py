"""What counts as a claim of action in what the coordinator says (its summary, its answers).

Only a first-person claim counts ("I cancelled plan 6", "I've approved it", or a sentence opening on
the verb: "Cancelled plan 6."); a description of state ("plan 6 is cancelled", "it was approved by
april") is not one. Each claimed verb needs one of the action types in CLAIM_BACKING allowed in the
same turn (validate.py checks it).
"""

from __future__ import annotations

import re

VERBS = (
    r"(applied|approved|cancell?ed|stopped|paused|resumed|created|requested|delegated|drafted|rejected|started"
    r"|skipped|published|derived|chose|picked|selected)"
)
# "I cancelled", "I've approved", "we have now created", or a sentence opening on the verb ("Cancelled plan 6.")
CLAIM = re.compile(
    rf"\b(?:i|we)(?:'ve|'d|\s+have|\s+had)?\s+(?:(?:just|now|already|successfully|also|then)\s+)*{VERBS}\b"
    rf"|(?:^|[.!;:\n]\s*){VERBS}\s+(?:the\s+|your\s+|that\s+)?(?:plan|ask|step|checkpoint|interaction|approval|it)\b",
    re.IGNORECASE,
)
CLAIM_BACKING = {
    "applied": {"decide_approval"},
    "approved": {"decide_approval"},
    "rejected": {"decide_approval"},
    "cancelled": {"cancel_plan"},
    "canceled": {"cancel_plan"},
    "stopped": {"cancel_plan", "pause_plan", "stop_step"},
    "skipped": {"skip_step"},
    "published": {"decide_approval"},
    "derived": {"derive_plan"},
    "chose": {"answer_choice"},
    "picked": {"answer_choice"},
    "selected": {"answer_choice"},
    "paused": {"pause_plan"},
    "resumed": {"resume_plan"},
    "started": {"resume_plan"},
    "created": {"create_plan", "delegate", "derive_plan"},
    "drafted": {"create_plan", "delegate", "derive_plan"},
    "requested": {"request_approval"},
    "delegated": {"delegate"},
}


def claimed(text: str) -> set[str]:
    """The actions `text` claims in the first person ("I cancelled …"), as lower-case verbs."""
    return {(m.group(1) or m.group(2)).lower() for m in CLAIM.finditer(text.replace("’", "'"))}
