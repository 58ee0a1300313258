"""A JSON body that names a key twice in one object is refused on every /api/ route.

`{"to_status": "open", "to_status": "cancelled"}` read "open" to anything that keeps the first
value (a proxy, a log) and "cancelled" to ARIA, which kept the last. Now it is a 400
`duplicate_key` naming the key's dotted path, before the route reads the body: nothing is written. Bodies
without a repeat — strings holding quotes, colons and backslashes included — are read as before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.models import Draft
from core.json_keys import json_duplicate_key
from core.models import AuditRecord
from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.sentinel.factories import make_signal
from tests.workorders import factories as f
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(operator) -> Client:
    _, raw = api_token_create(user=operator, name="duplicate-keys")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def post_raw(client: Client, path: str, body: str) -> Any:
    return client.generic("POST", path, body.encode(), content_type="application/json")


def assert_duplicate(response: Any, field: str, key: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert (body["code"], body["field"], body["key"]) == ("duplicate_key", field, key)
    assert body["detail"].startswith(f"{field}: the key {key!r} appears more than once")


def test_a_work_order_transition_naming_to_status_twice_is_refused_and_moves_nothing(api):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    audits = AuditRecord.objects.count()

    response = post_raw(
        api, f"/api/v1/workorders/{order.pk}/transition", '{"to_status": "in_progress", "to_status": "cancelled"}'
    )

    assert_duplicate(response, "to_status", "to_status")
    assert WorkOrder.objects.get(pk=order.pk).status == "open"
    assert AuditRecord.objects.count() == audits
    # the same move sent once is read as before
    once = post_raw(api, f"/api/v1/workorders/{order.pk}/transition", '{"to_status": "in_progress"}')
    assert once.status_code == 200, once.content
    assert WorkOrder.objects.get(pk=order.pk).status == "in_progress"


def test_a_draft_create_with_a_repeated_key_at_any_depth_creates_nothing(api):
    top = '{"type": "prompt", "name": "greeting", "name": "other", "spec": {"template": "Hi", "variables": []}}'
    nested = '{"type": "prompt", "name": "greeting", "spec": {"template": "Hi", "template": "Bye", "variables": []}}'

    assert_duplicate(post_raw(api, "/api/v1/assistant/drafts", top), "name", "name")
    assert_duplicate(post_raw(api, "/api/v1/assistant/drafts", nested), "spec.template", "template")
    assert not Draft.objects.exists()


def test_samples_with_a_repeated_value_or_samples_key_store_nothing(api):
    signal = make_signal()
    now = timezone.now().isoformat()
    item = f'{{"signal_id": {signal.pk}, "time": "{now}", "value": 1.0}}'
    repeated_value = f'{{"signal_id": {signal.pk}, "time": "{now}", "value": 1.0, "value": 9.9}}'

    in_an_item = post_raw(api, "/api/v1/signals/samples", f'{{"samples": [{item}, {repeated_value}]}}')
    whole_batch = post_raw(api, "/api/v1/signals/samples", f'{{"samples": [{item}], "samples": []}}')

    assert_duplicate(in_an_item, "samples.1.value", "value")
    assert_duplicate(whole_batch, "samples", "samples")
    assert SignalSample.objects.count() == 0
    accepted = post_raw(api, "/api/v1/signals/samples", f'{{"samples": [{item}]}}')
    assert accepted.status_code == 200 and accepted.json()["accepted"] == 1


def test_an_escaped_spelling_of_the_same_key_is_a_repeat_too(api):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    body = '{"to_status": "in_progress", "to_\\u0073tatus": "cancelled"}'
    assert_duplicate(post_raw(api, f"/api/v1/workorders/{order.pk}/transition", body), "to_status", "to_status")
    assert WorkOrder.objects.get(pk=order.pk).status == "open"


@pytest.mark.parametrize(
    "document",
    [
        {"a": 'quote " colon : and "b": 1 inside a string', "b": 2},
        {"ends with a backslash \\": 1, "ends with a backslash \\\\": 2, "x": ['\\":', {"y": "\\"}]},
        {"same key in two objects": {"k": 1}, "other": [{"k": 2}, {"k": 3}]},
        [{"é": "ü", "é2": "\u2028"}, [], {}, "", 1.5, None, True],
        {"big": 10**30, "small": -(10**30), "nested": {"a": {"b": {"c": [1, {"d": 2}]}}}},
    ],
)
def test_bodies_without_a_repeat_are_not_refused(document):
    body = json.dumps(document).encode()
    assert json_duplicate_key(body) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[{"x": 1}, {"x": 1, "y": 2, "x": 2}]', ("1.x", "x")),
        ('{"a": {"b": [0, {"c": 1, "c": 1}]}, "a": 2}', ("a", "a")),  # the outer repeat comes first
        ('{"a": {"b": [0, {"c": 1, "c": 1}]}}', ("a.b.1.c", "c")),
        ('{"q\\"": 1, "q\\"": 2}', ('q"', 'q"')),
        ('{":": 1, "\\u003a": 2}', (":", ":")),  # a colon spelled as an escape
        ('{"": ":", "": 1}', ("", "")),
    ],
)
def test_the_first_repeat_is_named_by_its_path(body, expected):
    raw = body.encode()
    assert json_duplicate_key(raw) == expected


class _Object(list):
    """An object as written: (key, value) pairs, repeats allowed."""


def _write(value: Any, escape_colons: bool = False) -> str:
    def text(string: str) -> str:  # a colon may be written as \u003a: the same string
        token = json.dumps(string)
        return token.replace(":", "\\u003a") if escape_colons else token

    if isinstance(value, _Object):
        return "{" + ", ".join(f"{text(k)}: {_write(v, escape_colons)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_write(v, escape_colons) for v in value) + "]"
    return text(value) if isinstance(value, str) else json.dumps(value)


class _Repeat(Exception):
    pass


def _refuse_repeats(pairs: list) -> dict:
    if len({key for key, _ in pairs}) != len(pairs):
        raise _Repeat
    return dict(pairs)


def _has_repeat(body: bytes) -> bool:
    try:
        json.loads(body, object_pairs_hook=_refuse_repeats)
    except _Repeat:
        return True
    return False


_KEY = st.text(alphabet='"\\:ab', max_size=3)  # few keys: repeats are common; quotes, colons, backslashes
_WRITTEN = st.recursive(
    st.none()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='"\\:{}aé', max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.lists(st.tuples(_KEY, inner), max_size=4).map(_Object),
    max_leaves=25,
)


@settings(max_examples=300)
@given(_WRITTEN, st.booleans())
def test_a_repeat_is_found_exactly_when_a_parse_would_drop_a_value(value: Any, escape_colons: bool) -> None:
    body = _write(value, escape_colons).encode()
    assert (json_duplicate_key(body) is not None) == _has_repeat(body)
