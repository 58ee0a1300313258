"""A gateway retrying a batch (after a timeout or a 500) must not store it twice: the
`Idempotency-Key` header replays the first response, and exact (signal, time) duplicates are
never stored twice, with or without a key."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import Alarm, IngestBatch, SignalLatest, SignalSample
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db
URL = "/api/v1/signals/samples"


def post(client, samples, key=None):
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(URL, data=json.dumps({"samples": samples}), content_type="application/json", **extra)


def sample(signal, value, *, seconds_ago=0.0):
    return {
        "signal_id": signal.pk,
        "time": (timezone.now() - timedelta(seconds=seconds_ago)).isoformat(),
        "value": value,
    }


def test_a_retried_batch_with_the_same_key_is_stored_once_and_answered_with_the_first_result(api_client, vibration):
    batch = [sample(vibration, 2.0, seconds_ago=3), sample(vibration, 8.0, seconds_ago=1)]  # the second trips
    first = post(api_client, batch, key="gw-7-batch-0001")
    assert first.status_code == 200, first.content
    assert first.json()["raised"] and first.json()["accepted"] == 2
    retry = post(api_client, batch, key="gw-7-batch-0001")
    assert retry.status_code == 200
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert SignalSample.objects.count() == 2
    assert Alarm.objects.count() == 1 and WorkOrder.objects.count() == 1
    assert IngestBatch.objects.get().key == "gw-7-batch-0001"


def test_the_same_key_with_a_different_batch_is_a_conflict_and_stores_nothing(api_client, vibration):
    assert post(api_client, [sample(vibration, 2.0, seconds_ago=2)], key="k1").status_code == 200
    response = post(api_client, [sample(vibration, 3.0, seconds_ago=1)], key="k1")
    assert response.status_code == 409
    assert response.json()["field"] == "Idempotency-Key"
    assert SignalSample.objects.count() == 1


def test_keys_are_per_caller(api_client, client, make_user, vibration):
    from core.access import OPERATOR

    batch = [sample(vibration, 2.0, seconds_ago=2)]
    assert post(api_client, batch, key="shared").status_code == 200
    other = make_user("otto", OPERATOR)
    client.force_login(other)
    second = post(client, batch, key="shared")
    assert second.status_code == 200 and "Idempotent-Replayed" not in second
    # The other caller's batch is not replayed to it, but its samples are exact duplicates.
    assert second.json()["duplicates"] == 1
    assert SignalSample.objects.count() == 1 and IngestBatch.objects.count() == 2


@pytest.mark.parametrize("key", ["", "   ", "x" * 201, "clé-non-ascii", "tab\there"])
def test_a_bad_idempotency_key_is_a_422_naming_the_header_and_stores_nothing(api_client, vibration, key):
    response = post(api_client, [sample(vibration, 2.0)], key=key)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "Idempotency-Key"
    assert not SignalSample.objects.exists() and not IngestBatch.objects.exists()


def test_a_failed_batch_records_no_key_so_a_corrected_retry_is_stored(api_client, vibration):
    bad = post(api_client, [sample(vibration, 2.0), {"signal_id": vibration.pk, "time": "x", "value": 1}], key="k2")
    assert bad.status_code == 422
    assert not IngestBatch.objects.exists()
    assert post(api_client, [sample(vibration, 2.0)], key="k2").status_code == 200
    assert SignalSample.objects.count() == 1


def test_exact_duplicates_without_a_key_are_stored_once_and_the_first_value_wins(api_client, vibration):
    t = (timezone.now() - timedelta(seconds=5)).isoformat()
    first = post(api_client, [{"signal_id": vibration.pk, "time": t, "value": 2.0}])
    assert first.json()["duplicates"] == 0
    # The same instant again (a retry without a key), plus a repeat inside one batch.
    again = post(
        api_client,
        [{"signal_id": vibration.pk, "time": t, "value": 9.0}, {"signal_id": vibration.pk, "time": t, "value": 9.5}],
    )
    assert again.status_code == 200
    assert again.json()["accepted"] == 2 and again.json()["duplicates"] == 2
    assert list(SignalSample.objects.values_list("value", flat=True)) == [2.0]
    # A duplicate never rewrites the latest value, so it raises nothing.
    assert SignalLatest.objects.get(signal=vibration).value == 2.0
    assert not Alarm.objects.exists()


def test_duplicates_inside_one_new_batch_keep_the_first(api_client, vibration):
    t = (timezone.now() - timedelta(seconds=5)).isoformat()
    response = post(
        api_client,
        [{"signal_id": vibration.pk, "time": t, "value": 3.0}, {"signal_id": vibration.pk, "time": t, "value": 9.0}],
    )
    assert response.json()["duplicates"] == 1
    assert list(SignalSample.objects.values_list("value", flat=True)) == [3.0]
    assert SignalLatest.objects.get(signal=vibration).value == 3.0


def test_keys_older_than_a_day_are_forgotten_by_the_history_upkeep_and_a_late_retry_stores_nothing(
    api_client, vibration
):
    """Every keyed batch left a row for ever: a gateway posting one a second kept 86,400 a day."""
    from sentinel.history.retention import history_upkeep

    batch = [sample(vibration, 2.0, seconds_ago=2)]
    assert post(api_client, batch, key="old").status_code == 200
    assert post(api_client, [sample(vibration, 2.5, seconds_ago=1)], key="recent").status_code == 200
    IngestBatch.objects.filter(key="old").update(created_at=timezone.now() - timedelta(hours=25))

    result = history_upkeep()
    assert result.ingest_batches == 1 and result.as_dict()["ingest_batches"] == 1
    assert list(IngestBatch.objects.values_list("key", flat=True)) == ["recent"]
    # A retry after that is a new batch, but its sample is already stored: counted, not stored again.
    late = post(api_client, batch, key="old")
    assert late.status_code == 200 and "Idempotent-Replayed" not in late
    assert (late.json()["accepted"], late.json()["duplicates"]) == (1, 1)
    assert SignalSample.objects.count() == 2
