"""Runs every enabled connector: sessions in their own threads, ingest and status in this one."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from core.errors import InvalidInput
from sentinel.connectors.backlog import Backlog
from sentinel.connectors.feed import MAX_ERROR_LENGTH, Drained, Feed, TagTarget
from sentinel.connectors.lanes import LaneResult, Lanes, lanes_count
from sentinel.connectors.mqtt import MqttSession
from sentinel.connectors.opcua import OpcUaSession, node_key
from sentinel.connectors.rate import RateMeter
from sentinel.connectors.services import connector_status_record, signals_mark_stale
from sentinel.models import Connector
from sentinel.services import samples_ingest
from sentinel.services.ingest import MAX_FUTURE

logger = logging.getLogger(__name__)

TICK_SECONDS = 0.5
RELOAD_SECONDS = 2.0
STATUS_EVERY_SECONDS = 1.0  # a connector's row is written at least this often (the rate decays when idle)
MAX_BATCH = 5_000  # samples per ingest call (the service takes at most 10,000)
# A connector that cannot start (a certificate file not there yet, a credential variable the
# process lacks) is tried again after this delay, doubled each time up to the cap — and at once
# when its row changes.
START_RETRY_SECONDS = 5.0
START_RETRY_MAX_SECONDS = 300.0


def _start_retry_delay(failed_starts: int) -> float:
    """The wait after the (failed_starts + 1)-th failed start. The exponent stops at the cap: a
    connector failing for days (2**1024 has no float) must keep being retried, not raise."""
    delay = START_RETRY_SECONDS
    for _ in range(failed_starts):
        if delay >= START_RETRY_MAX_SECONDS:
            break
        delay *= 2
    return min(START_RETRY_MAX_SECONDS, delay)


class Session(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


def build_session(connector: Connector, feed: Feed) -> Session:
    if connector.kind == Connector.Kind.OPCUA:
        return OpcUaSession(connector, feed)

    return MqttSession(connector, feed, sparkplug=connector.kind == Connector.Kind.MQTT_SPARKPLUG_B)


def _tag_map(connector: Connector) -> dict[str, TagTarget]:
    tags = {}
    rows = connector.tags.values_list("source", "signal_id", "scale", "offset")  # tuples: a plant maps 50k tags
    for raw_source, signal_id, scale, offset in rows.iterator(chunk_size=10_000):
        source = raw_source.strip()
        if connector.kind == Connector.Kind.OPCUA:
            source = node_key(source)
        tags[source] = TagTarget(signal_id, scale, offset)
    return tags


TAGS_DIGEST_SQL = (  # one row from the database instead of every tag, every RELOAD_SECONDS
    "SELECT count(*), md5(string_agg(concat_ws('|', source, signal_id, scale, \"offset\"), ',' ORDER BY id)) "
    "FROM sentinel_connectortag WHERE connector_id = %s"
)


def _fingerprint(connector: Connector) -> tuple[Any, ...]:
    """What a running session depends on: any change restarts it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(TAGS_DIGEST_SQL, [connector.pk])
            tags: tuple[Any, ...] = tuple(cursor.fetchone())
    else:  # embedded SQLite: a small plant, the tags themselves
        tags = tuple(connector.tags.values_list("source", "signal_id", "scale", "offset").order_by("pk"))
    return (connector.updated_at, tags)


@dataclass
class _Running:
    connector_id: int
    fingerprint: tuple[Any, ...]
    feed: Feed
    session: Session | None
    rate: RateMeter
    status_written_at: float
    backlog: Lanes = field(default_factory=Lanes)  # one lane, or ARIA_CONNECTOR_INGEST_LANES
    unreported_samples: int = 0  # stored, not yet added to the connector's samples_total
    failed_starts: int = 0  # in a row, while the settings are unchanged
    retry_start_at: float | None = None  # clock reading; set while the session could not start


