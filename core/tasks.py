"""Kernel tasks. `core.ping` proves a worker is alive end to end: broker → worker → database;
`core.sweep` re-drives stranded work; `core.relay_dispatch` delivers the dispatch outbox."""

from celery import shared_task

from core.audit import audit_record
from core.dispatch import dispatch_relay
from core.sweep import sweep


@shared_task(name="core.ping", acks_late=True, soft_time_limit=10, time_limit=20)
def ping_task(token: str) -> str:
    """Append an audit record naming the token, so the caller can see the task ran."""
    audit_record(actor=None, action="core.ping", target_type="ping", target_id=token)
    return token


@shared_task(name="core.sweep", acks_late=True, soft_time_limit=120, time_limit=150)
def sweep_task() -> dict[str, int]:
    """Re-drive or end work stuck past its deadline (every registered reaper, bounded batches)."""

    return sweep()


@shared_task(name="core.relay_dispatch", acks_late=True, soft_time_limit=60, time_limit=90)
def relay_dispatch_task() -> int:
    """Deliver dispatch intents still unsent (broker was down, or recorded by another process)."""

    return dispatch_relay()
