from django.db import models


class RuntimeConfig(models.Model):
    """The assistant's runtime settings (one row); PATCH /config writes it, engines rebuild."""

    data = models.JSONField(default=dict, blank=True)
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return "Assistant runtime config"
