"""Production guards: settings that must be real before ARIA_ENV=production will start."""

from django.core.exceptions import ImproperlyConfigured

MIN_SECRET_KEY_LENGTH = 50


def production_secret_key(value: str) -> str:
    """The SECRET_KEY, if it is a real one (the same bar as Django's security.W009)."""
    if not value:
        raise ImproperlyConfigured("ARIA_ENV=production needs SECRET_KEY to be set.")
    if value.startswith("django-insecure") or len(value) < MIN_SECRET_KEY_LENGTH or len(set(value)) < 5:
        raise ImproperlyConfigured(
            f"SECRET_KEY is not a production key: use at least {MIN_SECRET_KEY_LENGTH} random characters, e.g. "
            '`python -c "import secrets; print(secrets.token_urlsafe(50))"`.'
        )
    return value


def production_allowed_hosts(hosts: list[str]) -> list[str]:
    """ALLOWED_HOSTS must name the host(s) ARIA is served under."""
    hosts = [host.strip() for host in hosts if host.strip()]
    if not hosts:
        raise ImproperlyConfigured("ARIA_ENV=production needs ALLOWED_HOSTS (comma-separated host names).")
    return hosts
