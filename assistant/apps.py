from django.apps import AppConfig


class AssistantConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant"
    offline_policies = "assistant.offline"  # the fake engine's stand-ins, imported only when it runs

    def ready(self) -> None:
        # Capabilities and the published-prompt source register on import.
        from importlib import import_module
        from importlib.util import find_spec  # in ready(): the app registry is loaded

        from assistant.events import register  # in ready(): the app registry is loaded

        register()

        for module in (
            "capabilities",
            "draft_capabilities",
            "authoring_capabilities",
            "coordinator_capabilities",  # what the coordinator reads of drafts and reviews
            "receivers",
            "prompt_source",
            "checks",  # names stored before the slug rule (manage.py check --database default)
        ):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
