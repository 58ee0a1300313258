"""Test settings: the embedded defaults, with Celery tasks run in-process for the whole session.

Integration tests (marked `integration`) talk to a real worker with `send_task`, which never
runs eagerly.
"""

from aria_project.settings import *  # noqa: F403

CELERY_TASK_ALWAYS_EAGER = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ARIA_ENGINE = "fake"
