"""The words the deterministic planner reads in a goal (the heuristic planner; the model planner's
scope step). Not in `orchestrator/offline/`: that package is the fake engine's and is imported only
when it runs, while these serve the real planners too. They only decide *which* set a goal is about
and what to do with each member; ids are always resolved through the read capabilities.
"""

from __future__ import annotations

import re

# "all / every / each …" makes a goal range over a set of objects.
SET_WORDS = re.compile(r"\b(all|every|each|any|whole)\b", re.IGNORECASE)
# the objects a broad goal can range over, singular or plural
ALARMS = re.compile(r"\b(alarms?|alerts?|anomal(?:y|ies))\b", re.IGNORECASE)
WORK_ORDERS = re.compile(r"\b(work[- ]?orders?|orders?|wos?|tickets?)\b", re.IGNORECASE)
# which alarms / orders: an alarm is open while it stands (pending, unacknowledged, acknowledged)
OPEN_ALARM_STATES = ("pending", "active_unack", "acknowledged")
ORDER_STATUS = re.compile(r"\b(detected|analy[sz]ed|open|in[- ]progress|on[- ]hold)\b", re.IGNORECASE)
# what to do with each object
INVESTIGATE = re.compile(r"\b(investigat\w*|root[- ]cause|rca|diagnos\w*|analy[sz]e|why)\b", re.IGNORECASE)
REPAIR = re.compile(
    r"\b(prepare|generate|write|draft|create|make)\b.{0,30}\b(work[- ]?orders?|repair(?: orders?)?|orders?)\b"
    r"|\brepair[- ]orders?\b",
    re.IGNORECASE,
)
# "line 1", "line two", "on line 2": a production line by its number or name word
LINE = re.compile(r"\bline\s*(\d+|one|two|three|four|five)\b", re.IGNORECASE)
LINE_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5"}
# equipment nouns a goal may use instead of a tag ("the pump on line 1")
EQUIPMENT_NOUNS = re.compile(r"\bthe\s+(pump|compressor|conveyor|press|motor|fan|mixer)\b", re.IGNORECASE)
# a goal's clauses ("investigate …, and prepare …, then notify …"); a clause none of the words above
# (nor SIGNAL_WORDS / READ_WORDS) covers is reported as a part the planner did not plan
CLAUSE_SPLIT = re.compile(r"\s*(?:,|;|\band then\b|\bthen\b|\band\b)\s*", re.IGNORECASE)
SIGNAL_WORDS = re.compile(r"\b(signals?|trends?|readings?|vibration|temperature|pressure|flow|current)\b", re.I)
READ_WORDS = re.compile(r"\b(show|list|read|check|look|see|what|which|backlog|status)\b", re.IGNORECASE)
LIMIT_WORDS = re.compile(r"\b(limits?|thresholds?|set ?points?|trip|dead[- ]?band|on[- ]delay|alert|because)\b", re.I)
