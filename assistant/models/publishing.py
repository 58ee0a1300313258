from django.conf import settings
from django.db import models

from assistant.choices import DraftType


class PromptVersion(models.Model):
    """An immutable published prompt text; agents reach it through an alias."""

    name = models.CharField(max_length=100, db_index=True)  # the agent it is for, e.g. "investigator"
    version = models.PositiveIntegerField()
    text = models.TextField()
    variables = models.JSONField(default=list, blank=True)
    draft = models.ForeignKey("assistant.Draft", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="prompt_version_unique")]

    def __str__(self) -> str:
        return f"{self.name}@v{self.version}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValueError("Prompt versions are immutable; publish a new version.")
        super().save(*args, **kwargs)


class PromptAlias(models.Model):
    """A movable name (`production`) pointing at one version; rollback moves it back."""

    name = models.CharField(max_length=100)
    alias = models.CharField(max_length=50, default="production")
    version = models.ForeignKey(PromptVersion, on_delete=models.PROTECT, related_name="aliases")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "prompt aliases"
        ordering = ["name", "alias"]
        constraints = [models.UniqueConstraint(fields=["name", "alias"], name="prompt_alias_unique")]

    def __str__(self) -> str:
        return f"{self.name}:{self.alias} → v{self.version.version}"


class PublishedArtifact(models.Model):
    type = models.CharField(max_length=20, choices=DraftType.choices)
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    spec = models.JSONField(default=dict)
    content_hash = models.CharField(max_length=64, blank=True)
    draft = models.ForeignKey("assistant.Draft", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    active = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["type", "name", "-version"]
        constraints = [models.UniqueConstraint(fields=["type", "name", "version"], name="artifact_version_unique")]

    def __str__(self) -> str:
        return f"{self.type} {self.name}@v{self.version}"
