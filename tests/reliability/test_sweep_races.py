"""On PostgreSQL: two sweepers racing over one stranded order (each running what it dispatches,
as a worker would) record one re-drive intent, run one investigation and write one RCA."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from core.models import AgentRun, DispatchIntent
from core.sweep import sweep
from tests.reliability.test_sweeper import open_order_whose_investigation_was_lost, orphaned_run, rca_count


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_concurrent_sweeps_redrive_a_stranded_order_once(plant) -> None:
    work_order = open_order_whose_investigation_was_lost(plant)
    orphaned_run(work_order)
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []

    def sweeper() -> None:
        barrier.wait()
        try:
            sweep()
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=sweeper) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not errors, errors
    work_order.refresh_from_db()
    assert work_order.status == "open"
    assert rca_count(work_order) == (1, 1)
    assert DispatchIntent.objects.filter(dedupe_key__contains=":redrive-").count() == 1
    runs = AgentRun.objects.filter(agent="investigator", subject_id=str(work_order.pk))
    assert runs.filter(status="abandoned").count() == 1 and runs.exclude(status="abandoned").count() == 1
