"""Only the plan owner edits a step's inputs when answering its ask (docs/PLANS.md: "the plan owner may
still edit the inputs of their own non-gated ask"). An admin answering someone else's ask decides it
as asked: the step runs as its owner, so it must run what the owner asked for.

Red team: an admin approved olga's permission ask with {"inputs": {...}} and the mutation ran as olga
with values olga never saw or asked for (audited as olga's plan step).
"""

import pytest

from core.models import AuditRecord
from orchestrator.models import Interaction, PlanStep
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
WRITE = {"capability": "otest.write_effect", "inputs": {"label": "olga-asked"}}


@pytest.fixture
def ask(operator) -> Interaction:
    plan = start(build_plan(operator, [WRITE], autonomy="ask_mutations"))
    found = Interaction.objects.get(plan=plan)
    assert found.kind == "permission" and not found.required_scope
    return found


def test_an_admin_cannot_edit_the_inputs_of_someone_elses_ask(client, admin_user, ask):
    client.force_login(admin_user)
    response = client.post(
        f"/api/v1/aria/interactions/{ask.pk}/answer",
        {"decision": "approve", "inputs": {"label": "admin-chose"}},
        content_type="application/json",
    )

    assert response.status_code == 422 and response.json()["field"] == "inputs"
    ask.refresh_from_db()
    assert ask.status == "open"
    assert PlanStep.objects.get(pk=ask.step_id).inputs == {"label": "olga-asked"}
    assert not AuditRecord.objects.filter(action__startswith="interaction.").exists() and testcaps.CALLS == []


def test_an_admin_still_answers_it_as_asked(client, admin_user, ask, django_capture_on_commit_callbacks):
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/v1/aria/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json"
        )
    assert response.status_code == 200 and response.json()["status"] == "answered"
    assert PlanStep.objects.get(pk=ask.step_id).inputs == {"label": "olga-asked"}


def test_the_owner_edits_their_own_asks_inputs(client, operator, ask):
    client.force_login(operator)
    response = client.post(
        f"/api/v1/aria/interactions/{ask.pk}/answer",
        {"decision": "approve", "inputs": {"label": "olga-changed"}},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert PlanStep.objects.get(pk=ask.step_id).inputs == {"label": "olga-changed"}
