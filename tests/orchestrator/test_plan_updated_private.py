"""`plan_updated` is private on the bus, as plans are everywhere else (another owner's plan is a 404;
admins see all through core.access.owned_by): one copy for the plan's owner and one for every
active admin, each carrying its recipient's `owner_id`; another operator or an approver gets none,
live or on `?after=` replay. Every publisher goes through orchestrator.services.plans.plans_updated,
which reads the admin ids once however many plans and steps it announces."""

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from core.access import ADMIN, APPROVER, OPERATOR, admin_ids, is_admin
from core.capabilities import CapabilityResult
from core.errors import InvalidInput
from core.events import private_scope, publish
from core.models import Event, ServiceAccount
from orchestrator.choices import PlanStatus
from orchestrator.models import Plan
from orchestrator.services.executor import plan_execute
from orchestrator.services.plans import plan_transition, plans_updated
from orchestrator.services.read_batch import claim_batch, record_batch
from orchestrator.services.step_moves import step_skip
from tests.orchestrator import testcaps  # noqa: F401  (registers the otest.* capabilities)
from tests.orchestrator.conftest import build_plan, start
from tests.socket_frames import frames_by_user

READ = {"capability": "otest.read_value", "inputs": {"key": "k"}}


def read(n: int) -> dict[str, Any]:
    return {"capability": "otest.read_value", "inputs": {"key": f"k{n}", "n": n}}


@pytest.fixture
def people(make_user) -> dict[str, Any]:
    return {
        "owner": make_user("oscar", OPERATOR),
        "admin": make_user("adam", ADMIN),
        "other": make_user("otto", OPERATOR),
        "approver": make_user("april", APPROVER, OPERATOR),
    }


def _copies(**lookup: Any) -> list[tuple[int, str, int | None, str | None]]:
    rows = Event.objects.filter(type="plan_updated", **lookup).order_by("id")
    return [(r.payload["owner_id"], r.payload["status"], r.payload["step_id"], r.payload["step_status"]) for r in rows]


def _last_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


# --- who gets a copy ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_each_update_is_one_copy_for_the_owner_and_one_per_admin_never_anyone_else(people):
    # Given a plan of an operator, with an admin, another operator and an approver signed up
    owner, admin = people["owner"], people["admin"]
    plan = start(build_plan(owner, [READ]))
    step = plan.steps.get()
    # Then every update of it names the owner, then the admin — and nobody else
    assert _copies(payload__plan_id=plan.pk) == [
        (owner.pk, "running", None, None),
        (admin.pk, "running", None, None),
        (owner.pk, "running", step.pk, "done"),
        (admin.pk, "running", step.pk, "done"),
        (owner.pk, "completed", None, None),
        (admin.pk, "completed", None, None),
    ]
    assert not Event.objects.filter(type="plan_updated", payload__owner_id__isnull=True).exists()
    for name in ("other", "approver"):
        assert not Event.objects.filter(type="plan_updated", payload__owner_id=people[name].pk).exists()


@pytest.mark.django_db
def test_the_admins_are_whoever_owned_by_shows_every_plan(people, make_user):
    root = make_user("root", is_superuser=True)
    make_user("retired", ADMIN, is_active=False)
    bot = make_user("release-bot", ADMIN)
    ServiceAccount.objects.create(user=bot, role=ServiceAccount.Role.RELEASE)
    # core.access.is_admin (what owned_by asks) and admin_ids agree, user by user
    assert admin_ids() == [u.pk for u in User.objects.order_by("pk") if is_admin(u)]
    assert admin_ids() == [people["admin"].pk, root.pk, bot.pk]
    # an admin's own plan: one copy for them, not two
    plan = Plan.objects.create(owner=people["admin"], goal="g", status="approved")
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=people["admin"])
    assert [c[0] for c in _copies(payload__plan_id=plan.pk)] == [people["admin"].pk, root.pk, bot.pk]


@pytest.mark.django_db
def test_an_update_inside_a_users_private_turn_still_reaches_the_owner_and_admins(people):
    # a coordinator turn of the approver (private to them) moves the operator's plan
    plan = build_plan(people["owner"], [READ], status="draft")
    with private_scope(people["approver"].pk):
        plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=people["approver"])
    assert [c[0] for c in _copies(payload__plan_id=plan.pk)] == [people["owner"].pk, people["admin"].pk]


@pytest.mark.django_db
def test_a_step_skip_is_announced_privately(people):
    plan = build_plan(people["owner"], [READ, READ], autonomy="ask_all")
    plan = start(plan)
    second = plan.steps.get(order=2)
    before = _last_id()
    step_skip(step=second, actor=people["owner"], reason="not needed")
    assert _copies(id__gt=before, payload__step_id=second.pk) == [
        (people["owner"].pk, PlanStatus.PAUSED, second.pk, "skipped"),
        (people["admin"].pk, PlanStatus.PAUSED, second.pk, "skipped"),
    ]


