"""What each kind of JSON attachment needs, as JSON Schema (if/then on `kind`), so a body the schema
calls valid is never refused for a rule it did not state:

- a text snippet: a text that is not blank (attachment_add_text strips it);
- a library resource: one of the resource types and a ref that is not blank; a KB entry's or a work
  order's ref is a row id written in digits, a prompt's version after `@v` too (assistant.library);
- an object file: the `default` bucket and a plain relative storage key (object_key_clean): not
  blank, at most 512 characters, no control character, backslash, leading `/` or drive letter,
  no empty, `.` or `..` segment.

Patterns are ECMA-262 as JSON Schema reads them: no `\\s` or `$` (both mean other things in Python's
`re`, which the server and Python validators use); the end of the text is `(?![\\s\\S])`.
"""

from __future__ import annotations

from typing import Any

from assistant.library import RESOURCE_TYPES
from assistant.services.attachments import OBJECT_KEY_MAX_CHARS
from core.json_types import NOT_BLANK

_SPACE = "[" + NOT_BLANK.removeprefix("[^")  # one character str.strip() removes
_END = r"(?![\s\S])"
_ROW_ID = "(?:0|[1-9][0-9]{0,18})"  # digits as str(pk) writes them (a number past any row names none: 404)
ROW_ID_REF = f"^{_SPACE}*{_ROW_ID}{_SPACE}*{_END}"
# "name" or "name@v<version>"; what follows the first "@v" is a version number or nothing
PROMPT_REF = rf"^(?:(?!@v)[\s\S])*(?:@v{_ROW_ID}?{_SPACE}*)?{_END}"
_SEGMENT = rf"(?!\.\.?(?:/|{_END}))[^/\\\u0000-\u001f\u007f]+"
OBJECT_KEY = rf"^(?![A-Za-z]:){_SEGMENT}(?:/{_SEGMENT})*{_END}"


def _when(condition: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    return {"if": {"properties": condition, "required": list(condition)}, "then": then}


def _not_blank(*more: dict[str, Any]) -> dict[str, Any]:
    return {"allOf": [{"pattern": NOT_BLANK}, *more]}


ATTACHMENT_KIND_RULES: list[dict[str, Any]] = [
    _when(
        {"kind": {"const": "text_snippet"}},
        {"properties": {"text": {"pattern": NOT_BLANK}}, "required": ["text"]},
    ),
    _when(
        {"kind": {"const": "library_resource"}},
        {
            "properties": {"resource_type": {"enum": list(RESOURCE_TYPES)}, "ref": _not_blank()},
            "required": ["resource_type", "ref"],
            "allOf": [
                _when(
                    {"resource_type": {"enum": ["kb_entry", "work_order"]}},
                    {"properties": {"ref": {"pattern": ROW_ID_REF}}},
                ),
                _when({"resource_type": {"const": "prompt"}}, {"properties": {"ref": {"pattern": PROMPT_REF}}}),
            ],
        },
    ),
    _when(
        {"kind": {"const": "object_file"}},
        {
            "properties": {
                "bucket": {"const": "default"},
                "key": _not_blank({"maxLength": OBJECT_KEY_MAX_CHARS, "pattern": OBJECT_KEY}),
            },
            "required": ["key"],
        },
    ),
]
