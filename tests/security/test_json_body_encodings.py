"""The door's JSON checks (a repeated key, a non-finite number, depth, NUL: core.request_limits) see
every body the API will read as JSON, however it is encoded or labelled.

Before, the door checked only a body whose first byte was `{` or `[` and skipped form content
types, while json.loads(bytes) — ninja's parser, the ingest route's checking parser — also reads a
UTF-8 BOM, UTF-16 and UTF-32, and ninja parses a JSON body whatever its content type. So
`{"to_status": "in_progress", "to_status": "cancelled"}` behind a BOM, in UTF-16, or sent as
application/x-www-form-urlencoded or multipart/form-data cancelled the order."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from assistant.models import Draft
from core.models import AuditRecord
from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.sentinel.factories import make_signal
from tests.workorders import factories as f
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db

REPEATED = '{"to_status": "in_progress", "to_status": "cancelled"}'
FORMS = ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]


@pytest.fixture
def api(operator) -> Client:
    _, raw = api_token_create(user=operator, name="json-encodings")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def post(client: Client, path: str, body: bytes, content_type: str = "application/json") -> Any:
    return client.generic("POST", path, body, content_type=content_type)


@pytest.mark.parametrize(
    "body",
    [
        b"\xef\xbb\xbf" + REPEATED.encode(),
        REPEATED.encode("utf-16"),
        REPEATED.encode("utf-16-be"),
        REPEATED.encode("utf-32"),
        REPEATED.encode("utf-32-le"),
    ],
    ids=["utf-8-bom", "utf-16", "utf-16-be", "utf-32", "utf-32-le"],
)
def test_a_body_not_in_plain_utf8_is_refused_and_moves_nothing(api, body):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    audits = AuditRecord.objects.count()

    response = post(api, f"/api/v1/workorders/{order.pk}/transition", body)

    assert response.status_code == 400, response.content
    assert response.json() == {"detail": "The request body is not valid JSON.", "code": "invalid_json"}
    assert WorkOrder.objects.get(pk=order.pk).status == "open"
    assert AuditRecord.objects.count() == audits


@pytest.mark.parametrize("content_type", FORMS)
def test_a_json_body_labelled_a_form_gets_the_same_checks(api, content_type):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    audits = AuditRecord.objects.count()

    repeated = post(api, f"/api/v1/workorders/{order.pk}/transition", REPEATED.encode(), content_type)
    spec = '{"type": "prompt", "name": "greeting", "spec": {"template": "Hi", "variables": [], "temperature": NaN}}'
    non_finite = post(api, "/api/v1/assistant/drafts", spec.encode(), content_type)
    deep = post(api, "/api/v1/assistant/drafts", b'{"spec": ' + b"[" * 5000 + b"]" * 5000 + b"}", content_type)

    assert repeated.status_code == 400, repeated.content
    assert (repeated.json()["code"], repeated.json()["field"]) == ("duplicate_key", "to_status")
    assert non_finite.status_code == 422, non_finite.content
    assert (non_finite.json()["code"], non_finite.json()["field"]) == ("invalid", "spec.temperature")
    assert (deep.status_code, deep.json()["code"]) == (400, "too_deep")
    assert WorkOrder.objects.get(pk=order.pk).status == "open"
    assert not Draft.objects.exists() and AuditRecord.objects.count() == audits


@pytest.mark.parametrize(
    ("prefix", "content_type", "code"),
    [
        (b"\xef\xbb\xbf", "application/json", "invalid_json"),
        (b"", "application/x-www-form-urlencoded", "duplicate_key"),
        (b"", "multipart/form-data; boundary=x", "duplicate_key"),
    ],
)
def test_samples_whose_repeated_value_hides_behind_a_bom_or_a_form_label_store_nothing(api, prefix, content_type, code):
    """The ingest route reads request.body itself (msgspec, then json.loads(bytes))."""
    signal = make_signal()
    now = timezone.now().isoformat()
    body = f'{{"samples": [{{"signal_id": {signal.pk}, "time": "{now}", "value": 1.0, "value": 9.9}}]}}'

    response = post(api, "/api/v1/signals/samples", prefix + body.encode(), content_type)

    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert not SignalSample.objects.exists()


def test_a_plain_utf8_body_and_a_real_form_are_read_as_before(api):
    order = f.make_work_order(f.make_cell("P-02"), status="open")
    # non-ASCII text in plain UTF-8 is JSON as ever
    moved = post(
        api, f"/api/v1/workorders/{order.pk}/transition", '{"to_status": "in_progress", "comment": "é ✓"}'.encode()
    )
    assert moved.status_code == 200, moved.content
    # a urlencoded form is not JSON: the door leaves it to the route (here: not JSON, 400 invalid_json)
    form = post(api, f"/api/v1/workorders/{order.pk}/transition", b"to_status=on_hold", FORMS[0])
    assert (form.status_code, form.json()["code"]) == (400, "invalid_json")
    assert WorkOrder.objects.get(pk=order.pk).status == "in_progress"


def test_a_form_labelled_body_of_no_declared_length_is_checked_by_the_parser(rf):
    """Chunked, without Content-Length: the door cannot tell its size and leaves it unread; the
    API's parser, which reads it as JSON, applies the same checks."""
    from aria_project.api import JsonObjectParser
    from core.errors import DuplicateKey
    from core.request_limits import api_body_refusal

    request = rf.generic("POST", "/api/v1/workorders/1/transition", REPEATED.encode(), FORMS[0])
    del request.META["CONTENT_LENGTH"]

    assert api_body_refusal(request) is None
    with pytest.raises(DuplicateKey) as refused:
        JsonObjectParser().parse_body(request)
    assert refused.value.as_body()["field"] == "to_status"
