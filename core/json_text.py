"""Text PostgreSQL cannot store, wherever it sits in a decoded JSON document: a NUL character
(text and jsonb refuse `\\u0000`) or a lone surrogate (a `\\ud800`-`\\udfff` escape without its pair:
no character, so it cannot be encoded). Found by path, e.g. `patch.equipment.seal.1`, so the
refusal names it — for request bodies (`core.json_body`) and for capability arguments, which reach
a service without any body (a model's tool call, a plan step, an MCP call: `core.capabilities`).
No Django import: the capability registry loads before settings (core.errors has none)."""

from __future__ import annotations

from collections.abc import Callable

from core.errors import InvalidInput

NUL_MESSAGE = "text must not contain NUL characters (\\u0000)."
SURROGATE_MESSAGE = "text must be Unicode characters; a \\ud800-\\udfff escape is half of a pair."


def has_nul(text: str) -> bool:
    return "\x00" in text


def has_lone_surrogate(text: str) -> bool:
    """True when `text` holds a lone surrogate: no character, so it cannot be encoded, and
    PostgreSQL's text and jsonb refuse it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def text_field(document: object, bad: Callable[[str], bool]) -> str | None:
    """The dotted path of the first string or object key in `document` that is `bad` ("" for the
    document itself; a key is written with a NUL escaped and a lone surrogate backslash-escaped);
    None when there is none. Iterative: no recursion whatever the shape."""
    pending: list[tuple[str, object]] = [("", document)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str) and bad(value):
            return path
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                child = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and bad(key):
                    return child.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode()
                pending.append((child, item))
        elif isinstance(value, (list, tuple)):
            pending.extend(
                (f"{path}.{index}" if path else str(index), item) for index, item in reversed(list(enumerate(value)))
            )
    return None


def unstorable_text(document: object) -> tuple[str, str] | None:
    """(path, message) of the first NUL, else of the first lone surrogate, in `document`; or None."""
    for bad, message in ((has_nul, NUL_MESSAGE), (has_lone_surrogate, SURROGATE_MESSAGE)):
        path = text_field(document, bad)
        if path is not None:
            return path, message
    return None


def require_storable_text(document: object) -> None:
    """A 422 naming the first unstorable text in `document` (e.g. {"title": …, "note": …}): for a
    service whose caller may have passed neither the body check nor dispatch (code applying an
    agent's result)."""
    found = unstorable_text(document)
    if found is not None:
        where, problem = found
        raise InvalidInput(f"{where}: {problem}", field=where)
