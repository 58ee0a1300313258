"""Time windows named in plain words ("last 6 hours", "since Monday", "yesterday", "this month"),
in English, French, German, Spanish, Italian and Portuguese, turned into a [start, end) range.

Deterministic: the caller passes `now`; calendar boundaries use the current Django time zone.
Tools take numbers (minutes, hours, since, days); this parser is how words become those numbers.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone


@dataclass(frozen=True)
class TimeWindow:
    start: datetime
    end: datetime
    label: str  # canonical English, e.g. "last 6 hours"

    @property
    def minutes(self) -> int:
        return max(1, math.ceil((self.end - self.start).total_seconds() / 60))

    @property
    def hours(self) -> float:
        return round(self.minutes / 60, 2)

    @property
    def days(self) -> int:
        return max(1, math.ceil((self.end - self.start).total_seconds() / 86400))

    def as_dict(self) -> dict[str, str | int | float]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "label": self.label,
            "minutes": self.minutes,
            "days": self.days,
        }


_UNITS: dict[str, tuple[str, ...]] = {
    "minute": ("min", "mins", "minute", "minutes", "minuten", "minuto", "minutos", "minuti"),
    "hour": ("h", "hr", "hrs", "hour", "hours", "heure", "heures", "stunde", "stunden", "hora", "horas", "ora", "ore"),
    "day": ("day", "days", "jour", "jours", "tag", "tage", "tagen", "dia", "dias", "giorno", "giorni"),
    "week": ("week", "weeks", "semaine", "semaines", "woche", "wochen", "semana", "semanas", "settimana", "settimane"),
}
_UNIT_OF = {word: unit for unit, words in _UNITS.items() for word in words}
_UNIT_RE = "|".join(sorted(_UNIT_OF, key=len, reverse=True))
_LAST = r"(?:last|past|previous|dernieres?|derniers?|letzten?|vergangenen?|ultim[oaie]s?)"
_NUMBER_FIRST = re.compile(rf"\b(\d{{1,4}})\s+{_LAST}\s+({_UNIT_RE})\b")  # "les 6 dernières heures"
_LAST_NUMBER = re.compile(rf"\b{_LAST}\s+(\d{{1,4}})\s*({_UNIT_RE})\b")  # "last 6 hours", "letzten 6 Stunden"
_LAST_ONE = re.compile(rf"\b{_LAST}\s+({_UNIT_RE})\b")  # "last hour", "past week"

_WEEKDAYS: tuple[tuple[str, ...], ...] = (
    ("monday", "lundi", "montag", "lunes", "lunedi", "segunda"),
    ("tuesday", "mardi", "dienstag", "martes", "martedi", "terca"),
    ("wednesday", "mercredi", "mittwoch", "miercoles", "mercoledi", "quarta"),
    ("thursday", "jeudi", "donnerstag", "jueves", "giovedi", "quinta"),
    ("friday", "vendredi", "freitag", "viernes", "venerdi", "sexta"),
    ("saturday", "samedi", "samstag", "sabado", "sabato"),
    ("sunday", "dimanche", "sonntag", "domingo", "domenica"),
)
_WEEKDAY_OF = {word: index for index, words in enumerate(_WEEKDAYS) for word in words}
_SINCE = re.compile(r"\b(?:since|depuis|seit|desde|dal|da)\s+(?:le\s+|el\s+|o\s+|a\s+)?(\w+)")
_YESTERDAY = re.compile(r"\b(?:yesterday|hier|gestern|ayer|ieri|ontem)\b")
_TODAY = re.compile(r"\b(?:today|aujourd'?hui|heute|hoy|oggi|hoje)\b")
_THIS_WEEK = re.compile(r"\b(?:this week|cette semaine|diese[rn]? woche|esta semana|questa settimana)\b")
_THIS_MONTH = re.compile(r"\b(?:this month|ce mois|diese[nm]? monat|este mes|questo mese)\b")
_LAST_MONTH = re.compile(r"\b(?:last month|le mois dernier|letzten monat|el mes pasado|il mese scorso|mes passado)\b")


def _plain(text: str) -> str:
    """Lower case without accents, so 'dernières' and 'últimas' match one spelling."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _relative(count: int, unit: str, now: datetime) -> TimeWindow:
    count = max(count, 1)
    delta = {"minute": timedelta(minutes=count), "hour": timedelta(hours=count)}.get(unit)
    delta = delta or (timedelta(days=count) if unit == "day" else timedelta(weeks=count))
    label = f"last {count} {unit}{'s' if count != 1 else ''}"
    return TimeWindow(now - delta, now, label)


def _since_word(word: str, now: datetime, local: datetime) -> TimeWindow | None:
    if word in _WEEKDAY_OF:
        back = (local.weekday() - _WEEKDAY_OF[word]) % 7
        return TimeWindow(_midnight(local - timedelta(days=back)), now, f"since {_WEEKDAYS[_WEEKDAY_OF[word]][0]}")
    if _YESTERDAY.fullmatch(word):
        return TimeWindow(_midnight(local - timedelta(days=1)), now, "since yesterday")
    return None


def _calendar(text: str, now: datetime, local: datetime) -> TimeWindow | None:
    today = _midnight(local)
    rules: tuple[tuple[re.Pattern[str], Callable[[], TimeWindow]], ...] = (
        (_YESTERDAY, lambda: TimeWindow(today - timedelta(days=1), today, "yesterday")),
        (_TODAY, lambda: TimeWindow(today, now, "today")),
        (_THIS_WEEK, lambda: TimeWindow(today - timedelta(days=local.weekday()), now, "this week")),
        (_THIS_MONTH, lambda: TimeWindow(today.replace(day=1), now, "this month")),
        (_LAST_MONTH, lambda: _previous_month(today)),
    )
    for pattern, build in rules:
        if pattern.search(text):
            return build()
    return None


def _previous_month(today: datetime) -> TimeWindow:
    first = today.replace(day=1)
    start = (first - timedelta(days=1)).replace(day=1)
    return TimeWindow(start, first, "last month")


def parse_time_window(text: str, *, now: datetime | None = None) -> TimeWindow | None:
    """The time window the text names, or None when it names none."""
    now = now or timezone.now()
    local = timezone.localtime(now) if timezone.is_aware(now) else now
    plain = _plain(text)
    for pattern in (_NUMBER_FIRST, _LAST_NUMBER):
        match = pattern.search(plain)
        if match:
            return _relative(int(match.group(1)), _UNIT_OF[match.group(2)], now)
    since = _SINCE.search(plain)
    if since:
        window = _since_word(since.group(1), now, local)
        if window:
            return window
    calendar = _calendar(plain, now, local)
    if calendar:
        return calendar
    match = _LAST_ONE.search(plain)
    if match:
        return _relative(1, _UNIT_OF[match.group(1)], now)
    return None
