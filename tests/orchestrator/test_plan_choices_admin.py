"""Choices in the approval console: the admin action shows the options and answers through the
same service as the API (who may answer, one of the options, the draft planned again)."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from core.access import APPROVER
from orchestrator.models import Interaction
from sentinel.models import Cell
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
CHANGELIST = "/admin/orchestrator/interaction/"


@pytest.fixture
def root(make_user):
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def choice(client, operator):
    f.make_cell("P-01"), f.make_cell("P-02")
    client.force_login(operator)
    body = client.post(
        "/api/v1/aria/plans", {"goal": "Show the vibration of the pump"}, content_type="application/json"
    )
    (ask,) = body.json()["interactions"]
    return Interaction.objects.get(pk=ask["id"])


def _act(client, user, interaction, **extra):
    client.force_login(user)
    data = {"action": "answer_choice", ACTION_CHECKBOX_NAME: [interaction.pk], **extra}
    return client.post(CHANGELIST, data, follow=True)


def test_an_admin_picks_an_option_on_the_console_and_the_draft_is_planned_with_it(client, root, choice):
    page = _act(client, root, choice)
    assert page.status_code == 200
    body = page.content.decode()
    assert 'value="P-01"' in body and 'value="P-02"' in body and "Which one did you mean?" in body
    assert Interaction.objects.get(pk=choice.pk).status == "open"  # showing the options answers nothing

    done = _act(client, root, choice, choice="P-02")

    assert "answered P-02" in done.content.decode()
    choice.refresh_from_db()
    assert choice.status == "answered" and choice.answer["choice"] == "P-02" and choice.answered_by == root
    p02 = Cell.objects.get(tag="P-02")
    assert [(s.capability, s.inputs) for s in choice.plan.steps.all()] == [
        ("workorders.get_current_signals", {"cell_id": p02.pk})
    ]


def test_hostile_an_option_not_offered_or_an_approver_who_is_not_the_owner_changes_nothing(
    client, root, make_user, choice
):
    refused = _act(client, make_user("ann", APPROVER, is_staff=True), choice, choice="P-02")
    # another owner's choice is not the approver's to see on the console (test_admin_privacy.py): no item
    assert "Select exactly one choice to answer." in refused.content.decode()
    forged = _act(client, root, choice, choice="P-99")
    assert "choice must be one of" in forged.content.decode()
    choice.refresh_from_db()
    assert choice.status == "open" and choice.answer is None
