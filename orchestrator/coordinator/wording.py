"""How a message is worded: which words are the user's own, and whether a sentence asks, negates or
supposes rather than instructs.

Two users share it: the offline reader (`offline/reading.keyword_reading`), which never turns such words
into a mutation, and the validator, which checks a model's `user_request_quote` against the user's
current message in code. It is structure, not a phrase book: quoted spans are masked first (quote
marks, "> " lines, everything after "you said" / "earlier I wrote"), then each remaining sentence
is classified by a few cue words, English first with a handful of German, Spanish and French ones.
When in doubt a sentence counts as not an instruction — the safe side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Quoted spans: paired quote marks (an unclosed one quotes to the end), straight single quotes only
# when they are not apostrophes (don't, it's), and Markdown/email quote lines.
QUOTED = re.compile(
    r'"[^"]*(?:"|$)|“[^”"]*(?:”|$)|„[^“”"]*(?:[“”]|$)|«[^»]*(?:»|$)|‹[^›]*(?:›|$)|‘[^’]*(?:’|$)|`[^`]*(?:`|$)'
    r"|(?<!\w)'[^'\n]*'(?!\w)"
    r"|^\s*>.*$",
    re.MULTILINE,
)
# Reported speech: from the marker on, the words are someone's earlier ones, not this request.
REPORTED = re.compile(
    r"\b(?:you|i|we|they|he|she|someone|somebody)\s+(?:said|wrote|typed|asked|told\s+me)\b"
    r"|\bearlier,?\s+(?:i|you)\b|\b(?:my|your|the)\s+(?:earlier|last|previous|first)\s+message\b"
    r"|\bas\s+i\s+(?:said|wrote)\b|\b(?:it|the\s+\w+)\s+says\b|\bquote\s*:",
    re.IGNORECASE,
)
INTERROGATIVE = frozenset({
    "what", "why", "how", "when", "which", "who", "whom", "whose", "where", "is", "are", "was", "were", "did",
    "does", "can", "could", "would", "should", "will", "shall", "may", "might", "am", "isn't", "aren't", "wasn't",
    "didn't", "doesn't", "wie", "warum", "wann", "wer", "wo", "welche", "qué", "cómo", "cuándo", "dónde", "cuál",
    "pourquoi", "comment", "quand", "où", "quel", "quelle",
})  # fmt: skip
NEGATION = re.compile(
    r"\b(?:don'?t|dont|do\s+not|does\s+not|doesn'?t|didn'?t|not|never|no\s+need|nothing|nope|nah|cannot|can'?t"
    r"|won'?t|shouldn'?t|mustn'?t|nicht|kein\w*|nie|nein|nunca|todav[ií]a\s+no|a[uú]n\s+no|jamais|pas)\b"
    r"|^\s*(?:no|non)\b|\bno\s+(?:lo|la|los|las|le|les|hagas|apruebes)\b|\bn'",
    re.IGNORECASE,
)
SUPPOSITION = re.compile(
    r"\b(?:would|could|should|might|if|suppose|supposing|imagine|hypothetical(?:ly)?|pretend|wait|hold\s+on"
    r"|hang\s+on|describe|explain|tell\s+me|show\s+me|dry[- ]?run|simulate|w[üu]rde\w*|wenn|falls|warte"
    r"|si|ser[ií]a|har[ií]a|espera|supposons|imaginons|attends)\b",
    re.IGNORECASE,
)
# Put off or left open: a time, a condition or a hedge ("approve it after I check", "maybe", "later").
DEFERRAL = re.compile(
    r"\b(?:after|afterwards|later|tomorrow|tonight|once|unless|until|till|before|when|whenever|maybe|perhaps"
    r"|possibly|probably|eventually|whether|think|consider(?:ing)?|your\s+call|up\s+to\s+you"
    r"|next\s+(?:week|shift|time|day))\b",
    re.IGNORECASE,
)
# Someone's words passed on, whoever the speaker ("my colleague wrote", "approve it is what he said"),
# or words the user wants repeated, replied or translated rather than acted on.
REPORTING = re.compile(
    r"\b(?:said|says|wrote|writes|typed|asked|asks|told|tells|texted|messaged|e-?mailed|posted|replied|replies"
    r"|answered|mentioned|suggested|suggests|wants|wanted|quoted?|according\s+to|repeat|translate|reply\s+with"
    r"|respond\s+with|answer\s+with|type)\b",
    re.IGNORECASE,
)
# A label before a colon or a dash ("Boss: approve it", "From the logbook: …", "Ticket — approve it"):
# what follows is someone else's text. Labels that are the user's own way of instructing are exempt.
LABEL = re.compile(r"[:\u2014\u2013]|\s-\s")
OWN_LABELS = re.compile(r"^(?:plan|goal|task|new\s+plan|guidance|constraints?)$", re.IGNORECASE)
SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")


def own_words(message: str) -> str:
    """`message` with what is quoted or reported masked by spaces (same length, same positions)."""
    text = message.replace("’", "'") if "‘" not in message else message
    masked = QUOTED.sub(lambda m: " " * len(m.group()), text)
    reported = REPORTED.search(masked)
    if reported:
        masked = masked[: reported.start()] + " " * (len(masked) - reported.start())
    return masked


def _plain(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).lower()


@dataclass(frozen=True)
class Sentence:
    text: str

    @property
    def words(self) -> list[str]:
        return re.findall(r"[\w']+", self.text.lower())

    @property
    def asks(self) -> bool:
        return "?" in self.text or "¿" in self.text or bool(self.words and self.words[0] in INTERROGATIVE)

    @property
    def negates(self) -> bool:
        return bool(NEGATION.search(self.text))

    @property
    def supposes(self) -> bool:
        return bool(SUPPOSITION.search(self.text))

    @property
    def defers(self) -> bool:
        return bool(DEFERRAL.search(self.text))

    @property
    def reports(self) -> bool:
        return bool(REPORTING.search(self.text))

    @property
    def instructs(self) -> bool:
        """An instruction as far as wording goes: not a question, a negation or a supposition."""
        return not (self.asks or self.negates or self.supposes)

    @property
    def decides(self) -> bool:
        """An instruction that can carry a decision (approve, stop, pause, resume): also not put off or
        hedged, and not someone else's words passed on. (A plan's goal may well say "after" or "said".)"""
        return self.instructs and not (self.defers or self.reports)


def sentences(text: str) -> list[Sentence]:
    return [Sentence(s.group().strip()) for s in SENTENCE.finditer(text) if s.group().strip(" .!?;")]


def quote_backing(quote: str, message: str, *, decision: bool = False) -> str:
    """Why `quote` does not back a mutation asked for in `message`, or "" when it does: it must be the
    user's own words in this message (not quoted or reported), in sentences that instruct. A
    `decision` (approve, stop, pause, resume) also needs a sentence that does not put it off, hedge it
    or pass on someone else's words, and words that do not follow a label ("Boss: approve it")."""
    wanted = _plain(quote)
    if len(re.findall(r"\w", wanted)) < 2:
        return "it quotes no words of your current message (user_request_quote is empty)"
    if wanted not in _plain(message):
        return "the words it quotes are not in your current message"
    own = _plain(own_words(message))
    at = own.find(wanted)
    if at < 0:
        return "the words it quotes are quoted or reported speech in your message, not your request"
    start = max(own.rfind(mark, 0, at) for mark in ".!?;") + 1
    ends = [i for i in (own.find(mark, at + len(wanted)) for mark in ".!?;") if i >= 0]
    around = Sentence(own[start : (min(ends) + 1) if ends else len(own)])
    if around.asks:
        return "your message asks a question there; it does not ask for this"
    if around.negates:
        return "your message says not to (a negation) there"
    if around.supposes:
        return "your message supposes or asks for a description there, not for this"
    if not decision:
        return ""
    if around.defers:
        return "your message puts it off or leaves it open there (a time, a condition, a maybe), not now"
    if around.reports:
        return "your message passes on someone else's words there (reported speech), not your request"
    if follows_label(own[start:at]):
        return "the words follow a label (someone else's text after a colon or dash), not your request"
    return ""


def follows_label(before: str) -> bool:
    """Whether the text before some words in their sentence ends in a label ("Boss:", "From the log —")."""
    parts = LABEL.split(before)
    return len(parts) > 1 and any(p.strip() and not OWN_LABELS.match(p.strip()) for p in parts[:-1])
