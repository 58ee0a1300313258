"""The approval console shows a staff approver what the API shows them: their own plans and asks, and
the plans whose gated ask they may decide (with those asks) — not every operator's plans, steps,
results and asks. Admins see all.

Red team: a staff approver opened /admin/orchestrator/plan/ and read every operator's plan goals, step
inputs and results and non-gated asks (a confirm on olga's read, its evidence), though the API is
owner-scoped (another owner's plan is a 404) and the audit admin hides the same plans' records from
them since 859dcda.
"""

import pytest

from core.access import APPROVER
from orchestrator.models import Interaction
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
PLANS, ASKS = "/admin/orchestrator/plan/", "/admin/orchestrator/interaction/"


@pytest.fixture
def plans(operator):
    """olga's private plan (a read waiting for her own ask) and her plan waiting on a gated release."""
    private = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "secret-k"}}],
                               autonomy="ask_all"))  # fmt: skip
    private.goal = "olga's private goal"
    private.save(update_fields=["goal"])
    gated = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "r"}}]))
    gated.goal = "olga's gated goal"
    gated.save(update_fields=["goal"])
    return private, gated


def test_a_staff_approver_sees_only_the_plans_and_asks_they_decide(client, make_user, plans):
    private, gated = plans
    own_ask, gated_ask = Interaction.objects.get(plan=private), Interaction.objects.get(plan=gated)
    client.force_login(make_user("ann", APPROVER, is_staff=True))

    listing = client.get(PLANS).content.decode()
    assert "gated goal" in listing and "private goal" not in listing
    assert client.get(f"{PLANS}{gated.pk}/change/").status_code == 200
    assert client.get(f"{PLANS}{private.pk}/change/", follow=True).redirect_chain  # "doesn't exist"
    assert "secret-k" not in client.get(f"{PLANS}{private.pk}/change/", follow=True).content.decode()

    asks = client.get(ASKS).content.decode()
    assert f"{ASKS}{gated_ask.pk}/change/" in asks and f"{ASKS}{own_ask.pk}/change/" not in asks
    assert client.get(f"{ASKS}{own_ask.pk}/change/", follow=True).redirect_chain


def test_an_admin_sees_every_plan_and_ask(client, make_user, plans):
    private, _gated = plans
    root = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(root)

    listing = client.get(PLANS).content.decode()
    assert "gated goal" in listing and "private goal" in listing
    assert client.get(f"{PLANS}{private.pk}/change/").status_code == 200
    asks = client.get(ASKS).content.decode()
    assert all(f"{ASKS}{a.pk}/change/" in asks for a in Interaction.objects.all())


def test_a_staff_approver_sees_their_own_plan(client, make_user, plans):
    ann = make_user("ann", APPROVER, is_staff=True)
    mine = build_plan(ann, [{"capability": "otest.read_value", "inputs": {"key": "k"}}])
    client.force_login(ann)
    assert client.get(f"{PLANS}{mine.pk}/change/").status_code == 200
