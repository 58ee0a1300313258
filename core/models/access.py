import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone


class ServiceAccount(models.Model):
    """Marks a user as a service principal (reviewer, release, system) rather than a person."""

    class Role(models.TextChoices):
        REVIEWER = "reviewer", "Reviewer"
        RELEASE = "release", "Release"
        SYSTEM = "system", "System"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="service_account")
    role = models.CharField(max_length=20, choices=Role.choices)
    description = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


class ApiToken(models.Model):
    """A bearer token. Only the SHA-256 of the secret is stored; the secret is shown once."""

    PREFIX = "aria_"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_prefix = models.CharField(max_length=16, db_index=True, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def hash_key(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @classmethod
    def generate_key(cls) -> str:
        return cls.PREFIX + secrets.token_urlsafe(32)

    def revoke(self) -> None:
        self.revoked_at = timezone.now()
        self.save(update_fields=["revoked_at"])
