"""ARIA_ENV=production: refuses weak secrets and missing hosts, passes `check --deploy`, and serves
secure headers (HSTS, CSP) and cookies. Each case runs Django in a fresh subprocess."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = secrets.token_urlsafe(50)
GOOD_AUDIT_KEY = secrets.token_urlsafe(48)

HEADERS_PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
response = Client().get("/login/", secure=True, HTTP_HOST="aria.example.com")
cookie = response.cookies.get("csrftoken")
print(json.dumps({
    "status": response.status_code,
    "debug": settings.DEBUG,
    "hsts": response.headers.get("Strict-Transport-Security"),
    "csp": response.headers.get("Content-Security-Policy"),
    "nosniff": response.headers.get("X-Content-Type-Options"),
    "frame": response.headers.get("X-Frame-Options"),
    "csrf_cookie_secure": bool(cookie and cookie["secure"]),
    "session_cookie_secure": settings.SESSION_COOKIE_SECURE,
    "insecure_redirect": Client().get("/healthz", HTTP_HOST="aria.example.com").status_code,
}))
"""


def _run(args: list[str], tmp_path: Path, **env_overrides: str) -> subprocess.CompletedProcess[str]:
    unset = ("SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_DEBUG", "ARIA_AUDIT_KEY", "ARIA_AUDIT_PREVIOUS_KEYS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": str(tmp_path),
            "ARIA_ENV": "production",
            "PYTHONPATH": str(ROOT),
        }
    )
    env.update(env_overrides)
    env = {k: v for k, v in env.items() if v is not None and v != "<unset>"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_production_check_deploy_reports_no_issues(tmp_path: Path) -> None:
    result = _run(
        ["manage.py", "check", "--deploy"],
        tmp_path,
        SECRET_KEY=GOOD_KEY,
        ALLOWED_HOSTS="aria.example.com",
        ARIA_AUDIT_KEY=GOOD_AUDIT_KEY,
    )
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNINGS" not in result.stderr


def test_production_check_deploy_warns_when_the_audit_key_is_derived_from_secret_key(tmp_path: Path) -> None:
    result = _run(["manage.py", "check", "--deploy"], tmp_path, SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="aria.example.com")
    assert result.returncode == 0, result.stderr
    assert "(aria.audit.W001) ARIA_AUDIT_KEY is not set" in result.stderr
    assert GOOD_KEY not in result.stdout + result.stderr
    weak = _run(
        ["manage.py", "check", "--deploy"],
        tmp_path,
        SECRET_KEY=GOOD_KEY,
        ALLOWED_HOSTS="aria.example.com",
        ARIA_AUDIT_KEY=GOOD_KEY,
    )
    assert "(aria.audit.W002)" in weak.stderr and GOOD_KEY not in weak.stdout + weak.stderr


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("<unset>", "needs SECRET_KEY"),
        ("", "needs SECRET_KEY"),
        ("too-short-key", "not a production key"),
        ("django-insecure-" + secrets.token_urlsafe(50), "not a production key"),
        ("a" * 60, "not a production key"),
    ],
)
def test_production_rejects_weak_secret_keys(tmp_path: Path, key: str, hint: str) -> None:
    result = _run(["manage.py", "check"], tmp_path, SECRET_KEY=key, ALLOWED_HOSTS="aria.example.com")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and hint in result.stderr


@pytest.mark.parametrize("hosts", ["<unset>", "", " , "])
def test_production_requires_allowed_hosts(tmp_path: Path, hosts: str) -> None:
    result = _run(["manage.py", "check"], tmp_path, SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS=hosts)
    assert result.returncode != 0
    assert "needs ALLOWED_HOSTS" in result.stderr


def test_production_serves_secure_headers_and_cookies(tmp_path: Path) -> None:
    result = _run(["-c", HEADERS_PROBE], tmp_path, SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="aria.example.com")
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["status"] == 200
    assert probe["debug"] is False
    assert probe["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "default-src 'self'" in probe["csp"] and "frame-ancestors 'none'" in probe["csp"]
    assert "ws:" not in probe["csp"]  # production WebSockets are wss: only
    assert probe["nosniff"] == "nosniff" and probe["frame"] == "DENY"
    assert probe["csrf_cookie_secure"] is True and probe["session_cookie_secure"] is True
    assert probe["insecure_redirect"] == 301  # plain HTTP is redirected to HTTPS


def test_development_needs_no_secrets(tmp_path: Path) -> None:
    result = _run(["manage.py", "check"], tmp_path, ARIA_ENV="development", SECRET_KEY="<unset>")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "dev_secret_key").stat().st_mode & 0o777 == 0o600


def test_readme_documents_every_environment_variable() -> None:
    import re

    settings_source = (ROOT / "aria_project" / "settings.py").read_text()
    names = set(re.findall(r"""\.(?:str|bool|int|float|list|db)\(\s*["']([A-Z][A-Z0-9_]+)["']""", settings_source))
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ARIA_VAR_DIR"} <= names
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Environment variables") :]
    missing = sorted(name for name in names if f"`{name}`" not in table)
    assert not missing, f"README.md's environment table lacks {missing}"
