"""Prometheus metrics: the kernel's instruments, the collectors apps register, and `/metrics`.

Two kinds of metric, so every figure is right whichever process serves the scrape:

- **Instruments** (`counter`, `histogram`, `gauge`) count what happens in a process: samples
  ingested, agent runs, tool latency, open WebSockets. With several web/worker processes set
  `PROMETHEUS_MULTIPROC_DIR` (prometheus-client's multiprocess mode): every process writes its
  values there and a scrape of any process sums them.
- **Scrape-time collectors** (`register_collector`) read the database (alarms by state, work
  orders by status, the dispatch outbox, unsealed audit records, connector status) or Redis
  (Celery queue depth) when `/metrics` is read: one cheap query each, so the figure never depends
  on which process counted.

Apps declare their own in `AppConfig.ready()` (the kernel imports no app): sentinel's ingest,
scan and alarm metrics live in `sentinel/metrics.py`, workorders' in `workorders/metrics.py`.

`/metrics` answers a bearer token (or signed-in session) of a user with the admin scope or in
the `metrics` group, or a request straight from an address in `ARIA_METRICS_ALLOWED_NETWORKS`
(default 127.0.0.1/32; a request that came through a proxy is never admitted by address).
Anyone else gets 401/403 JSON.
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core import checks
from django.db.models import Count, Max, Min, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from core.access import is_admin
from core.auth import bearer_token, user_for_token
from core.models import AgentRun, AuditRecord, DispatchIntent, Event

__all__ = [
    "METRICS_SCOPE",
    "CounterMetricFamily",
    "GaugeMetricFamily",
    "agent_run_observe",
    "agent_tool_call_observe",
    "counter",
    "counts_family",
    "gauge",
    "histogram",
    "metrics_view",
    "register_collector",
    "websocket_clients",
]

logger = logging.getLogger(__name__)

METRICS_SCOPE = "metrics"  # a Django group: members may read /metrics (admins always may)
MULTIPROCESS_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
# Requests that carry one of these came through a proxy: their socket address is the proxy's. The
# standard header, the de-facto ones, and those CDNs and load balancers set instead of them.
FORWARDING_HEADERS = (
    "X-Forwarded-For",
    "Forwarded",
    "X-Real-IP",
    "X-Client-IP",
    "X-Cluster-Client-IP",
    "True-Client-IP",
    "CF-Connecting-IP",
    "Fastly-Client-IP",
)

# -- instruments ------------------------------------------------------------------------------
_instruments: dict[str, Any] = {}
_instruments_lock = threading.Lock()


def _instrument(kind: type, name: str, documentation: str, labelnames: Sequence[str], **kwargs: Any) -> Any:
    """One instrument per name for the life of the process (a second ready() gets the first)."""
    with _instruments_lock:
        existing = _instruments.get(name)
        if existing is None:
            existing = _instruments[name] = kind(name, documentation, labelnames=tuple(labelnames), **kwargs)
        elif not isinstance(existing, kind):
            raise ValueError(f"metric {name!r} is already a {type(existing).__name__}")
        return existing


def counter(name: str, documentation: str, labelnames: Sequence[str] = ()) -> Counter:
    """A counter (`name` without `_total`; the exposition adds it)."""
    return _instrument(Counter, name, documentation, labelnames)


def histogram(
    name: str, documentation: str, labelnames: Sequence[str] = (), *, buckets: Sequence[float] | None = None
) -> Histogram:
    kwargs = {"buckets": tuple(buckets)} if buckets else {}
    return _instrument(Histogram, name, documentation, labelnames, **kwargs)


def gauge(
    name: str, documentation: str, labelnames: Sequence[str] = (), *, multiprocess_mode: str = "livesum"
) -> Gauge:
    """A gauge a process sets; in multiprocess mode the live processes' values are summed by default
    (`multiprocess_mode` as prometheus-client spells it: livesum, livemax, mostrecent, …)."""
    return _instrument(Gauge, name, documentation, labelnames, multiprocess_mode=multiprocess_mode)


if MULTIPROCESS_DIR:  # a process that ends cleanly takes its live gauges (open sockets) with it

    def _mark_dead() -> None:
        from prometheus_client import multiprocess  # lazy: multiprocess mode only when PROMETHEUS_MULTIPROC_DIR is set

        multiprocess.mark_process_dead(os.getpid())

    atexit.register(_mark_dead)


# -- the kernel's own instruments -------------------------------------------------------------
_AGENT_RUNS = counter("aria_agent_runs", "Agent runs ended, by agent and finish reason.", ("agent", "finish_reason"))
_AGENT_RUN_SECONDS = histogram(
    "aria_agent_run_seconds",
    "Wall time of an agent run.",
    ("agent",),
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)
_AGENT_TOKENS = counter("aria_agent_tokens", "Model tokens used by agent runs.", ("agent", "direction"))
_TOOL_CALL_SECONDS = histogram(
    "aria_agent_tool_call_seconds",
    "Duration of a tool call made by an agent.",
    ("agent", "tool"),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
_TOOL_CALL_ERRORS = counter("aria_agent_tool_call_errors", "Tool calls that returned an error.", ("agent", "tool"))
_WEBSOCKET_CLIENTS = gauge("aria_websocket_clients", "Open, admitted WebSocket connections.", ("consumer",))


def agent_run_observe(run: AgentRun) -> None:
    """Called by the agent loop once per run, when it ends (its AgentRun saved)."""
    _AGENT_RUNS.labels(run.agent, run.finish_reason or "unknown").inc()
    _AGENT_RUN_SECONDS.labels(run.agent).observe(max(0, run.duration_ms or 0) / 1000)
    if run.input_tokens:
        _AGENT_TOKENS.labels(run.agent, "input").inc(run.input_tokens)
    if run.output_tokens:
        _AGENT_TOKENS.labels(run.agent, "output").inc(run.output_tokens)


def agent_tool_call_observe(agent: str, tool: str, duration_ms: float, *, is_error: bool) -> None:
    """Called by the agent loop after each tool call (not the finish tool)."""
    _TOOL_CALL_SECONDS.labels(agent, tool).observe(max(0.0, duration_ms) / 1000)
    if is_error:
        _TOOL_CALL_ERRORS.labels(agent, tool).inc()


def websocket_clients(consumer: str) -> Any:
    """The open-socket gauge of one consumer class: `.inc()` when admitted, `.dec()` when released."""
    return _WEBSOCKET_CLIENTS.labels(consumer)


# -- scrape-time collectors -------------------------------------------------------------------
CollectFn = Callable[[], Iterable[Metric]]
_collectors: dict[str, CollectFn] = {}


def register_collector(name: str, collect: CollectFn) -> None:
    """Add a scrape-time collector (`collect()` yields metric families); registering a name again
    replaces it. A collector that raises is logged and reported as `aria_metrics_collector_up 0`;
    the rest of the scrape still answers."""
    _collectors[name] = collect


def counts_family(
    name: str, documentation: str, label: str, counts: Mapping[str, int], values: Iterable[str]
) -> GaugeMetricFamily:
    """A gauge with one sample per label value, 0 for a value that has no rows (so a panel shows
    a state going to zero, rather than its series disappearing)."""
    family = GaugeMetricFamily(name, documentation, labels=[label])
    known = list(values)
    for value in [*known, *sorted(set(counts) - set(known))]:
        family.add_metric([value], float(counts.get(value, 0)))
    return family


class _ScrapeCollectors(Collector):
    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily(
            "aria_metrics_collector_up", "1 when the scrape-time collector answered.", labels=["collector"]
        )
        for name, collect in list(_collectors.items()):
            try:
                families = list(collect())
            except Exception:
                logger.exception("Metrics collector %s failed", name)
                up.add_metric([name], 0.0)
                continue
            up.add_metric([name], 1.0)
            yield from families
        yield up


def _dispatch_outbox() -> Iterable[Metric]:

    unsent = DispatchIntent.objects.filter(sent_at__isnull=True).aggregate(
        pending=Count("id"), failing=Count("id", filter=Q(attempts__gt=0)), oldest=Min("created_at")
    )
    oldest = unsent["oldest"]
    yield GaugeMetricFamily("aria_dispatch_outbox_pending", "Dispatch intents not sent yet.", value=unsent["pending"])
    yield GaugeMetricFamily(
        "aria_dispatch_outbox_failing",
        "Unsent dispatch intents whose send failed at least once.",
        value=unsent["failing"],
    )
    yield GaugeMetricFamily(
        "aria_dispatch_outbox_oldest_seconds",
        "Age of the oldest unsent dispatch intent (0 when none).",
        value=max(0.0, (timezone.now() - oldest).total_seconds()) if oldest else 0.0,
    )
    last_event = Event.objects.aggregate(last=Max("id"))["last"] or 0
    yield CounterMetricFamily(
        "aria_events_published", "Bus events written to the outbox (its last id).", value=last_event
    )


def _audit_chain() -> Iterable[Metric]:
    """The audit trail's tamper window: committed records not yet linked into the hash chain
    (core.audit). Sealing follows each commit within milliseconds; a count that stays up, or an
    age past the sweep interval, means the sealer is not running, or refuses a chain head that does
    not verify under the audit key (logged; `manage.py verify_audit`). Reads the unsealed rows only
    (a partial index), so it costs the same however long the trail is."""
    unsealed = AuditRecord.objects.filter(seal__isnull=True).aggregate(n=Count("id"), oldest=Min("created_at"))
    oldest = unsealed["oldest"]
    yield GaugeMetricFamily(
        "aria_audit_unsealed", "Audit records committed but not yet sealed into the hash chain.", value=unsealed["n"]
    )
    yield GaugeMetricFamily(
        "aria_audit_unsealed_oldest_seconds",
        "Age of the oldest unsealed audit record: how long it has been open to undetected change (0 when none).",
        value=max(0.0, (timezone.now() - oldest).total_seconds()) if oldest else 0.0,
    )


@lru_cache(maxsize=4)
def _redis_client(url: str) -> Any:
    import redis  # lazy: only with a Redis broker

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _celery_queue() -> Iterable[Metric]:
    """Messages waiting in the Celery queue (Redis broker only; kombu keeps one list per priority)."""
    url = settings.REDIS_URL
    if not url:
        return
    queue = getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery")
    pipe = _redis_client(url).pipeline(transaction=False)
    for key in (queue, *(f"{queue}\x06\x16{p}" for p in (3, 6, 9))):
        pipe.llen(key)
    family = GaugeMetricFamily("aria_celery_queue_length", "Messages waiting in a Celery queue.", labels=["queue"])
    family.add_metric([queue], float(sum(pipe.execute())))
    yield family


register_collector("core.dispatch_outbox", _dispatch_outbox)
register_collector("core.audit_chain", _audit_chain)
register_collector("core.celery_queue", _celery_queue)


def _scrape_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    if MULTIPROCESS_DIR:
        # lazy: multiprocess mode only when PROMETHEUS_MULTIPROC_DIR is set
        from prometheus_client.multiprocess import MultiProcessCollector

        MultiProcessCollector(registry, path=MULTIPROCESS_DIR)
    else:
        registry.register(REGISTRY)  # this process's instruments, plus process/platform/gc
    registry.register(_ScrapeCollectors())
    return registry


# -- access -----------------------------------------------------------------------------------
def _parse_networks(entries: Sequence[str]) -> tuple[list[ipaddress.IPv4Network | ipaddress.IPv6Network], list[str]]:
    networks, bad = [], []
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            bad.append(entry)
    return networks, bad


@lru_cache(maxsize=8)
def _allowed_networks(entries: tuple[str, ...]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks, bad = _parse_networks(entries)
    if bad:  # fail closed: a malformed entry admits nobody (manage.py check reports it)
        logger.error("ARIA_METRICS_ALLOWED_NETWORKS: ignoring invalid entries %s", bad)
    return networks


def client_in_allowed_network(request: HttpRequest) -> bool:
    """True for a request straight from an allowed address (never one relayed by a proxy)."""
    if any(request.headers.get(name) for name in FORWARDING_HEADERS):
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR") or "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    networks = _allowed_networks(tuple(settings.ARIA_METRICS_ALLOWED_NETWORKS))
    return any(address.version == network.version and address in network for network in networks)


def may_read_metrics(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return is_admin(user) or user.groups.filter(name=METRICS_SCOPE).exists()  # type: ignore[attr-defined]


def _refusal(request: HttpRequest) -> JsonResponse | None:
    """None when the request may read /metrics, else the 401/403 JSON answer."""
    unauthenticated = JsonResponse(
        {
            "detail": "Authentication required: a bearer token with the admin or metrics scope.",
            "code": "not_authenticated",
        },
        status=401,
        headers={"WWW-Authenticate": "Bearer"},
    )
    forbidden = JsonResponse(
        {"detail": "Requires scope: admin or metrics.", "code": "missing_scope"},
        status=403,
    )
    token = bearer_token(request)
    if token or request.headers.get("Authorization"):  # explicit credentials are judged, never bypassed
        user = user_for_token(token) if token else None
        if user is None:
            return unauthenticated
        return None if may_read_metrics(user) else forbidden
    user = getattr(request, "user", None)
    if may_read_metrics(user) or client_in_allowed_network(request):
        return None
    return forbidden if user is not None and user.is_authenticated else unauthenticated


def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: the Prometheus exposition (text format, or OpenMetrics when asked for)."""
    if request.method not in ("GET", "HEAD"):
        return JsonResponse(
            {"detail": "Method not allowed: use GET.", "code": "method_not_allowed"},
            status=405,
            headers={"Allow": "GET"},
        )
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
    return HttpResponse(encoder(_scrape_registry()), content_type=content_type)


@checks.register(checks.Tags.security)
def check_allowed_networks(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    _, bad = _parse_networks(getattr(settings, "ARIA_METRICS_ALLOWED_NETWORKS", []))
    return [
        checks.Error(
            f"ARIA_METRICS_ALLOWED_NETWORKS: {entry!r} is not an IP network (e.g. 10.0.0.0/8).", id="aria.metrics.E001"
        )
        for entry in bad
    ]
