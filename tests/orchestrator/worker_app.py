"""The Celery app for integration tests' worker subprocess: ARIA's app plus the test capabilities."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")

import django

django.setup()

from aria_project.celery import app  # noqa: E402
from tests.orchestrator import testcaps  # noqa: E402, F401  (registers the otest.* capabilities)

__all__ = ["app"]
