"""The ASGI application moves what it loaded out of the garbage collector's walks (aria_project/asgi.py).

A full collection in a started server walked every object Django, the apps and the URL patterns
had loaded (≈ 220,000) and stalled every socket's deliveries for it; it falls due when many
objects are created at once, e.g. hundreds of sockets connecting. Checked in a fresh interpreter,
as the server starts: importing the application leaves those objects frozen (`gc.freeze()`), so
a full collection afterwards walks only what was created since.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json
import aria_project.asgi  # what uvicorn and runaria import
frozen = gc.get_freeze_count()
tracked_after = len(gc.get_objects())
gc.unfreeze()
print(json.dumps({"frozen": frozen, "tracked_after": tracked_after, "loaded": len(gc.get_objects())}))
"""


def test_starting_the_application_freezes_what_it_loaded():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["DJANGO_SETTINGS_MODULE"] = "aria_project.settings"
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=True
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    # Nearly everything loaded is frozen; the collector tracks next to nothing once started.
    assert figures["frozen"] > 50_000
    assert figures["tracked_after"] < figures["frozen"] / 100
    assert figures["frozen"] >= 0.9 * figures["loaded"]


def test_the_url_patterns_are_loaded_before_the_freeze():
    """The first request would otherwise load them after it, into the collector's walks."""
    probe = "import sys, aria_project.asgi; print('assistant.api.drafts' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "True"
