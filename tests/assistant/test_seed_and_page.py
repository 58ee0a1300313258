"""The assistant's demo seed and the Ask ARIA page/drawer markup."""

import io
import re

import pytest

from assistant.conf import get_config
from assistant.models import Skill
from assistant.seed import seed
from assistant.services.principals import resolve_principals
from core.models import ServiceAccount

pytestmark = pytest.mark.django_db


def test_seed_is_idempotent_and_makes_the_principals_ready(make_user):
    for name, role in (("reviewer", "reviewer"), ("release", "release")):
        ServiceAccount.objects.create(user=make_user(name), role=role)
    seed(io.StringIO())
    seed(io.StringIO())
    assert Skill.objects.count() == 3
    config = get_config()
    assert (config.reviewer_username, config.release_username) == ("reviewer", "release")
    assert config.approval_policy == "manual"
    assert resolve_principals(config.model_copy(update={"approval_policy": "full_autonomy"})).ready


def test_page_and_drawer_have_no_inline_script(client, operator):
    assert client.get("/assistant/").status_code == 302  # login first
    client.force_login(operator)
    html = client.get("/assistant/").content.decode()
    assert html.count('id="aria-drawer"') == 1
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "/static/assistant/drawer.js" in html and "/static/assistant/render.js" in html
