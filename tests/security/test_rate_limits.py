"""Rate limits and the daily token budget (core.throttling); the sign-in lockout is in
test_sign_in_lockout.py.

Issue 9: "No rate limit anywhere: 200 chat turns on one socket in 8.5 s (each a paid model call
with a real provider)." Every model-backed or costly entry point now counts per user: chat turns
over REST and WebSocket, coordinator turns (its route and the chat's coordinate mode), draft
tests and plan creation (429 JSON + Retry-After, or a `done` error frame), sign-in failures
lock the username/address pair, and a real provider stops at the user's daily token budget.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings
from django.utils import timezone

from aria_project.asgi import application
from assistant.models import Draft, Review, Run, Session
from core.agents.engines.base import reset_engines
from core.models import AgentRun
from core.throttling import Throttled, rate_check, token_budget_check, token_usage_today
from core.tokens import api_token_create
from orchestrator.models import CoordinatorTurn, Plan
from tests.assistant.factories import make_tested_draft, principals, set_config
from tests.conftest import session_cookie
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use

# The production defaults (aria_project/settings.py); the suite itself runs with generous rates.
PRODUCTION_RATES = {
    "chat": "20/m",
    "coordinator": "10/m",
    "draft_test": "10/m",
    "draft_review": "5/m",
    "plan_create": "20/m",
}
CHAT_URL = "/api/v1/agent/chat"
COORDINATOR_URL = "/api/v1/aria/coordinator/turns"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _chat(client: Client, content: str = "hello"):
    body = {"messages": [{"role": "user", "content": content}]}
    return client.post(CHAT_URL, body, content_type="application/json")


def _new_session(client: Client, mode: str) -> int:
    return client.post("/api/v1/assistant/sessions", {"mode": mode}, content_type="application/json").json()["id"]


def _session_turn(client: Client, session_id: int, content: str):
    url = f"/api/v1/assistant/sessions/{session_id}/messages"
    return client.post(url, {"content": content}, content_type="application/json")


def _assert_throttled(response, code: str = "throttled") -> int:
    assert response.status_code == 429, response.content
    body = response.json()
    assert body["code"] == code and body["detail"]
    retry_after = int(response["Retry-After"])
    assert retry_after >= 1
    return retry_after


# --- REST chat ---------------------------------------------------------------------------------


@pytest.mark.django_db
@override_settings(ARIA_RATES=PRODUCTION_RATES)
def test_the_21st_chat_turn_in_a_minute_is_429_with_retry_after_and_runs_nothing(operator, make_user):
    client = _client(operator)
    for i in range(20):
        assert _chat(client, f"turn {i}").status_code == 200
    runs, agent_runs = Run.objects.count(), AgentRun.objects.count()

    retry_after = _assert_throttled(_chat(client, "one more"))

    assert retry_after <= 60
    assert (Run.objects.count(), AgentRun.objects.count()) == (runs, agent_runs)  # no model was asked
    # Another user's turns are counted apart.
    assert _chat(_client(make_user("otto", "operator")), "hi").status_code == 200


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "2/m"})
def test_chat_limit_is_per_user_whatever_the_credential(operator):
    """A session cookie and an API token of one user share one counter."""
    _, raw = api_token_create(user=operator, name="cli")
    token_client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert _chat(_client(operator)).status_code == 200
    assert _chat(token_client).status_code == 200
    _assert_throttled(_chat(token_client))
    _assert_throttled(_chat(_client(operator)))


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "2/m"})
def test_session_turns_count_as_chat_turns(operator):
    client = _client(operator)
    session_id = _new_session(client, "build")
    url = f"/api/v1/assistant/sessions/{session_id}/messages"
    assert _chat(client).status_code == 200
    assert client.post(url, {"content": "draft a tool"}, content_type="application/json").status_code == 200
    messages = Session.objects.get(pk=session_id).messages.count()
    _assert_throttled(client.post(url, {"content": "again"}, content_type="application/json"))
    assert Session.objects.get(pk=session_id).messages.count() == messages


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "1/m"})
def test_the_one_shot_prompt_draft_counts_as_a_chat_turn(operator):
    client = _client(operator)
    assert _chat(client).status_code == 200
    response = client.post("/api/v1/assistant/prompt-draft", {"content": "a greeting"}, content_type="application/json")
    _assert_throttled(response)


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "off"})
def test_a_scope_set_off_is_not_limited(operator):
    client = _client(operator)
    for _ in range(3):
        assert _chat(client).status_code == 200
    assert rate_check("chat", operator).allowed


# --- coordinator, draft tests, plans -----------------------------------------------------------


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "coordinator": "2/m"})
def test_coordinator_turns_are_limited_across_its_route_and_the_chat_coordinate_mode(operator, make_user):
    client = _client(operator)
    for i in range(2):
        response = client.post(COORDINATOR_URL, {"message": f"what is open? {i}"}, content_type="application/json")
        assert response.status_code == 201, response.content
    turns = CoordinatorTurn.objects.count()

    _assert_throttled(client.post(COORDINATOR_URL, {"message": "and now?"}, content_type="application/json"))
    session_id = _new_session(client, "coordinate")
    response = _session_turn(client, session_id, "what is open?")
    assert _assert_throttled(response) <= 60
    assert "coordinator turns" in response.json()["detail"]
    assert CoordinatorTurn.objects.count() == turns
    assert Session.objects.get(pk=session_id).messages.count() == 0

    other = _client(make_user("otto", "operator"))
    assert other.post(COORDINATOR_URL, {"message": "hi"}, content_type="application/json").status_code == 201


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "draft_test": "2/m"})
def test_draft_tests_are_limited(operator):
    client = _client(operator)
    draft_id = client.post(
        "/api/v1/assistant/drafts",
        {"type": "prompt", "name": "greeting", "spec": {"template": "Hello {{name}}", "variables": ["name"]}},
        content_type="application/json",
    ).json()["id"]
    url = f"/api/v1/assistant/drafts/{draft_id}/test"
    for _ in range(2):
        assert client.post(url).status_code != 429
    status = Draft.objects.get(pk=draft_id).status
    _assert_throttled(client.post(url))
    assert Draft.objects.get(pk=draft_id).status == status


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "draft_review": "2/m"})
def test_agent_reviews_have_their_own_limit_and_the_one_over_it_runs_no_review(operator, make_user):
    """POST /drafts/{id}/review is a model call of the reviewer principal: the third in a minute is
    a 429 that asks no model, records no review and leaves the draft tested."""
    principals(make_user)
    set_config(
        approval_policy="agent_review",
        reviewer_engine="anthropic",
        reviewer_username="reviewer-bot",
        release_username="release-bot",
    )
    verdict = {"decision": "approve", "confidence": 0.9, "policy_version": "aria-review-v1", "reason": "ok"}

    def respond(recorded):
        return anthropic_stream([tool_use("toolu_1", "submit_review", verdict)], stop_reason="tool_use")

    client = _client(operator)
    drafts = [make_tested_draft(operator, name=f"double_{i}") for i in range(3)]
    with (
        AnthropicFakeServer(responder=respond) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url),
    ):
        for draft in drafts[:2]:
            response = client.post(f"/api/v1/assistant/drafts/{draft.pk}/review")
            assert response.status_code == 200 and response.json()["status"] == "approved", response.content
        reviews, runs = Review.objects.count(), AgentRun.objects.count()

        refused = client.post(f"/api/v1/assistant/drafts/{drafts[2].pk}/review")

        assert _assert_throttled(refused) <= 60
        assert len(server.message_bodies()) == 2  # the reviewer's model was asked twice, not three times
        assert (Review.objects.count(), AgentRun.objects.count()) == (reviews, runs)
        assert Draft.objects.get(pk=drafts[2].pk).status == "tested"
        # draft tests count apart, and so does another author's review
        assert client.post(f"/api/v1/assistant/drafts/{drafts[2].pk}/test").status_code != 429
        other_draft = make_tested_draft(make_user("otto", "operator"), name="triple")
        other = _client(other_draft.owner).post(f"/api/v1/assistant/drafts/{other_draft.pk}/review")
        assert other.status_code == 200, other.content


@pytest.mark.django_db
@override_settings(ARIA_RATES={**PRODUCTION_RATES, "plan_create": "2/m"})
def test_plan_creation_is_limited(operator, make_user):
    client = _client(operator)
    for i in range(2):
        response = client.post("/api/v1/aria/plans", {"goal": f"check pump {i}"}, content_type="application/json")
        assert response.status_code == 201, response.content
    _assert_throttled(client.post("/api/v1/aria/plans", {"goal": "a third"}, content_type="application/json"))
    assert Plan.objects.filter(owner=operator).count() == 2
    other = _client(make_user("otto", "operator"))
    assert other.post("/api/v1/aria/plans", {"goal": "mine"}, content_type="application/json").status_code == 201


# --- the chat WebSocket ------------------------------------------------------------------------


async def _chat_socket(user) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"cookie", (await sync_to_async(session_cookie)(user)).encode())]
    comm = WebsocketCommunicator(application, "/ws/agent/chat", headers=headers)
    assert (await comm.connect())[0]
    return comm


async def _until_done(comm: WebsocketCommunicator) -> dict:
    while True:
        frame = await comm.receive_json_from(timeout=20)
        if frame["type"] == "done":
            return frame


@pytest.mark.django_db(transaction=True)
async def test_a_websocket_turn_over_the_limit_is_a_done_error_and_runs_no_model(operator):
    with override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "2/m"}):
        comm = await _chat_socket(operator)
        for i in range(2):
            await comm.send_json_to({"type": "user", "content": f"turn {i}"})
            assert "error" not in await _until_done(comm)
        counts = await sync_to_async(lambda: (Run.objects.count(), AgentRun.objects.count()))()

        await comm.send_json_to({"type": "user", "content": "one more"})
        done = await comm.receive_json_from(timeout=5)  # the refusal is the very next frame

        assert done["type"] == "done" and done["code"] == "throttled"
        assert 1 <= done["retry_after"] <= 60 and "Try again in" in done["error"]
        assert await sync_to_async(lambda: (Run.objects.count(), AgentRun.objects.count()))() == counts
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_rest_and_websocket_turns_share_one_counter(operator):
    with override_settings(ARIA_RATES={**PRODUCTION_RATES, "chat": "1/m"}):
        assert (await sync_to_async(lambda: _chat(_client(operator)).status_code)()) == 200
        comm = await _chat_socket(operator)
        await comm.send_json_to({"type": "user", "content": "hi"})
        assert (await _until_done(comm))["code"] == "throttled"
        await comm.disconnect()


# --- the daily token budget --------------------------------------------------------------------


@pytest.fixture
def real_provider(settings):
    """A real provider configured (its key set); the refusals below never reach it."""
    settings.ARIA_ENGINE = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"  # nothing listens: a call would fail loudly
    reset_engines()
    yield
    reset_engines()


def _usage(user, tokens: int, *, engine: str = "anthropic", days_ago: int = 0) -> AgentRun:
    run = AgentRun.objects.create(
        agent="operator_qa", turn_id=uuid.uuid4().hex, user=user, engine=engine, input_tokens=tokens // 2,
        output_tokens=tokens - tokens // 2, status=AgentRun.Status.FINISHED,
    )  # fmt: skip
    if days_ago:
        AgentRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(days=days_ago))
    return run


@pytest.mark.django_db
def test_usage_counts_today_on_real_providers_only(operator, make_user):
    _usage(operator, 1000)
    _usage(operator, 500, engine="openai")
    _usage(operator, 99_000, engine="fake")  # the fake engine costs nothing
    _usage(operator, 70_000, days_ago=1)  # yesterday's budget is spent and gone
    _usage(make_user("otto", "operator"), 5000)
    assert token_usage_today(operator) == 1500


@pytest.mark.django_db
@override_settings(ARIA_DAILY_TOKEN_BUDGET=10_000)
def test_budget_check_refuses_at_the_budget_and_exempts_the_fake_engine(operator, make_user):
    _usage(operator, 9_999)
    token_budget_check(operator, provider="anthropic")  # one token left: allowed
    _usage(operator, 1)
    with pytest.raises(Throttled) as refused:
        token_budget_check(operator, provider="anthropic")
    assert refused.value.code == "token_budget" and refused.value.status_code == 429
    assert "10000 tokens" in refused.value.message and refused.value.retry_after >= 1
    token_budget_check(operator, provider="fake")  # offline turns cost nothing
    token_budget_check(make_user("otto", "operator"), provider="anthropic")  # budgets are per user
    with override_settings(ARIA_DAILY_TOKEN_BUDGET=0):
        token_budget_check(operator, provider="anthropic")  # 0 = no budget


@pytest.mark.django_db
@override_settings(ARIA_DAILY_TOKEN_BUDGET=10_000)
def test_an_exhausted_budget_refuses_chat_and_coordinator_turns_before_any_model_call(real_provider, operator):
    _usage(operator, 12_000)
    client = _client(operator)
    runs, agent_runs, turns = Run.objects.count(), AgentRun.objects.count(), CoordinatorTurn.objects.count()

    response = _chat(client, "why did P-02 trip?")
    _assert_throttled(response, code="token_budget")
    assert "daily model budget of 10000 tokens is used up (12000 today)" in response.json()["detail"]
    _assert_throttled(client.post(COORDINATOR_URL, {"message": "what is open?"}, content_type="application/json"),
                      code="token_budget")  # fmt: skip
    response = _session_turn(client, _new_session(client, "chat"), "hi")
    _assert_throttled(response, code="token_budget")
    response = client.post("/api/v1/assistant/prompt-draft", {"content": "a greeting"}, content_type="application/json")
    _assert_throttled(response, code="token_budget")
    response = client.post(
        "/api/v1/aria/plans", {"goal": "check P-02", "planner": "model"}, content_type="application/json"
    )
    _assert_throttled(response, code="token_budget")
    heuristic = client.post("/api/v1/aria/plans", {"goal": "check P-02"}, content_type="application/json")
    assert heuristic.status_code == 201  # the heuristic planner costs no tokens

    assert (Run.objects.count(), AgentRun.objects.count(), CoordinatorTurn.objects.count()) == (runs, agent_runs, turns)


@pytest.mark.django_db(transaction=True)
async def test_an_exhausted_budget_is_a_done_error_on_the_websocket(real_provider, operator):
    await sync_to_async(_usage)(operator, 300_000)
    comm = await _chat_socket(operator)
    await comm.send_json_to({"type": "user", "content": "why did P-02 trip?"})
    done = await comm.receive_json_from(timeout=5)
    assert done["type"] == "done" and done["code"] == "token_budget" and "budget" in done["error"]
    assert await sync_to_async(Run.objects.count)() == 0
    await comm.disconnect()


# --- Redis-backed counters (CI's integration leg) ----------------------------------------------


@pytest.mark.integration
@pytest.mark.django_db
def test_counters_live_in_redis_when_it_is_configured(operator):
    import os

    prefix = f"aria-test-throttle-{uuid.uuid4().hex}"
    redis_cache = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                               "LOCATION": os.environ["REDIS_URL"], "KEY_PREFIX": prefix}}  # fmt: skip
    with override_settings(CACHES=redis_cache, ARIA_RATES={**PRODUCTION_RATES, "chat": "2/m"}):
        from django.core.cache import cache

        try:
            client = _client(operator)
            assert _chat(client).status_code == 200
            assert _chat(client).status_code == 200
            _assert_throttled(_chat(client))
            assert cache.get(f"aria_throttle_chat_user{operator.pk}")  # the log is in Redis
        finally:
            cache.delete(f"aria_throttle_chat_user{operator.pk}")
