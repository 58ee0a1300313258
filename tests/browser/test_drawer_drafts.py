"""The drawer's drafts panel in headless Chromium: an engineer writes a draft with the type selector
and the spec editor (an edit goes back to `draft`), an approver approves it there, is refused
publishing what they approved (separation of duties, the reason shown), and another approver
publishes it — through the same routes the admin uses."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.live_server import start_live_server
from tests.browser.tabs import drawer_login

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_live_server(tmp_path_factory.mktemp("drawer-drafts"), {"ARIA_ENGINE": "fake"})
    yield server
    server.stop()


def _step(row, button: str, status: str) -> None:
    row.get_by_role("button", name=button).click()
    expect(row.locator(".aria-badge")).to_have_text(status)


def test_engineer_edits_an_approver_approves_and_another_publishes_from_the_drawer(tabs, server):
    erin = tabs()
    drawer_login(erin, server, "erin", "operator")
    erin.select_option("#aria-mode", "build")
    erin.locator(".aria-draft-create summary").click()
    erin.select_option("#aria-draft-type", "prompt")
    spec = json.loads(erin.input_value("#aria-draft-spec"))
    assert spec["agent"] == "investigator" and "submit_rca" in spec["text"]  # the type's template
    erin.fill("#aria-draft-name", "investigator")
    erin.get_by_role("button", name="Create draft").click()

    row = erin.locator("#aria-draft-list .aria-draft").first
    expect(row).to_contain_text("prompt investigator v1")
    expect(row.locator(".aria-badge")).to_have_text("draft")
    _step(row, "Validate", "validated")
    _step(row, "Test", "tested")

    # the editor: an edit makes a new candidate, back to `draft`
    row.locator(".aria-spec summary").click()
    edited = {**spec, "text": "Always list 3 hypotheses, most likely first. Finish by calling submit_rca."}
    row.locator("textarea.aria-spec-editor").fill(json.dumps(edited))
    row.get_by_role("button", name="Save edit").click()
    expect(row).to_contain_text("prompt investigator v2")
    expect(row.locator(".aria-badge")).to_have_text("draft")
    _step(row, "Validate", "validated")
    _step(row, "Test", "tested")

    ann = tabs()
    drawer_login(ann, server, "ann", "approver", "operator")
    ann.select_option("#aria-mode", "build")
    waiting = ann.locator("#aria-review-list .aria-draft").first
    expect(waiting).to_contain_text("prompt investigator v2")
    waiting.locator(".aria-spec summary").click()
    expect(waiting.locator(".aria-spec-view")).to_contain_text("most likely first")
    _step(waiting, "Approve", "approved")
    expect(row.locator(".aria-badge")).to_have_text("approved")  # the author's tab follows the bus

    # the approver who approved may not publish it: no Publish button (it could only fail), a note
    # saying who may; posting anyway is still refused with the reason, nothing moves
    expect(waiting.locator(".aria-publish-note")).to_contain_text("another approver or the release principal")
    expect(waiting.get_by_role("button", name="Publish")).to_have_count(0)
    refused = ann.evaluate(
        """async (id) => {
            const base = document.getElementById("aria-drawer").dataset.assistantApi;
            try { await Aria.api("POST", `${base}/drafts/${id}/publish`); return "published"; }
            catch (e) { return e.message; }
        }""",
        waiting.get_attribute("data-draft-id"),
    )
    assert "reviewer cannot also publish" in refused
    expect(waiting.locator(".aria-badge")).to_have_text("approved")

    pat = tabs()
    drawer_login(pat, server, "pat", "approver", "operator")
    pat.select_option("#aria-mode", "build")
    release = pat.locator("#aria-review-list .aria-draft").first
    expect(release).to_contain_text("prompt investigator v2")
    release.get_by_role("button", name="Publish").click()
    expect(pat.locator("#aria-review-list")).to_contain_text("Nothing waits for your approval.")
    expect(row.locator(".aria-badge")).to_have_text("published")
    out = server.manage(
        "shell", "-c",
        "from assistant.models import PromptAlias\n"
        "a = PromptAlias.objects.get(name='investigator', alias='production')\n"
        "print('ALIAS', a.version.version, a.version.created_by.username)\n",
    )  # fmt: skip
    assert "ALIAS 1 pat" in out
    for page in (erin, ann, pat):
        assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors


def test_an_author_discards_a_draft_from_the_drawer_after_confirming(tabs, server):
    olga = tabs()
    drawer_login(olga, server, "olga", "operator")
    olga.select_option("#aria-mode", "build")
    for name in ("keep-me", "throw-away"):
        if not olga.locator(".aria-draft-create").evaluate("details => details.open"):
            olga.locator(".aria-draft-create summary").click()
        olga.select_option("#aria-draft-type", "skill")
        olga.fill("#aria-draft-name", name)
        olga.get_by_role("button", name="Create draft").click()
        expect(olga.locator("#aria-draft-list")).to_contain_text(f"skill {name} v1")
    rows = olga.locator("#aria-draft-list .aria-draft")
    doomed = rows.filter(has_text="throw-away")

    olga.once("dialog", lambda dialog: dialog.dismiss())  # changed their mind: nothing happens
    doomed.get_by_role("button", name="Discard").click()
    expect(doomed).to_have_count(1)

    olga.once("dialog", lambda dialog: dialog.accept())
    doomed.get_by_role("button", name="Discard").click()
    expect(doomed).to_have_count(0)
    expect(rows.filter(has_text="keep-me")).to_have_count(1)
    out = server.manage(
        "shell", "-c",
        "from assistant.models import Draft\nfrom core.models import AuditRecord\n"
        "print('LEFT', sorted(Draft.objects.filter(owner__username='olga').values_list('name', flat=True)),"
        " AuditRecord.objects.filter(action='draft.discard').count())\n",
    )  # fmt: skip
    assert "LEFT ['keep-me'] 1" in out


def test_an_approver_rejects_a_tested_draft_with_a_reason_and_the_author_sees_it(tabs, server):
    rita = tabs()
    drawer_login(rita, server, "rita", "operator")
    rita.select_option("#aria-mode", "build")
    rita.locator(".aria-draft-create summary").click()
    rita.select_option("#aria-draft-type", "prompt")  # the template validates and tests
    rita.fill("#aria-draft-name", "triage-notes")
    rita.get_by_role("button", name="Create draft").click()
    mine = rita.locator("#aria-draft-list .aria-draft").filter(has_text="prompt triage-notes v1")
    _step(mine, "Validate", "validated")
    _step(mine, "Test", "tested")

    # an approver without the operator scope reviews in the drawer (no Send, no modes: the queue is there)
    vic = tabs()
    drawer_login(vic, server, "vic", "approver")
    expect(vic.locator("#aria-mode")).to_have_count(0)
    waiting = vic.locator("#aria-review-list .aria-draft").filter(has_text="prompt triage-notes v1")
    expect(waiting.get_by_role("button", name="Approve")).to_be_visible()
    expect(waiting.locator(".aria-draft-author")).to_have_text(" by rita")  # the author's name, not "user #N"

    # a rejection without a reason is refused by the server, shown in the row; nothing moves
    waiting.get_by_role("button", name="Reject").click()
    expect(waiting.locator(".aria-draft-error")).to_contain_text("needs a reason")
    expect(waiting.locator(".aria-badge")).to_have_text("tested")

    waiting.locator(".aria-decision-reason").fill("Too generic for triage; narrow it.")
    waiting.get_by_role("button", name="Reject").click()
    expect(waiting).to_have_count(0)  # no longer waits for an approval
    # the author's tab follows the bus (draft_updated): the status and the approver's reason
    expect(mine.locator(".aria-badge")).to_have_text("review rejected")
    expect(mine.locator(".aria-status-reason")).to_contain_text("narrow it")
    out = server.manage(
        "shell", "-c",
        "from assistant.models import Review\n"
        "r = Review.objects.get(draft__name='triage-notes')\n"
        "print('REVIEW', r.decision, r.reviewer.username, r.reason)\n",
    )  # fmt: skip
    assert "REVIEW reject vic Too generic for triage" in out
    for page in (rita, vic):
        assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors


HOSTILE = "<img src=x onerror=alert(1)>"


def test_an_authors_markup_username_reads_as_text_in_the_review_queue(tabs, server):
    # Django's signup validator refuses such a name; a user made in the shell (or by SSO) is not checked
    server.manage(
        "shell", "-c",
        "from django.contrib.auth.models import Group, User\n"
        "from assistant.models import Draft\n"
        "from assistant.services.drafts import draft_create\n"
        f"author = User.objects.create_user(username={HOSTILE!r}, password='pw-hostile-123456')\n"
        "author.groups.add(Group.objects.get_or_create(name='operator')[0])\n"
        "draft = draft_create(owner=author, type='skill', name='markup-author', spec={'instructions': 'x'})\n"
        "Draft.objects.filter(pk=draft.pk).update(status='tested')\n",
    )  # fmt: skip
    wes = tabs()
    alerts: list[str] = []
    wes.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    drawer_login(wes, server, "wes", "approver")
    row = wes.locator("#aria-review-list .aria-draft").filter(has_text="skill markup-author v1")
    expect(row.locator(".aria-draft-author")).to_have_text(f" by {HOSTILE}")
    expect(row.locator("img")).to_have_count(0)
    expect(wes.locator("#aria-drawer img")).to_have_count(0)
    assert alerts == []


def test_a_pasted_name_over_the_limit_is_refused_with_the_reason_not_cut(tabs, server):
    """The name box had maxlength=100: a pasted 130-character name was cut to its first 100 in the
    box and created under a name nobody typed. Now the API's 422 is shown and nothing is created."""
    page = tabs()
    drawer_login(page, server, "paula", "operator")
    page.select_option("#aria-mode", "build")
    page.locator(".aria-draft-create summary").click()
    page.select_option("#aria-draft-type", "skill")
    long_name = "seal_" + "s" * 125
    page.fill("#aria-draft-name", long_name)
    assert page.input_value("#aria-draft-name") == long_name  # the box keeps what was typed
    page.get_by_role("button", name="Create draft").click()
    expect(page.locator("#aria-draft-new-status")).to_contain_text("up to 100 characters")  # said in words
    expect(page.locator("#aria-draft-list .aria-draft")).to_have_count(0)
    drafts = page.evaluate("() => Aria.api('GET', '/api/v1/assistant/drafts')")
    assert drafts == []
