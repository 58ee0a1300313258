"""OFFLINE STAND-IN (fake engine only): what an operator's chat message asks for, read from its
words in the six chat languages — the work order it names (WO-1, "work order 1"), a request to
act (cancel, close, acknowledge, shelve, assign…, negated or not) and on what (work orders or
alarms), and the signals it names (vibration, temperature, pressure, flow). The Q&A stand-in
never acts on a request: it says where the operator does it, with the facts it read."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field


def plain(text: str) -> str:
    """Lower case without accents: how cue words are compared (ß is kept as ss)."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# "WO-1", "WO #1", "WO1", "work order 1", "work order #12", "ordre de travail 1", "Auftrag 1"…
_WO_WORDS = (
    r"wo|work[ -]?orders?|ordres? de travail|(?:arbeits)?auftrag|ordene?s? de trabajo|ordini? di lavoro"
    r"|ordens? de (?:trabalho|servico)"
)
WORK_ORDER_REF = re.compile(rf"\b(?:{_WO_WORDS})\s*(?:n[or]?\.?\s*|nummer\s*|numero\s*)?[-#:]?\s*(\d{{1,9}})\b")

# A change is a request to act on ARIA's records when it names one of their settings ("change the
# alert limit", not "change the bearing").
_OF_SETTING = (
    r"(?:\W+\w+){0,4}?\W+(?:limits?|limites?|thresholds?|seuils?|grenzwert\w*|schwelle\w*|umbral\w*|sogli[ae]"
    r"|limiar\w*|priorit\w*|prioridad\w*|status|statut|estado|stato|title|titre|deadband|on-?delay)\b"
)
# Verbs of a request to act, by what they act on. Forms: imperative and infinitive (a participle
# such as "cancelled" describes a state: "why was WO-1 cancelled?" is a question, not a request).
_WORK_ORDER_VERBS = {
    "cancel": r"cancel|annule[rz]?|stornier(?:e|en)|abbrechen|cancela[rd]?|cancele[n]?|annulla(?:re|te)?",
    "complete": r"finish|termine[rz]|abschliessen|beende[n]?|completa[r]?|completare|concludi|concludere"
    r"|conclui[r]?|finaliza[r]?",
    "assign": r"re-?assign|assign|unassign|assigne[rz]?|attribue[rz]?|affecte[rz]?|zuweisen|zuordnen"
    r"|asigna[r]?|asigne|reasigna[r]?|assegna(?:re)?|riassegna(?:re)?|atribui[r]?|atribua|designa[r]?",
    "start": r"demarre[rz]?|starte[n]?|inicia[r]?|avvia(?:re)?",
    "hold": r"put (?:it |this |that )?on hold|mets? en attente|mettre en attente|zuruckstellen|pausiere[n]?"
    r"|pon(?:er)? en espera|metti in attesa|coloca[r]? em espera",
    "resume": r"reprend(?:s|re|z)|fortsetzen|reanuda[r]?|riprendi|riprendere|retoma[r]?",
    "reopen": r"reopen|rouvr(?:e|ir|ez)|wieder ?offnen|reabr[ea]r?|riapri(?:re)?",
    "delete": r"delete|supprime[rz]?|losche[n]?|elimina[r]?|borra[r]?|cancella(?:re)?|apaga[r]?"
    r"|exclui[r]?",
    "create": r"cree[rz]?|creer|erstelle[n]?|anlegen|crea[r]?|creare|cria[r]?",
}
_ALARM_VERBS = {
    "acknowledge": r"acknowledge|ack|acquitte[rz]?|quittiere[n]?|bestatige[n]?|reconoce[r]?|reconozca"
    r"|riconosci|riconoscere|tacita(?:re)?|reconhece[r]?|reconheca",
    "shelve": r"shelve|inhibe[rz]?|unterdrucke[n]?|inhibir|inibisci|inibire|inibir",
    "unshelve": r"unshelve",
    "silence": r"silence|mute|stummschalten|silencia[r]?|silenzia(?:re)?",
    "out_of_service": r"(?:put|take) (?:\w+ ){0,4}out of service|mettre hors service|ausser betrieb nehmen",
    "return_to_service": r"return (?:\w+ ){0,4}to service|remettre en service",
}
_OTHER_VERBS = {
    "approve": r"approve|reject|approuve[rz]?|rejette[rz]?|genehmige[n]?|ablehnen|aprueba[r]?|rechaza[r]?"
    r"|approva(?:re)?|rifiuta(?:re)?|aprova[r]?|rejeita[r]?",
    "change": rf"(?:modifie[rz]?|change[rz]|andere[n]?|cambia[r]?|modifica[r]?|modificare|cambiare|altera[r]?"
    rf"|muda[r]?){_OF_SETTING}",
}
# English verbs that are also adjectives or nouns ("is it complete?", "any change?", "how close to
# trip?"): a request only where a clause starts with them, after a polite or negated lead-in.
_LEADING_VERBS = {
    "complete": r"complete|close|finish",
    "start": r"start|begin",
    "hold": r"hold|pause",
    "resume": r"resume",
    "reset": r"clear|reset",
    "create": r"create",
    "change": rf"(?:change|set|update|edit|modify|lower|raise|increase|decrease){_OF_SETTING}",
}
_LEAD_IN = (
    r"(?:^|[.!?;:,\n]|\band\b|\bthen\b)\s*"
    r"(?:(?:please|pls|plz|kindly|just|now|also|ok|okay|aria|you|we|i)\s+)*"
    r"(?:(?:can|could|would|will|should|shall|must|may)\s+(?:you|i|we|someone)\s+(?:please\s+)?"
    r"|(?:i|we)\s+(?:want|need|would like|'d like|wish)\s+(?:you\s+)?to\s+|how\s+(?:do|can|should)\s+(?:i|we)\s+"
    r"|go ahead and\s+|let'?s\s+|do not\s+|don'?t\s+|never\s+|try to\s+)?"
)
# A request worded as the state wanted: "I want WO-1 cancelled", "mark WO-1 as done", "get the alarm
# acknowledged". A participle alone describes ("why was WO-1 cancelled?"): only after these lead-ins.
_PARTICIPLES = {
    "cancel": r"cancell?ed",
    "complete": r"closed|completed?|done|finished",
    "assign": r"(?:re|un)?assigned",
    "start": r"started",
    "hold": r"on hold|paused",
    "reopen": r"reopened",
    "delete": r"deleted|removed",
    "acknowledge": r"acknowledged|acked",
    "shelve": r"shelved",
    "unshelve": r"unshelved",
    "silence": r"silenced|muted",
}
_WANTED = (
    r"\b(?:(?:i|we)\s+(?:want|need|would like|'d like|wish)|(?:can|could|would)\s+you\s+(?:get|have)|get|have|mark)"
    r"\s+(?:[\w#-]+\s+){0,5}?(?:as\s+|to\s+be\s+|be\s+)?"
)
_WO_TAG = re.compile(r"\bwo\s*[-#:]?\s*\d+", re.I)  # "WO-1" is not an equipment tag
ALARM_WORDS = re.compile(r"\b(?:alarms?|alarmes?|alarmen?|alarmas?|allarm[ei])\b")
WORK_ORDER_WORDS = re.compile(rf"\b(?:{_WO_WORDS})\b")

