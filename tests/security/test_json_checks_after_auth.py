"""A JSON body is parsed only once its caller is authenticated.

Before, the request-limits middleware (ahead of the session and authentication middleware) parsed
every /api/ body to find a repeated key, a non-finite number or a NUL and name its path: an
anonymous client could make the server walk a hostile 2 MB body (nested small lists: ~2.3 s of CPU)
and got a 400/422 back. Now the door keeps its one-pass checks (size, depth, UTF-8) and the parsing
checks run where the API reads the body, after authentication (core.json_body): an anonymous
request is a 401 and no JSON parser ever sees its body; a signed-in caller gets the same answers
as before — also on a route that takes no body parameter, and before the route's own checks."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.conftest import session_cookie
from tests.sentinel.factories import make_signal
from tests.workorders import factories as f
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db

REPEATED = '{"to_status": "in_progress", "to_status": "cancelled"}'
NON_FINITE = '{"to_status": "in_progress", "comment": "x", "extra": [1, NaN]}'
HUGE = '{"reason": 1e999}'
NUL = '{"reason": "a\\u0000b"}'
# The worst shape measured (bench/json_door.py): nested small lists with a repeat at the very end.
HOSTILE = '{"a": [' + ",".join(["[[1],[2]]"] * 20_000) + '], "b": {"k": 1, "k": 2}}'


@pytest.fixture
def api(operator) -> Client:
    _, raw = api_token_create(user=operator, name="after-auth")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def post(client: Client, path: str, body: str) -> Any:
    return client.generic("POST", path, body.encode(), content_type="application/json")


def routes() -> list[str]:
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    return [
        f"/api/v1/workorders/{order.pk}/transition",  # a body parameter: ninja's parser
        "/api/v1/signals/samples",  # reads request.body itself (msgspec, then json.loads)
        "/api/v1/aria/plans/1/steps/1/stop",  # reads request.body itself (json.loads)
        "/api/v1/aria/plans/1/approve",  # no body at all
    ]


@pytest.mark.parametrize(
    "body", [REPEATED, NON_FINITE, HUGE, NUL, HOSTILE], ids=["repeat", "nan", "1e999", "nul", "big"]
)
def test_an_anonymous_body_is_refused_401_without_being_parsed(parsed, body):
    for path in routes():
        response = post(Client(), path, body)

        assert response.status_code == 401, (path, response.content)
        assert response.json()["code"] == "not_authenticated"
    assert body.encode() not in parsed
    assert WorkOrder.objects.get().status == "open"


def test_a_bad_token_is_401_without_the_body_being_parsed(parsed):
    client = Client(HTTP_AUTHORIZATION="Bearer aria_not-a-real-token")

    for path in routes():
        assert post(client, path, HOSTILE).status_code == 401, path
    assert HOSTILE.encode() not in parsed


def test_a_session_without_its_csrf_token_is_403_without_the_body_being_parsed(parsed, operator):
    client = Client(enforce_csrf_checks=True, HTTP_COOKIE=session_cookie(operator))

    for path in routes():
        response = post(client, path, REPEATED)

        assert response.status_code == 403, (path, response.content)
        assert response.json()["code"] == "csrf_failed"
    assert REPEATED.encode() not in parsed


def test_the_door_still_refuses_what_costs_one_pass_before_authentication():
    deep = '{"a": ' + "[" * 100 + "]" * 100 + "}"
    too_big = '{"a": "' + "x" * (2 * 1024 * 1024) + '"}'
    bom = "\ufeff" + REPEATED

    too_deep = post(Client(), "/api/v1/aria/plans/1/approve", deep)
    assert (too_deep.status_code, too_deep.json()["code"]) == (400, "too_deep")
    assert post(Client(), "/api/v1/aria/plans/1/approve", too_big).status_code == 413
    refused = post(Client(), "/api/v1/aria/plans/1/approve", bom)
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_json")


def test_a_signed_in_caller_gets_the_same_answers_on_a_route_with_no_body_parameter(api):
    """The plan does not exist: the check still comes before the route's own 404, as at the door."""
    repeated = post(api, "/api/v1/aria/plans/999999/approve", '{"a": 1, "b": {"c": 2, "c": 3}}')
    nan = post(api, "/api/v1/aria/plans/999999/approve", '{"a": [1, Infinity]}')
    nul = post(api, "/api/v1/aria/plans/999999/approve", NUL)
    sound = post(api, "/api/v1/aria/plans/999999/approve", '{"a": 1}')

    assert repeated.status_code == 400, repeated.content
    assert repeated.json() == {
        "detail": "b.c: the key 'c' appears more than once in one object; send each key once.",
        "code": "duplicate_key",
        "field": "b.c",
        "key": "c",
    }
    assert (nan.status_code, nan.json()["field"]) == (422, "a.1")
    assert nan.json()["detail"] == "a.1: Infinity is not a JSON number; send a finite number."
    assert (nul.status_code, nul.json()["field"]) == (422, "reason")
    assert sound.status_code == 404, sound.content


def test_a_signed_in_caller_gets_the_same_answers_on_the_parsed_and_self_read_routes(api):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    signal = make_signal()
    now = timezone.now().isoformat()
    samples = f'{{"samples": [{{"signal_id": {signal.pk}, "time": "{now}", "value": 1.0, "value": 9.9}}]}}'
    nan_samples = f'{{"samples": [{{"signal_id": {signal.pk}, "time": "{now}", "value": NaN}}]}}'

    transition = post(api, f"/api/v1/workorders/{order.pk}/transition", REPEATED)
    ingest = post(api, "/api/v1/signals/samples", samples)
    ingest_nan = post(api, "/api/v1/signals/samples", nan_samples)
    step = post(api, "/api/v1/aria/plans/999999/steps/1/stop", '{"reason": "a", "reason": "b"}')

    assert (transition.status_code, transition.json()["field"]) == (400, "to_status")
    assert (ingest.status_code, ingest.json()["code"], ingest.json()["field"]) == (
        400,
        "duplicate_key",
        "samples.0.value",
    )
    assert (ingest_nan.status_code, ingest_nan.json()["field"]) == (422, "samples.0.value")
    assert ingest_nan.json()["detail"] == "samples.0.value: NaN is not a JSON number; send a finite number."
    assert (step.status_code, step.json()["code"]) == (400, "duplicate_key")
    assert WorkOrder.objects.get(pk=order.pk).status == "open"
    assert not SignalSample.objects.exists()


def test_a_caller_without_the_routes_scope_still_gets_the_body_answer_first(approver):
    """As when the door answered it: the body's refusal comes before the route's scope check."""
    _, raw = api_token_create(user=approver, name="after-auth")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = post(client, "/api/v1/signals/samples", '{"samples": [], "samples": []}')

    assert (response.status_code, response.json()["code"]) == (400, "duplicate_key")
