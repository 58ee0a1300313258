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
from core.json_types import NOT_BLANK, STRIPPED_CHAR, TEXT_END, json_schema_when

_ROW_ID = "(?:0|[1-9][0-9]{0,18})"  # digits as str(pk) writes them (a number past any row names none: 404)
ROW_ID_REF = f"^{STRIPPED_CHAR}*{_ROW_ID}{STRIPPED_CHAR}*{TEXT_END}"
# "name" or "name@v<version>"; what follows the first "@v" is a version number or nothing
PROMPT_REF = rf"^(?:(?!@v)[\s\S])*(?:@v{_ROW_ID}?{STRIPPED_CHAR}*)?{TEXT_END}"
_SEGMENT = rf"(?!\.\.?(?:/|{TEXT_END}))[^/\\\u0000-\u001f\u007f]+"
OBJECT_KEY = rf"^(?![A-Za-z]:){_SEGMENT}(?:/{_SEGMENT})*{TEXT_END}"


def _not_blank(*more: dict[str, Any]) -> dict[str, Any]:
    return {"allOf": [{"pattern": NOT_BLANK}, *more]}


ATTACHMENT_KIND_RULES: list[dict[str, Any]] = [
    json_schema_when(
        {"kind": {"const": "text_snippet"}},
        {"properties": {"text": {"pattern": NOT_BLANK}}, "required": ["text"]},
    ),
    json_schema_when(
        {"kind": {"const": "library_resource"}},
        {
            "properties": {"resource_type": {"enum": list(RESOURCE_TYPES)}, "ref": _not_blank()},
            "required": ["resource_type", "ref"],
            "allOf": [
                json_schema_when(
                    {"resource_type": {"enum": ["kb_entry", "work_order"]}},
                    {"properties": {"ref": {"pattern": ROW_ID_REF}}},
                ),
                json_schema_when(
                    {"resource_type": {"const": "prompt"}}, {"properties": {"ref": {"pattern": PROMPT_REF}}}
                ),
            ],
        },
    ),
    json_schema_when(
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
