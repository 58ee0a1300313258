"""The admin console goes through the same services: separation of duties holds there too."""

import pytest

from assistant.models import Draft, PromptAlias
from core.models import AuditRecord

from .factories import PROMPT_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db


def superuser(make_user, name):
    return make_user(name, is_staff=True, is_superuser=True)


def act(client, action, draft):
    """Run an admin action on one draft; Approve in its two steps (the page naming the candidate,
    then apply with the content hash that page carried)."""
    body = {"action": action, "_selected_action": [draft.pk]}
    if action == "approve":
        page = client.post("/admin/assistant/draft/", body)
        if page.status_code != 200 or b'name="apply"' not in page.content:
            return page
        body |= {"apply": "1", f"hash:{draft.pk}": Draft.objects.get(pk=draft.pk).content_hash}
    return client.post("/admin/assistant/draft/", body, follow=True)


def test_admin_approve_refuses_the_author_and_accepts_another_approver(client, make_user):
    author = superuser(make_user, "root1")
    draft = make_tested_draft(author)
    client.force_login(author)
    act(client, "approve", draft)
    assert Draft.objects.get(pk=draft.pk).status == "tested"

    other = superuser(make_user, "root2")
    client.force_login(other)
    response = act(client, "approve", draft)
    assert response.status_code == 200
    assert Draft.objects.get(pk=draft.pk).status == "approved"
    # the approver cannot publish the draft they approved; a third person can
    act(client, "publish", draft)
    assert Draft.objects.get(pk=draft.pk).status == "approved"  # refused before any move
    assert AuditRecord.objects.filter(action="draft.approve", actor=other).exists()


def test_admin_moves_the_production_alias_back(client, make_user, operator, approver):
    from assistant.services.drafts import draft_approve, draft_test, draft_update, draft_validate
    from assistant.services.publish import draft_publish

    releaser = make_user("pat", "approver")
    draft = draft_publish(
        draft=draft_approve(
            draft=make_tested_draft(operator, spec=PROMPT_SPEC, type="prompt", name="inv"), actor=approver
        ),
        actor=releaser,
    )
    draft = draft_update(
        draft=draft, actor=operator, spec={**PROMPT_SPEC, "text": "v2 {{focus}}; finish with submit_rca"}
    )
    draft_validate(draft=draft, actor=operator)
    draft_test(draft=draft, actor=operator)
    draft_publish(draft=draft_approve(draft=draft, actor=approver), actor=releaser)
    assert PromptAlias.objects.get(name="investigator").version.version == 2

    admin = superuser(make_user, "root")
    client.force_login(admin)
    v1 = PromptAlias.objects.get().version.__class__.objects.get(name="investigator", version=1)
    client.post(
        "/admin/assistant/promptversion/", {"action": "make_production", "_selected_action": [v1.pk]}, follow=True
    )
    assert PromptAlias.objects.get(name="investigator").version.version == 1


def test_history_is_read_only(client, make_user):
    client.force_login(superuser(make_user, "root"))
    for model in ("review", "promptversion", "promptalias", "publishedartifact", "run"):
        assert client.get(f"/admin/assistant/{model}/add/").status_code == 403
    assert client.get("/admin/assistant/draft/").status_code == 200


def test_a_staff_approver_without_model_permissions_uses_the_approval_console(client, make_user, operator):
    """The demo approver is staff with the approver scope and no Django model permissions: the
    console must still show drafts and prompt aliases and let them approve."""
    from core.access import APPROVER

    approver = make_user("ann", APPROVER, is_staff=True)
    draft = make_tested_draft(operator)
    client.force_login(approver)
    assert "/admin/assistant/draft/" in client.get("/admin/").content.decode()
    for path in ("/admin/assistant/draft/", "/admin/assistant/promptversion/", "/admin/assistant/promptalias/"):
        assert client.get(path).status_code == 200, path
    act(client, "approve", draft)
    assert Draft.objects.get(pk=draft.pk).status == "approved"
    # an operator who is staff but not an approver still sees nothing
    nobody = make_user("ned", is_staff=True)
    client.force_login(nobody)
    assert client.get("/admin/assistant/draft/").status_code == 403


def test_an_approver_publishes_over_the_api_without_the_operator_scope(client, make_user, operator, approver):
    from assistant.services.drafts import draft_approve

    draft = draft_approve(draft=make_tested_draft(operator), actor=approver)
    from core.access import APPROVER

    publisher = make_user("pia", APPROVER)
    client.force_login(publisher)
    response = client.post(f"/api/v1/assistant/drafts/{draft.pk}/publish")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "published"


def test_prompt_aliases_are_spelt_right_in_the_console():
    assert str(PromptAlias._meta.verbose_name_plural) == "prompt aliases"  # was "Prompt aliass"
