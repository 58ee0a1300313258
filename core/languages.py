"""The language an operator wrote in, among the ones ARIA answers in (lingua, restricted to them).

lingua is deterministic (no sampling) and built for short text, which is what chat questions
are; its models ship inside the wheel, so nothing is fetched at run time. A text whose two most
likely languages are too close to call (lingua's minimum relative distance) is the default's: "do
not cancel WO-1" scored Italian 0.25 against English 0.20 and was answered in Italian.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

SUPPORTED: dict[str, Language] = {
    "en": Language.ENGLISH,
    "fr": Language.FRENCH,
    "de": Language.GERMAN,
    "es": Language.SPANISH,
    "it": Language.ITALIAN,
    "pt": Language.PORTUGUESE,
}
_CODE_OF = {language: code for code, language in SUPPORTED.items()}
_TAG = re.compile(r"\b[A-Z]{1,4}-?\d{1,4}[A-Z]?\b")  # equipment tags carry no language
_WORD = re.compile(r"[^\W\d_]{2,}")
_MARKUP = re.compile(r"</?[A-Za-z][^<>]*>")  # a pasted tag's name is no language ("<script>" read as French)


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(*SUPPORTED.values()).with_minimum_relative_distance(0.05).build()


def language_of(text: str, *, default: str = "en") -> str:
    """ISO 639-1 code of the text's language; `default` when it has too few words to tell, or
    when its likeliest languages are too close to call."""
    words = _WORD.findall(_TAG.sub(" ", _MARKUP.sub(" ", text or "")))
    if len(words) < 2:
        return default
    detected = _detector().detect_language_of(" ".join(words))
    return _CODE_OF.get(detected, default) if detected is not None else default
