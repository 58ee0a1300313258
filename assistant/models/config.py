from django.db import models


class RuntimeConfig(models.Model):
    """The assistant's governance settings (one row): only an admin changes them (PATCH /config or
    the admin, through assistant.services.config.config_update, audited); engines rebuild."""

    data = models.JSONField(default=dict, blank=True)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return "Assistant runtime config"
