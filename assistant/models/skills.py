from django.db import models

from assistant.choices import SkillRuntimeMode


class Skill(models.Model):
    """Instructions the authoring assistant adds to a turn when selected (auto) or always (pinned)."""

    name = models.CharField(max_length=100, unique=True)
    description = models.CharField(max_length=300, blank=True)
    instructions = models.TextField()
    runtime_mode = models.CharField(max_length=16, choices=SkillRuntimeMode.choices, default=SkillRuntimeMode.AUTO)
    triggers = models.JSONField(default=list, blank=True)  # keywords matched against the turn
    version = models.PositiveIntegerField(default=1)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} v{self.version} ({self.runtime_mode})"