# A signal the question names, in the chat languages → the stem its key or name carries.
SIGNAL_WORDS = {
    "vib": r"vibrations?|vib|schwingungs?|schwingungen|vibracion|vibraciones|vibrazion[ei]|vibracao|vibracoes",
    "temp": r"temperatures?|temp|temperatur|temperaturas?|temperature",
    "press": r"pressures?|pression|druck|presion|pressione|pressao",
    "flow": r"flow|debit|durchfluss|caudal|portata|vazao|fluxo",
    "current": r"motor current|amps?|amperes?|courant|strom|corriente|corrente",
}


def _verbs(table: dict[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    return [(verb, re.compile(rf"\b(?:{words})\b")) for verb, words in table.items()]


_ACTIONS = [("work_order", _verbs(_WORK_ORDER_VERBS)), ("alarm", _verbs(_ALARM_VERBS)), ("", _verbs(_OTHER_VERBS))]
_WANTED_STATES = [(verb, re.compile(rf"{_WANTED}(?:{words})\b")) for verb, words in _PARTICIPLES.items()]
_LEADING = [(verb, re.compile(rf"{_LEAD_IN}(?:{words})\b")) for verb, words in _LEADING_VERBS.items()]
_SIGNALS = [(stem, re.compile(rf"\b(?:{words})\b")) for stem, words in SIGNAL_WORDS.items()]
_DOMAIN_OF = {verb: domain for domain, verbs in _ACTIONS for verb, _ in verbs} | {
    "complete": "work_order",
    "start": "work_order",
    "hold": "work_order",
    "resume": "work_order",
    "create": "work_order",
    "reset": "alarm",
}


@dataclass
class Ask:
    """What one chat message asks."""

    text: str  # the message with its work-order references taken out (tags are looked for in it)
    work_order_id: int | None = None
    action: str | None = None  # the canonical verb of a request to act ("cancel", "acknowledge"…)
    domain: str = ""  # what it acts on: "work_order", "alarm", or "" when the words do not say
    signal_stems: list[str] = field(default_factory=list)


def read_ask(question: str) -> Ask:
    """The work order, the request to act and the signals a chat message names."""
    text = plain(question)
    ref = WORK_ORDER_REF.search(text)
    ask = Ask(
        text=_WO_TAG.sub(" ", question),
        work_order_id=int(ref.group(1)) if ref else None,
        signal_stems=[stem for stem, pattern in _SIGNALS if pattern.search(text)],
    )
    ask.action = _action(text)
    if ask.action:
        if ALARM_WORDS.search(text) and not ref:
            ask.domain = "alarm"
        elif ref or WORK_ORDER_WORDS.search(text):
            ask.domain = "work_order"
        else:
            ask.domain = _DOMAIN_OF.get(ask.action, "")
    return ask


def _action(text: str) -> str | None:
    found: list[tuple[int, str]] = []
    for _, verbs in _ACTIONS:
        found += [(m.start(), verb) for verb, pattern in verbs if (m := pattern.search(text))]
    found += [(m.end(), verb) for verb, pattern in _LEADING if (m := pattern.search(text))]
    found += [(m.start(), verb) for verb, pattern in _WANTED_STATES if (m := pattern.search(text))]
    return min(found)[1] if found else None
