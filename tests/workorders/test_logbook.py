"""The operators' logbook: the write service, its API (bounded inputs, owner checks) and the agents'
read of what operators wrote."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from core.access import OPERATOR
from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AuditRecord, Event
from tests.workorders import factories as f
from workorders.models import LogbookAttachment, LogbookEntry
from workorders.services.logbook import MAX_ATTACHMENT_BYTES, MAX_BACKDATE, AttachmentIn, logbook_entry_create
from workorders.shifts import shift_at

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders/shift/logbook"


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


@pytest.fixture
def api(client, operator):
    client.force_login(operator)
    return client


def test_entry_with_attachment_is_written_audited_and_announced(operator, cell):
    now = timezone.now()
    entry = logbook_entry_create(
        cell=cell,
        author=operator,
        text="  Slight drip at the mechanical seal, tray placed.  ",
        category="safety",
        attachments=[AttachmentIn(name="drips.csv", text="time,drops_per_min\n10:00,4\n", media_type="text/csv")],
        time=now,
    )
    assert (entry.text, entry.category, entry.author, entry.created_by) == (
        "Slight drip at the mechanical seal, tray placed.",
        "safety",
        "olga",
        operator,
    )
    assert entry.shift == shift_at(now)[1]
    (attachment,) = entry.attachments.all()
    assert (attachment.name, attachment.media_type, attachment.size) == ("drips.csv", "text/csv", 27)
    record = AuditRecord.objects.get(action="logbook.entry_create")
    assert record.target_id == str(entry.pk) and record.details["attachments"] == [{"name": "drips.csv", "bytes": 27}]
    event = Event.objects.get(type="logbook_entry_created")
    assert event.payload == {
        "entry_id": entry.pk,
        "cell_id": cell.pk,
        "category": "safety",
        "author": "olga",
        "attachments": 1,
    }


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"text": "   "}, "text"),
        ({"text": "x" * 4001}, "text"),
        ({"text": "a\x00b"}, "text"),
        ({"category": "gossip"}, "category"),
        ({"time": timezone.now() + timedelta(hours=2)}, "time"),
        ({"time": timezone.now() - timedelta(days=31)}, "time"),
        ({"time": datetime(1990, 1, 1, tzinfo=UTC)}, "time"),
        ({"time": datetime(1, 1, 1, tzinfo=UTC)}, "time"),  # its local date overflowed (a 500)
        ({"time": datetime.fromisoformat("0001-01-01T00:30:00+14:00")}, "time"),
        ({"time": datetime.fromisoformat("9999-12-31T23:59:00-14:00")}, "time"),
        ({"attachments": [AttachmentIn(name="n.txt", text="t")] * 6}, "attachments"),
        ({"attachments": [AttachmentIn(name="../etc/passwd", text="t")]}, "attachments.0.name"),
        ({"attachments": [AttachmentIn(name="a.bin", text="t", media_type="application/x-sh")]}, "attachments.0.media_type"),
        ({"attachments": [AttachmentIn(name="a.txt", text="ok"), AttachmentIn(name="b.txt", text="\x00")]}, "attachments.1.text"),
        ({"attachments": [AttachmentIn(name="big.txt", text="é" * (MAX_ATTACHMENT_BYTES // 2 + 1))]}, "attachments.0.text"),
    ],
)  # fmt: skip
def test_bad_input_names_the_field_and_writes_nothing(operator, cell, kwargs, field):
    args = {"cell": cell, "author": operator, "text": "Pump running normally."} | kwargs
    with pytest.raises(InvalidInput) as refused:
        logbook_entry_create(**args)
    assert refused.value.field == field
    assert not LogbookEntry.objects.exists() and not LogbookAttachment.objects.exists()
    assert not Event.objects.filter(type="logbook_entry_created").exists()


def test_api_writes_lists_searches_and_serves_attachments(api, cell):
    other = f.make_cell("C-01")
    body = {
        "cell_id": cell.pk,
        "text": "P-02 humming from the drive-end bearing housing.",
        "category": "observation",
        "attachments": [{"name": "readings.txt", "text": "vib 3.9 mm/s at 10:05"}],
    }
    created = post(api, BASE, body)
    assert created.status_code == 201, created.content
    entry = created.json()
    assert entry["cell_tag"] == "P-02" and entry["author"] == "olga"
    assert [(a["name"], a["size"]) for a in entry["attachments"]] == [("readings.txt", 21)]
    assert post(api, BASE, {"cell_id": other.pk, "text": "Conveyor belt tracking fine."}).status_code == 201

    listed = api.get(BASE, {"cell_id": cell.pk}).json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == entry["id"]
    assert [i["cell_tag"] for i in api.get(BASE).json()["items"]] == ["C-01", "P-02"]  # newest first
    assert api.get(BASE, {"q": "drive-end humming"}).json()["count"] == 1
    assert api.get(BASE, {"q": "3.9 mm/s"}).json()["count"] == 1  # attachment text is searched too
    assert api.get(BASE, {"q": "humming conveyor"}).json()["count"] == 0  # every word must match

    text = api.get(f"{BASE}/attachments/{entry['attachments'][0]['id']}").json()
    assert (text["name"], text["text"], text["cell_tag"]) == ("readings.txt", "vib 3.9 mm/s at 10:05", "P-02")
    assert api.get(f"{BASE}/attachments/999999").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "x" * 4001}, "text"),
        ({"text": ""}, "text"),
        ({"category": "rumour"}, "category"),
        ({"cell_id": "1"}, "cell_id"),
        ({"attachments": [{"name": "a.txt", "text": "x" * (MAX_ATTACHMENT_BYTES + 1)}]}, "attachments.0.text"),
        ({"attachments": [{"name": "", "text": "x"}]}, "attachments.0.name"),
        ({"attachments": [{"name": "a.txt", "text": "x"}] * 6}, "attachments"),
    ],
)
def test_api_bad_input_is_422_naming_the_field(api, cell, body, field):
    response = post(api, BASE, {"cell_id": cell.pk, "text": "ok"} | body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    assert not LogbookEntry.objects.exists()


@pytest.mark.parametrize(
    "moment",
    ["0001-01-01T00:00:00Z", "0001-01-01T00:30:00+14:00", "1990-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00"],
)
def test_api_refuses_an_entry_dated_outside_the_plausible_window(api, cell, moment):
    response = post(api, BASE, {"cell_id": cell.pk, "text": "x", "time": moment})
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "time"
    assert not LogbookEntry.objects.exists()
    assert not Event.objects.filter(type="logbook_entry_created").exists()


def test_an_entry_written_up_late_within_the_window_keeps_its_shift(operator, cell):
    observed = timezone.now() - MAX_BACKDATE + timedelta(hours=1)
    entry = logbook_entry_create(cell=cell, author=operator, text="Seal drip seen last month.", time=observed)
    assert (entry.time, entry.shift) == (observed, shift_at(observed)[1])


def test_api_refuses_unknown_cells_strangers_and_other_authors(client, api, make_user, cell):
    assert post(api, BASE, {"cell_id": 999999, "text": "ghost"}).status_code == 404
    entry = post(api, BASE, {"cell_id": cell.pk, "text": "Seal drip."}).json()
    add = f"{BASE}/{entry['id']}/attachments"

    assert (
        entry["can_attach"] is True and api.get(BASE).json()["items"][0]["can_attach"] is True
    )  # the Shift page's cue

    # another operator may read the entry but not add to it (404: not theirs)
    client.force_login(make_user("otto", OPERATOR))
    assert client.get(BASE).json()["count"] == 1
    assert client.get(BASE).json()["items"][0]["can_attach"] is False
    refused = post(client, add, {"name": "mine.txt", "text": "not yours"})
    assert refused.status_code == 404
    assert not LogbookAttachment.objects.exists()

    client.force_login(make_user("nobody"))
    assert post(client, BASE, {"cell_id": cell.pk, "text": "hi"}).status_code == 403
    assert client.get(BASE).status_code == 403
    client.logout()
    assert client.get(BASE).status_code == 401


def test_the_author_adds_attachments_up_to_the_bound(api, cell):
    entry = post(api, BASE, {"cell_id": cell.pk, "text": "Readings taken.", "attachments": [
        {"name": f"r{i}.txt", "text": "1"} for i in range(4)
    ]}).json()  # fmt: skip
    add = f"{BASE}/{entry['id']}/attachments"
    fifth = post(api, add, {"name": "r4.md", "text": "# ok", "media_type": "text/markdown"})
    assert fifth.status_code == 201 and len(fifth.json()["attachments"]) == 5
    assert fifth.json()["can_attach"] is False  # full: the page offers no sixth
    sixth = post(api, add, {"name": "r5.txt", "text": "too many"})
    assert sixth.status_code == 422 and sixth.json()["field"] == "attachments"
    assert LogbookAttachment.objects.count() == 5
    assert AuditRecord.objects.filter(action="logbook.attachment_add").count() == 1


@pytest.mark.parametrize("name", ["../../etc/passwd", ".hidden", "a\\b.txt"])
def test_adding_an_attachment_names_the_bodys_own_field(api, cell, name):
    """The body of POST …/{id}/attachments is the attachment: its field is `name`, not `attachments.0.name`."""
    entry = post(api, BASE, {"cell_id": cell.pk, "text": "Readings taken."}).json()
    refused = post(api, f"{BASE}/{entry['id']}/attachments", {"name": name, "text": "x"})
    assert refused.status_code == 422, refused.content
    assert refused.json()["field"] == "name"
    assert not LogbookAttachment.objects.exists()
    assert not AuditRecord.objects.filter(action="logbook.attachment_add").exists()


def test_agents_read_what_operators_wrote(api, operator, cell):
    post(api, BASE, {"cell_id": cell.pk, "text": "Drips under the seal of P-02.", "category": "safety"})
    result = dispatch("workorders.get_logbook_entries", {"cell_id": cell.pk}, ctx=CapabilityContext(user=operator))
    assert not result.is_error, result.message
    (entry,) = result.content["entries"]
    assert (entry["text"], entry["author"], entry["category"]) == ("Drips under the seal of P-02.", "olga", "safety")
