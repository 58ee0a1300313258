"""The Celery app. Tasks live in each app's tasks.py; the beat schedule is in settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

app = Celery("aria")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
