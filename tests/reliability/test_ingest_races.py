"""On PostgreSQL (the production ingest path: unnest + ON CONFLICT): a gateway that retries a
batch while the first request is still running stores it once, both answers are the same, and
exact (signal, time) duplicates are skipped by the unique index."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from sentinel.models import IngestBatch, SignalSample
from tests.workorders import factories as f

URL = "/api/v1/signals/samples"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_of_one_batch_store_it_once(operator) -> None:
    signal = f.make_signal(f.make_cell("P-02"), alert=4.5, trip=7.1)
    start = timezone.now() - timedelta(minutes=10)
    body = json.dumps(
        {
            "samples": [
                {"signal_id": signal.pk, "time": (start + timedelta(seconds=i)).isoformat(), "value": 2.0}
                for i in range(500)
            ]
        }
    )
    answers: list[tuple[int, dict, bool]] = []
    barrier = threading.Barrier(4)

    def post() -> None:
        client = Client()
        client.force_login(operator)
        barrier.wait()
        try:
            response = client.post(URL, data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="gw-batch-42")
            answers.append((response.status_code, response.json(), response.has_header("Idempotent-Replayed")))
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert [a[0] for a in answers] == [200] * 4, answers
    assert len({json.dumps(a[1], sort_keys=True) for a in answers}) == 1
    assert sum(1 for a in answers if not a[2]) == 1  # one stored it, the others were replayed
    assert SignalSample.objects.count() == 500 and IngestBatch.objects.count() == 1


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_exact_duplicates_are_skipped_on_postgresql(operator, client) -> None:
    signal = f.make_signal(f.make_cell("P-02"), alert=4.5, trip=7.1)
    client.force_login(operator)
    t = (timezone.now() - timedelta(seconds=5)).isoformat()
    batch = [{"signal_id": signal.pk, "time": t, "value": 2.0}, {"signal_id": signal.pk, "time": t, "value": 3.0}]
    first = client.post(URL, data=json.dumps({"samples": batch}), content_type="application/json").json()
    again = client.post(URL, data=json.dumps({"samples": batch}), content_type="application/json").json()
    assert (first["duplicates"], again["duplicates"]) == (1, 2)
    assert list(SignalSample.objects.values_list("value", flat=True)) == [2.0]
