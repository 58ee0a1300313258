"""Celery signal receivers of the kernel: a task runs in the correlation scope of the message
that started it (`core.dispatch` puts the recording request's id in a header)."""

from __future__ import annotations

from typing import Any

from celery import Task
from celery.signals import task_postrun, task_prerun

from core.agents.correlation import current_correlation_id
from core.dispatch import CORRELATION_HEADER

_TOKEN = "_aria_correlation_token"


def _header(task: Task) -> str:
    request = task.request
    # A worker puts custom headers on the request; an eager call keeps them in `headers`.
    value = getattr(request, CORRELATION_HEADER, None) or (request.headers or {}).get(CORRELATION_HEADER)
    return str(value or "")[:64]


def enter_correlation(task: Task | None = None, **_: Any) -> None:
    if task is None or not (correlation_id := _header(task)):
        return
    setattr(task.request, _TOKEN, current_correlation_id.set(correlation_id))


def leave_correlation(task: Task | None = None, **_: Any) -> None:
    if task is None or (token := getattr(task.request, _TOKEN, None)) is None:
        return
    current_correlation_id.reset(token)
    setattr(task.request, _TOKEN, None)


def connect() -> None:
    task_prerun.connect(enter_correlation, dispatch_uid="core.enter_correlation", weak=False)
    task_postrun.connect(leave_correlation, dispatch_uid="core.leave_correlation", weak=False)
