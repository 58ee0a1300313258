"""Object-file attachments resolve keys only under the caller's own sessions (or the admin's shared
library prefix): another user's upload and a missing key are the same 404, bad keys are a 422."""

import io

import pytest

from assistant.models import Attachment, Session
from core.access import OPERATOR
from tests.assistant.factories import set_config

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


@pytest.fixture(autouse=True)
def _storage_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def new_session(client) -> int:
    return post(client, f"{API}/sessions", {"title": "mine"}).json()["id"]


def upload(client, sid: int, name: str = "pump-notes.txt", body: bytes = b"P-02 seal weeps at 40 C") -> str:
    file = io.BytesIO(body)
    file.name = name
    response = client.post(f"{API}/sessions/{sid}/attachments/upload", {"file": file})
    assert response.status_code == 201, response.content
    return response.json()["key"]


def attach(client, sid: int, key, **extra):
    return post(client, f"{API}/sessions/{sid}/attachments", {"kind": "object_file", "key": key, **extra})


@pytest.fixture
def victim_key(client, make_user) -> str:
    """Another operator's upload, under their own session."""
    client.force_login(make_user("vera", OPERATOR))
    return upload(client, new_session(client))


def test_own_key_from_any_of_my_sessions_attaches(client, operator):
    client.force_login(operator)
    first, second = new_session(client), new_session(client)
    key = upload(client, first)
    assert key.startswith(f"assistant/{first}/")
    response = attach(client, second, key)
    assert response.status_code == 201, response.content
    attachment = Attachment.objects.get(pk=response.json()["id"])
    assert attachment.kind == "object_file" and attachment.session_id == second
    assert attachment.content_text == "P-02 seal weeps at 40 C"


def test_another_users_key_is_the_same_404_as_a_missing_one(client, operator, victim_key):
    client.force_login(operator)
    sid = new_session(client)
    victim_session = victim_key.split("/")[1]
    guessed = attach(client, sid, victim_key)
    missing_elsewhere = attach(client, sid, f"assistant/{victim_session}/no-such-file.txt")
    missing_mine = attach(client, sid, f"assistant/{sid}/no-such-file.txt")
    no_session = attach(client, sid, "assistant/999999/pump-notes.txt")
    outside = attach(client, sid, "secrets/dev_secret_key")
    assert guessed.status_code == 404
    for response in (missing_elsewhere, missing_mine, no_session, outside):
        assert (response.status_code, response.content) == (404, guessed.content)
    assert guessed.json() == {
        "detail": "No such object in your sessions or the shared library.",
        "code": "not_found",
        "field": "key",
    }
    assert Attachment.objects.filter(session_id=sid).count() == 0
    assert victim_key.split("/")[-1] not in guessed.content.decode()


def test_digits_that_are_not_the_session_id_do_not_count_as_mine(client, operator, victim_key):
    client.force_login(operator)
    sid = new_session(client)
    name = victim_key.split("/")[-1]
    for spelled in (f"0{sid}", f"+{sid}", "\u0661"):  # leading zero, sign, Arabic-Indic digit
        response = attach(client, sid, f"assistant/{spelled}/{name}")
        assert response.status_code == 404, spelled


@pytest.mark.parametrize("key", ["", "   "], ids=["empty", "blank"])
def test_empty_key_is_a_422_naming_the_field(client, operator, key):
    client.force_login(operator)
    response = attach(client, new_session(client), key)
    assert response.status_code == 422
    assert response.json()["field"] == "key"


