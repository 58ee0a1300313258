from django.apps import AppConfig


class OrchestratorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "orchestrator"

    def ready(self) -> None:
        # Capabilities and signal receivers register on import.
        from importlib import import_module
        from importlib.util import find_spec

        for module in ("capabilities", "receivers"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
