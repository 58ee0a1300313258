"""Test settings: the embedded defaults, with Celery tasks run in-process for the whole session.

Integration tests (marked `integration`) talk to a real worker with `send_task`, which never
runs eagerly. Each test session gets its own Celery queue and channel-layer prefix, so sessions
sharing one Redis never take each other's tasks or WebSocket messages.
"""

import os

from aria_project.settings import *  # noqa: F403
from aria_project.settings import CHANNEL_LAYERS, REDIS_URL

# The integration tests' real worker (tests/conftest.py: celery_worker) uses these settings too,
# without eager tasks and with the session name of the test run that started it.
ARIA_TEST_WORKER = os.environ.get("ARIA_TEST_WORKER") == "1"
CELERY_TASK_ALWAYS_EAGER = not ARIA_TEST_WORKER
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ARIA_ENGINE = "fake"
# Rate limits: generous for the suite (tests make many requests); tests/security lowers them with
# override_settings. The throttle cache is always this process' memory here (reset per test by
# tests/conftest.py), never a shared Redis whose clear() would flush other runs' data.
ARIA_RATES = {
    "chat": "10000/m",
    "coordinator": "10000/m",
    "draft_test": "10000/m",
    "draft_review": "10000/m",
    "plan_create": "10000/m",
}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "aria-test"}}

ARIA_TEST_SESSION = os.environ.get("ARIA_TEST_SESSION") or f"{os.uname().nodename}-{os.getpid()}"
CELERY_TASK_DEFAULT_QUEUE = f"aria-test-{ARIA_TEST_SESSION}"
if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"aria-test-{ARIA_TEST_SESSION}"
