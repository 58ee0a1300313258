"""A draft's agent review is a model call made as the reviewer principal at its author's request,
so it is billed to the author's daily token budget (`AgentRun.billed_to`): an author whose budget
is spent gets a 429 that asks no model, records no review and leaves the draft tested. Before,
the reviewer's runs were counted against nobody's budget, and reviews were the one model-backed
route an author could keep calling past it."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from assistant.models import Draft, Review
from core.models import AgentRun
from core.throttling import token_usage_today
from tests.assistant.factories import make_tested_draft, principals, set_config
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use

VERDICT = {"decision": "approve", "confidence": 0.9, "policy_version": "aria-review-v1", "reason": "ok"}


def _respond(recorded):
    stream = [tool_use("toolu_1", "submit_review", VERDICT)]
    return anthropic_stream(stream, stop_reason="tool_use", input_tokens=700, output_tokens=300)


@pytest.fixture
def review_ready(make_user):
    reviewer, _ = principals(make_user)
    set_config(
        approval_policy="agent_review",
        reviewer_engine="anthropic",
        reviewer_username="reviewer-bot",
        release_username="release-bot",
    )
    return reviewer


@pytest.mark.django_db
@override_settings(ARIA_DAILY_TOKEN_BUDGET=1_000)
def test_a_review_is_billed_to_its_author_and_the_one_past_the_budget_runs_nothing(review_ready, operator, make_user):
    client = Client()
    client.force_login(operator)
    first, second = make_tested_draft(operator, name="double_a"), make_tested_draft(operator, name="double_b")
    with (
        AnthropicFakeServer(responder=_respond) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url),
    ):
        response = client.post(f"/api/v1/assistant/drafts/{first.pk}/review")
        assert response.status_code == 200 and response.json()["status"] == "approved", response.content
        run = AgentRun.objects.get(agent="draft_reviewer")
        assert (run.user, run.billed_to) == (review_ready, operator)  # acts as the reviewer, paid by the author
        assert token_usage_today(operator) == 1_000 and token_usage_today(review_ready) == 0

        reviews, runs = Review.objects.count(), AgentRun.objects.count()
        refused = client.post(f"/api/v1/assistant/drafts/{second.pk}/review")

        assert refused.status_code == 429 and refused.json()["code"] == "token_budget", refused.content
        assert "daily model budget of 1000 tokens is used up (1000 today)" in refused.json()["detail"]
        assert len(server.message_bodies()) == 1  # the reviewer's model was asked once
        assert (Review.objects.count(), AgentRun.objects.count()) == (reviews, runs)
        assert Draft.objects.get(pk=second.pk).status == "tested"

        # another author's budget is their own
        other = make_tested_draft(make_user("otto", "operator"), name="double_c")
        otto = Client()
        otto.force_login(other.owner)
        assert otto.post(f"/api/v1/assistant/drafts/{other.pk}/review").status_code == 200