@pytest.mark.parametrize(
    "key",
    [
        "assistant/{sid}/../{victim}/pump-notes.txt",
        "../var/dev_secret_key",
        "assistant/{sid}/..",
        "/etc/passwd",
        "assistant\\{victim}\\pump-notes.txt",
        "assistant/{sid}/notes.txt\x00.pdf",
        "assistant/{sid}/./notes.txt",
        "assistant//{sid}/notes.txt",
        "assistant/{sid}/",
        "C:/windows/win.ini",
        "assistant/{sid}/" + "x" * 600,
    ],
    ids=[
        "dotdot-into-another-session",
        "dotdot-out-of-storage",
        "trailing-dotdot",
        "absolute",
        "backslashes",
        "nul",
        "dot-segment",
        "empty-segment",
        "folder",
        "drive-letter",
        "too-long",
    ],
)
def test_traversal_and_invalid_keys_are_a_422_naming_the_field(client, operator, victim_key, key):
    client.force_login(operator)
    sid = new_session(client)
    upload(client, sid, "notes.txt")
    response = attach(client, sid, key.format(sid=sid, victim=victim_key.split("/")[1]))
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "key" and response.json()["code"] == "invalid"
    assert Attachment.objects.filter(session_id=sid, kind="object_file").count() == 0


def test_admin_attaches_any_users_key(client, admin_user, victim_key):
    client.force_login(admin_user)
    sid = new_session(client)
    response = attach(client, sid, victim_key)
    assert response.status_code == 201, response.content
    assert Attachment.objects.get(pk=response.json()["id"]).content_text == "P-02 seal weeps at 40 C"
    # a missing key is still a 404 for an admin, and traversal still a 422
    assert attach(client, sid, victim_key + ".gone").status_code == 404
    assert attach(client, sid, "../" + victim_key).status_code == 422


def test_shared_library_prefix_is_opt_in_by_the_admin(client, operator, settings, tmp_path):
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    key = default_storage.save("library/manuals/pump.md", ContentFile(b"# P-02 pump manual"))
    client.force_login(operator)
    sid = new_session(client)
    assert attach(client, sid, key).status_code == 404  # default: no shared library
    set_config(shared_object_prefix="library/manuals")
    response = attach(client, sid, key)
    assert response.status_code == 201, response.content
    assert "P-02 pump manual" in Attachment.objects.get(pk=response.json()["id"]).content_text
    # the prefix is a folder boundary, not a string prefix
    default_storage.save("library/manuals-private/pay.md", ContentFile(b"salaries"))
    assert attach(client, sid, "library/manuals-private/pay.md").status_code == 404


def test_shared_prefix_cannot_expose_session_uploads(client, admin_user):
    client.force_login(admin_user)
    for prefix in ("assistant", "assistant/3", "../var", "/srv/library"):
        response = client.patch(f"{API}/config", {"shared_object_prefix": prefix}, content_type="application/json")
        assert response.status_code == 422, prefix
        assert response.json()["field"] == "shared_object_prefix"


def test_the_session_in_the_url_is_still_owner_scoped(client, operator, make_user):
    client.force_login(operator)
    sid = new_session(client)
    key = upload(client, sid)
    client.force_login(make_user("otto", OPERATOR))
    assert attach(client, sid, key).status_code == 404
    assert Session.objects.get(pk=sid).attachments.count() == 1  # only the upload itself


@pytest.mark.parametrize(
    "resource_type, ref",
    [
        ("prompt", "investigator@v²"),  # '²'.isdigit() is True, int('²') raises
        ("prompt", "investigator@v" + "9" * 30),
        ("work_order", "²"),
        ("work_order", "9" * 5000),  # int() refuses more than 4,300 digits
        ("work_order", "9" * 30),  # past a database integer
        ("kb_entry", "٣"),  # another script's digit: not an id
        ("kb_entry", "007"),
    ],
)
def test_a_library_ref_that_is_not_an_id_is_a_422_naming_ref(client, operator, resource_type, ref):
    client.force_login(operator)
    sid = new_session(client)
    body = {"kind": "library_resource", "resource_type": resource_type, "ref": ref}
    response = post(client, f"{API}/sessions/{sid}/attachments", body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "ref"
    assert not Attachment.objects.filter(session_id=sid).exists()


@pytest.mark.parametrize("ref", ["²", "9" * 5000, "9" * 30])
def test_a_tool_ref_that_is_not_an_id_or_a_name_is_a_404(client, operator, ref):
    client.force_login(operator)
    sid = new_session(client)
    body = {"kind": "library_resource", "resource_type": "tool", "ref": ref}
    assert post(client, f"{API}/sessions/{sid}/attachments", body).status_code == 404
