"""The Celery app. Tasks live in each app's tasks.py; the beat schedule is in settings."""

import logging
import os

from celery import Celery
from celery.signals import setup_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

app = Celery("aria")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def use_django_logging(loglevel: int | str | None = None, **kwargs) -> None:
    """`celery worker/beat -l LEVEL`: keep Django's LOGGING (its handlers and the plain or JSON
    format) and apply the level to root and `celery`, which settings keep at WARNING for the web
    process. So `-l info` shows tasks received / succeeded (with ids and run times) and beat's
    due tasks, in the same format as every other line."""
    if loglevel is None:
        return
    level = logging.getLevelName(loglevel) if isinstance(loglevel, int) else str(loglevel).upper()
    logging.getLogger().setLevel(level)
    logging.getLogger("celery").setLevel(level)
