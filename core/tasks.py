"""Kernel tasks. `core.ping` proves a worker is alive end to end: broker → worker → database."""

from celery import shared_task

from core.audit import audit_record


@shared_task(name="core.ping", acks_late=True, soft_time_limit=10, time_limit=20)
def ping_task(token: str) -> str:
    """Append an audit record naming the token, so the caller can see the task ran."""
    audit_record(actor=None, action="core.ping", target_type="ping", target_id=token)
    return token
