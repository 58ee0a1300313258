"""The run watchdog and crash bookkeeping."""

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import Run
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from assistant.tasks import expire_stale_runs_task

from .factories import set_config

pytestmark = pytest.mark.django_db


def test_watchdog_fails_runs_left_running_past_the_timeout(operator):
    set_config(run_timeout_seconds=60)
    session = session_create(owner=operator)
    stale = Run.objects.create(session=session)
    fresh = Run.objects.create(session=session)
    Run.objects.filter(pk=stale.pk).update(created=timezone.now() - timedelta(seconds=200))
    assert expire_stale_runs_task() == 1
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.status == "failed" and "watchdog" in stale.error
    assert fresh.status == "running"


def test_a_crashing_engine_closes_the_run_failed(operator):
    class Crash:
        name = provider = "crash"
        supports_thinking = False

        def complete(self, request, *, on_delta=None):
            raise RuntimeError("boom")

    session = session_create(owner=operator, mode="build")
    outcome = session_turn(session=session, user=operator, content="hi", engine=Crash())
    assert outcome.run.status == "failed" and "boom" in outcome.run.error


def test_a_timeout_is_recorded_on_the_run(operator):
    from core.agents.engines.fake import FakeEngine, FakeReply

    set_config(run_timeout_seconds=0.001, max_turns=3)
    session = session_create(owner=operator, mode="chat")
    slow = FakeEngine(script=[FakeReply(tool_calls=[("get_nothing", {})])] * 3)
    outcome = session_turn(session=session, user=operator, content="hi", engine=slow)
    assert outcome.run.status == "failed" and "timeout" in outcome.run.error.lower()
