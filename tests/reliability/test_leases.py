"""Heartbeated work leases (core.leases.lease_hold): a short TTL renewed while the work runs, so a
holder that dies on any host frees its work within one TTL, and a slow live holder keeps it."""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from core.leases import LeaseHeartbeat, lease_acquire, lease_held, lease_hold, lease_release
from core.models import WorkLease
from tests.conftest import wait_until

OTHER_HOST = "replacement-host-7:4242"  # a holder this host cannot check by pid


def lease_on_another_host(key: str, *, expires_in: timedelta) -> WorkLease:
    now = timezone.now()
    return WorkLease.objects.create(
        key=key, holder=OTHER_HOST, token="elsewhere", acquired_at=now, expires_at=now + expires_in
    )


@pytest.mark.django_db
def test_a_holder_on_another_host_that_stops_renewing_frees_the_lease_after_its_ttl():
    row = lease_on_another_host("job:1", expires_in=timedelta(seconds=45))
    assert lease_held("job:1") and lease_acquire("job:1", ttl_seconds=45) is None

    WorkLease.objects.filter(pk=row.pk).update(expires_at=timezone.now())  # its TTL ran out unrenewed

    assert not lease_held("job:1")
    with lease_hold("job:1", ttl_seconds=45) as lease:
        assert lease is not None
        taken = WorkLease.objects.get(key="job:1")
        assert taken.token == lease.token and taken.holder != OTHER_HOST
    assert not WorkLease.objects.filter(key="job:1").exists()  # released when the work ends


@pytest.mark.django_db(transaction=True)  # the heartbeat renews from its own thread
def test_a_holder_whose_heartbeat_stopped_loses_the_lease_after_a_short_ttl():
    lease = lease_acquire("job:2", ttl_seconds=0.5)
    beat = LeaseHeartbeat([lease], ttl_seconds=0.5, interval=0.1).start()
    beat.stop()  # the holder hangs or dies: nothing renews its lease any more, nothing releases it

    assert wait_until(lambda: not lease_held("job:2"), timeout=10)
    assert lease_acquire("job:2", ttl_seconds=45) is not None  # the work can be re-driven


@pytest.mark.django_db(transaction=True)
def test_a_renewing_holder_keeps_the_lease_beyond_several_ttls():
    ttl = 1.0
    with lease_hold("job:3", ttl_seconds=ttl, heartbeat_seconds=0.2) as lease:
        acquired_at = WorkLease.objects.get(key="job:3").acquired_at
        several_ttls_later = acquired_at + timedelta(seconds=4 * ttl)

        def renewed_past_several_ttls() -> bool:
            assert lease_held("job:3"), "a live, renewing holder lost its lease"
            assert lease_acquire("job:3", ttl_seconds=ttl) is None  # nobody else may take it meanwhile
            row = WorkLease.objects.get(key="job:3")
            return row.token == lease.token and row.expires_at > several_ttls_later

        assert wait_until(renewed_past_several_ttls, timeout=30)
    assert not WorkLease.objects.filter(key="job:3").exists()


@pytest.mark.django_db(transaction=True)
def test_a_renewal_that_finds_its_token_gone_is_logged_and_stops_renewing(caplog):
    lease = lease_acquire("job:4", ttl_seconds=45)
    beat = LeaseHeartbeat([lease], ttl_seconds=45, interval=0.1)
    with caplog.at_level(logging.WARNING, logger="core.leases"):
        beat.start()
        WorkLease.objects.filter(key="job:4").update(token="seized", holder=OTHER_HOST)  # taken over
        assert wait_until(lambda: beat.lost == [lease] and not beat._thread.is_alive(), timeout=10)
    assert "job:4 was taken over" in caplog.text
    row = WorkLease.objects.get(key="job:4")
    assert row.token == "seized" and row.holder == OTHER_HOST  # the new holder's lease is untouched
    lease_release(lease)  # releasing a lost lease deletes nothing of the new holder's
    assert WorkLease.objects.filter(key="job:4", token="seized").exists()


@pytest.mark.django_db
def test_work_on_a_lease_a_live_holder_has_does_not_start_and_leaves_its_row_alone():
    row = lease_on_another_host("job:5", expires_in=timedelta(seconds=45))
    with lease_hold("job:5") as lease:
        assert lease is None
    assert WorkLease.objects.get(key="job:5").token == row.token


@pytest.mark.django_db
def test_work_that_fails_releases_its_lease_and_stops_its_heartbeat():
    class Boom(Exception):
        pass

    with pytest.raises(Boom), lease_hold("job:6", ttl_seconds=45, heartbeat_seconds=0.05) as lease:
        assert lease is not None and lease_held("job:6")
        raise Boom
    assert not WorkLease.objects.filter(key="job:6").exists()
    assert lease_acquire("job:6", ttl_seconds=45) is not None