@pytest.mark.django_db
def test_a_public_plan_updated_is_refused_by_the_contract(people):
    """A publisher that skips plans_updated cannot make it public: the payload must name its recipient."""
    with pytest.raises(InvalidInput) as refused, transaction.atomic():
        publish("plan_updated", {"plan_id": 1, "status": "running", "step_id": None, "step_status": None})
    assert refused.value.field == "owner_id"
    assert not Event.objects.filter(type="plan_updated").exists()


# --- the sockets ----------------------------------------------------------------------------------


async def _plan_frames_by_user(users: dict[str, Any], act: Callable[[], Any] | None, *, after: int | None) -> dict:
    """The plan_updated frames each user's socket received (tests.socket_frames)."""
    seen = await frames_by_user(users, act, after=after)
    return {name: [f for f in frames if f["type"] == "plan_updated"] for name, frames in seen.items()}


@pytest.mark.django_db(transaction=True)
async def test_live_the_owner_and_an_admin_get_plan_updated_another_operator_and_an_approver_nothing(people):
    plans: list[Plan] = []
    seen = await _plan_frames_by_user(
        people, lambda: plans.append(start(build_plan(people["owner"], [READ]))), after=None
    )
    (plan,) = plans
    statuses = ["running", "done", "completed"]
    for name in ("owner", "admin"):
        frames = seen[name]
        assert [f["step_status"] or f["status"] for f in frames] == statuses, name
        assert {f["plan_id"] for f in frames} == {plan.pk}
        assert {f["owner_id"] for f in frames} == {people[name].pk}
    assert seen["other"] == [] and seen["approver"] == []


@pytest.mark.django_db(transaction=True)
async def test_on_replay_the_owner_and_an_admin_get_plan_updated_another_operator_nothing(people):
    first = await sync_to_async(_last_id)()
    await sync_to_async(lambda: start(build_plan(people["owner"], [READ])))()
    seen = await _plan_frames_by_user(people, None, after=first)
    assert {n: len(f) for n, f in seen.items()} == {"owner": 3, "admin": 3, "other": 0, "approver": 0}
    assert {f["owner_id"] for f in seen["admin"]} == {people["admin"].pk}
    # and from the very start of the outbox (?after=0): still nothing of it for the others
    seen = await _plan_frames_by_user({n: people[n] for n in ("other", "approver")}, None, after=0)
    assert seen == {"other": [], "approver": []}


# --- cost -----------------------------------------------------------------------------------------


def _publish_queries(updates) -> int:
    with CaptureQueriesContext(connection) as ctx, transaction.atomic():
        plans_updated(updates)
    return len([q for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]])


@pytest.mark.django_db
def test_announcing_many_plans_reads_the_admins_once_and_inserts_once(people, make_user):
    owners = [make_user(f"op{i}", OPERATOR) for i in range(8)]
    plans = [Plan.objects.create(owner=o, goal="g", status="running") for o in owners]
    two, eight = _publish_queries([(p, None) for p in plans[:2]]), _publish_queries([(p, None) for p in plans])
    assert two == eight == 2  # the admin ids, then one INSERT of every copy
    assert Event.objects.filter(type="plan_updated").count() == (2 + 8) * 2  # owner + admin each


def _batch_queries(owner, n: int) -> int:
    """The read batch's settle (record_batch) for n claimed steps of one plan: its queries."""
    plan = build_plan(owner, [read(i) for i in range(n)])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    plan.refresh_from_db()
    steps = claim_batch(plan, list(plan.steps.all()))
    assert len(steps) == n
    with CaptureQueriesContext(connection) as ctx, transaction.atomic():
        rest = record_batch(
            plan, [(s, CapabilityResult(name="otest.read_value", content={"n": s.order})) for s in steps]
        )
    assert rest == []
    assert _copies(payload__plan_id=plan.pk, payload__step_status="done") == [
        (who, "running", s.pk, "done") for s in steps for who in (owner.pk, *admin_ids())
    ]
    return len([q for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"]])


@pytest.mark.django_db
@pytest.mark.usefixtures("steady_registry")
def test_the_read_batch_publisher_does_not_grow_with_the_batch(people, make_user):
    make_user("ada", ADMIN)  # two admins: still one read
    assert _batch_queries(people["owner"], 2) == _batch_queries(people["owner"], 12) == 3  # UPDATE, admins, INSERT


@pytest.mark.django_db
@pytest.mark.usefixtures("steady_registry")
def test_an_executor_pass_of_a_read_batch_reads_the_admins_once_per_batch(people):
    plan = build_plan(people["owner"], [read(i) for i in range(6)])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=people["owner"])
    with CaptureQueriesContext(connection) as ctx:
        assert plan_execute(plan.pk).status == PlanStatus.COMPLETED
    admin_reads = [q for q in ctx.captured_queries if "auth_user_groups" in q["sql"] and "is_superuser" in q["sql"]]
    assert len(admin_reads) == 2  # the batch of six reads, then the plan's completion
