"""The Ask ARIA drawer draws what its user can use: an approver without the operator scope gets the
drafts review queue only — no modes, New, History (their chat sessions, which they cannot create)
or Settings (the chat engine's) — while an operator gets all of them."""

import pytest

from core.access import APPROVER, OPERATOR

pytestmark = pytest.mark.django_db

CHAT_ONLY = (
    'id="aria-mode"',
    'id="aria-new"',
    'id="aria-history-toggle"',
    'id="aria-history"',
    'id="aria-settings-toggle"',
    'id="aria-settings"',
    'id="aria-build-settings"',
    'id="aria-draft-list"',
    'id="aria-send"',
)


def _drawer(client, user) -> str:
    client.force_login(user)
    html = client.get("/assistant/").content.decode()
    start = html.index('<aside class="aria-drawer"')
    return html[start : html.index("</aside>", start)]


def _drafts_section(drawer: str) -> str:
    start = drawer.index('id="aria-drafts"')
    return drawer[drawer.rindex("<section", 0, start) : drawer.index("</section>", start)]


def test_an_approver_without_operator_gets_the_review_queue_and_no_chat_tabs(client, approver):
    drawer = _drawer(client, approver)
    assert [marker for marker in CHAT_ONLY if marker in drawer] == []
    assert ">History<" not in drawer and ">Settings<" not in drawer
    drafts = _drafts_section(drawer)
    assert 'id="aria-review"' in drafts and 'data-can-review="1"' in drawer
    assert " hidden " not in drafts.split(">", 1)[0]  # shown at once: there is no Build mode to pick
    assert "operator" in drawer[drawer.index('id="aria-operator-note"') :]


def test_an_operator_gets_modes_history_settings_and_the_drafts_panel(client, operator):
    drawer = _drawer(client, operator)
    assert [marker for marker in CHAT_ONLY if marker not in drawer] == []
    assert 'id="aria-operator-note"' not in drawer
    assert " hidden " in _drafts_section(drawer).split(">", 1)[0]  # Build mode opens it


def test_an_approver_who_also_operates_gets_both(client, make_user):
    drawer = _drawer(client, make_user("ann", OPERATOR, APPROVER))
    assert [marker for marker in CHAT_ONLY if marker not in drawer] == []
    assert 'id="aria-review"' in drawer


def test_a_user_without_any_scope_gets_neither_chat_tabs_nor_a_review_queue_shown(client, make_user):
    drawer = _drawer(client, make_user("nemo"))
    assert [marker for marker in CHAT_ONLY if marker in drawer] == []
    assert 'data-can-review="0"' in drawer
    assert " hidden " in _drafts_section(drawer).split(">", 1)[0]