class ConnectorSupervisor:
    def __init__(self, *, log: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.running: dict[int, _Running] = {}
        self.log = log or logger.info
        self.clock = clock  # monotonic seconds: the message rate and how often status is written
        self._last_reload = -RELOAD_SECONDS

    # lifecycle ---------------------------------------------------------------------------------
    def reload(self) -> None:
        wanted = {c.pk: c for c in Connector.objects.filter(enabled=True)}  # tags are read on start only
        retries: dict[int, int] = {}
        for connector_id in list(self.running):
            current, running = wanted.get(connector_id), self.running[connector_id]
            if current is None or _fingerprint(current) != running.fingerprint:
                self._stop(connector_id, status=Connector.Status.STOPPED if current is None else None)
            elif running.retry_start_at is not None and self.clock() >= running.retry_start_at:
                retries[connector_id] = running.failed_starts
                self._stop(connector_id, status=None)
        for connector_id, connector in wanted.items():
            if connector_id not in self.running:
                self._start(connector, failed_starts=retries.get(connector_id, 0))

    def _start(self, connector: Connector, *, failed_starts: int = 0) -> None:
        feed = Feed({})
        started = self.clock()
        running = _Running(
            connector.pk, _fingerprint(connector), feed, None, RateMeter(started), started, backlog=Lanes(lanes_count())
        )
        self.running[connector.pk] = running
        session: Session | None = None
        try:
            feed.tags = _tag_map(connector)
            session = build_session(connector, feed)
            session.start()
            running.session = session
            self.log(f"connectors: {connector.name} ({connector.kind}) started")
        except Exception as error:  # a bad endpoint, mapping or file: report it, retry later
            if session is not None:
                with contextlib.suppress(Exception):
                    session.stop()  # whatever it started before it failed
            running.failed_starts = failed_starts + 1
            delay = _start_retry_delay(failed_starts)
            running.retry_start_at = started + delay
            logger.warning("connectors: %s cannot start: %s", connector.name, error)
            feed.error(f"cannot start: {error} (retry in {delay:g} s)", status=Connector.Status.ERROR)

    def _stop(self, connector_id: int, *, status: str | None) -> None:
        running = self.running.pop(connector_id)
        if running.session is not None:
            try:
                running.session.stop()
            except Exception:
                logger.exception("connectors: stopping %s failed", connector_id)
        try:
            self._flush(running, timezone.now())
        finally:
            running.backlog.close()
        if status:
            connector_status_record(
                connector_id=connector_id, drained=Drained(), samples=0, rate=0.0, now=timezone.now(), status=status
            )

    def stop_all(self) -> None:
        for connector_id in list(self.running):
            self._stop(connector_id, status=Connector.Status.STOPPED)

    # one round ---------------------------------------------------------------------------------
    def tick(self) -> None:
        """Reload the configuration now and then, then ingest what every session received."""
        monotonic = time.monotonic()
        if monotonic - self._last_reload >= RELOAD_SECONDS:
            self._last_reload = monotonic
            self.reload()
        now = timezone.now()
        for running in list(self.running.values()):
            try:
                self._flush(running, now)
            except Exception:
                logger.exception("connectors: flushing connector %s failed", running.connector_id)

    def _flush(self, running: _Running, now: datetime) -> None:
        drained = running.feed.drain()
        latest_allowed = now + MAX_FUTURE
        if drained.latest_time is not None and drained.latest_time > latest_allowed:
            future = [s for s in drained.samples if s[1] > latest_allowed]
            drained.samples = [s for s in drained.samples if s[1] <= latest_allowed]
            drained.errors += len(future)
            drained.last_error = f"{len(future)} sample(s) more than 5 minutes in the future were refused"
        running.unreported_samples += self._ingest(running, drained, now)
        clock = self.clock()
        rate = running.rate.add(drained.messages, clock)
        due = clock - running.status_written_at >= STATUS_EVERY_SECONDS
        try:
            if drained.stale_signal_ids:
                signals_mark_stale(signal_ids=drained.stale_signal_ids, now=now)
                drained.stale_signal_ids = set()
            if drained.messages or drained.errors or drained.status or drained.unknown_total or due:
                connector_status_record(
                    connector_id=running.connector_id,
                    drained=drained,
                    samples=running.unreported_samples,
                    rate=rate,
                    now=now,
                )
                running.unreported_samples = 0
                running.status_written_at = clock
        except DatabaseError:  # the database is down: report these counters next round
            running.feed.put_back(drained)
            raise

    def _ingest(self, running: _Running, drained: Drained, now: datetime) -> int:
        """Ingest the backlog, oldest first, then what just arrived, lane by lane (sentinel.connectors
        .lanes); a database error keeps the batch for a retry with backoff (the backlog is bounded:
        overflow drops the oldest, reported)."""
        backlog = running.backlog
        dropped = backlog.add(drained.samples, MAX_BATCH)
        if dropped:
            drained.errors += 1
            drained.last_error = (
                f"ingest backlog full ({backlog.limit} samples): dropped the {dropped} oldest "
                f"({backlog.dropped_total} since start)"
            )
            logger.warning("connectors: %s: %s", running.connector_id, drained.last_error)
        stored = 0
        for result in backlog.drain(lambda lane: self._store_lane(running.connector_id, lane, now)):
            stored += result.stored
            drained.errors += result.errors
            drained.last_error = result.last_error or drained.last_error
        return stored

    @staticmethod
    def _store_lane(connector_id: int, backlog: Backlog, now: datetime) -> LaneResult:
        result = LaneResult()
        while backlog.due(time.monotonic()):
            try:
                result.stored += samples_ingest(samples=backlog.head(), now=now).accepted
            except InvalidInput as error:  # e.g. a mapped signal deleted, a time in the future
                result.errors += 1
                result.last_error = f"ingest refused a batch: {error}"[:MAX_ERROR_LENGTH]
            except DatabaseError as error:
                delay = backlog.failed(time.monotonic())
                result.errors += 1
                result.last_error = f"ingest failed, {backlog.size} samples kept, retry in {delay:g} s: {error}"[
                    :MAX_ERROR_LENGTH
                ]
                logger.warning("connectors: %s: %s", connector_id, result.last_error)
                break
            backlog.done()
        return result

    def run(self, stop_event: threading.Event | None = None) -> None:
        """Until `stop_event` is set: what `manage.py run_connectors` and runaria's thread run."""
        stop_event = stop_event or threading.Event()
        self.log("connectors: running")
        try:
            while not stop_event.is_set():
                started = time.monotonic()
                if not connection.in_atomic_block:
                    close_old_connections()
                try:
                    self.tick()
                except Exception:
                    logger.exception("connectors: tick failed")
                stop_event.wait(max(0.0, TICK_SECONDS - (time.monotonic() - started)))
        finally:
            self.stop_all()
            if threading.current_thread() is not threading.main_thread():
                connection.close()
