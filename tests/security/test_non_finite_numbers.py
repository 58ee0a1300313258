"""A number JSON has not — `NaN`, `Infinity`, `-Infinity` (Python's json reads them), or one beyond a
double's range (`1e999`, read as infinity) — is refused at the door on every /api/ route: a 422
naming its path, before any view runs, nothing written. Before, pydantic passed such floats on:
a work order's estimate or a draft's spec reached a JSON or float column (a 500, or a NaN stored),
and each route had to remember to refuse them."""

import pytest
from django.test import Client
from django.utils import timezone

from assistant.models import Draft
from core.json_keys import json_body_problem
from core.models import AuditRecord
from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.sentinel.factories import make_signal
from tests.workorders import factories as f
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("body", "field", "token"),
    [
        (b'{"a": NaN}', "a", "NaN"),
        (b'{"a": [1, 2, {"b": -Infinity}]}', "a.2.b", "-Infinity"),
        (b"[0, Infinity]", "1", "Infinity"),
        (b'{"a": 1e999}', "a", "1e999"),
        (b'{"a": -1E+400, "b": NaN}', "a", "-1E+400"),
        (b"NaN", "body", "NaN"),
    ],
)
def test_the_first_non_finite_number_is_named_by_its_path(body, field, token):
    problem = json_body_problem(body)
    assert (problem.kind, problem.field, problem.token) == ("non_finite", field, token)


@pytest.mark.parametrize("body", [b'{"a": 1e308, "b": -1.5e-320, "c": "NaN", "d": "Infinity"}', b"[1e15, 0.0, -0]"])
def test_finite_numbers_and_strings_that_spell_nan_pass(body):
    assert json_body_problem(body) is None


@pytest.fixture
def api(operator) -> Client:
    _, raw = api_token_create(user=operator, name="non-finite")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def post_raw(client: Client, path: str, body: str):
    return client.generic("POST", path, body.encode(), content_type="application/json")


def assert_refused(response, field: str, token: str) -> None:
    assert response.status_code == 422, response.content
    body = response.json()
    assert (body["code"], body["field"]) == ("invalid", field)
    assert body["detail"] == f"{field}: {token} is not a JSON number; send a finite number."


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_draft_whose_spec_carries_a_non_finite_number_creates_nothing(api, number):
    audits = AuditRecord.objects.count()
    body = f'{{"type": "prompt", "name": "greeting", "spec": {{"template": "Hi", "variables": [], "temperature": {number}}}}}'
    assert_refused(post_raw(api, "/api/v1/assistant/drafts", body), "spec.temperature", number)
    assert not Draft.objects.exists() and AuditRecord.objects.count() == audits


def test_a_work_order_transition_with_a_non_finite_extra_moves_nothing(api):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    response = post_raw(api, f"/api/v1/workorders/{order.pk}/transition", '{"to_status": "in_progress", "x": NaN}')
    assert_refused(response, "x", "NaN")
    assert WorkOrder.objects.get(pk=order.pk).status == "open"


def test_samples_ingest_names_the_sample_and_stores_nothing(api):
    signal = make_signal()
    now = timezone.now().isoformat()
    item = f'{{"signal_id": {signal.pk}, "time": "{now}", "value": 1.0}}'
    bad = f'{{"signal_id": {signal.pk}, "time": "{now}", "value": -Infinity}}'
    assert_refused(
        post_raw(api, "/api/v1/signals/samples", f'{{"samples": [{item}, {bad}]}}'), "samples.1.value", "-Infinity"
    )
    assert SignalSample.objects.count() == 0
