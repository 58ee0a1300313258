from django.apps import AppConfig


class SentinelConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "sentinel"

    def ready(self) -> None:
        # Event types, capabilities and signal receivers register on import.
        from importlib import import_module
        from importlib.util import find_spec

        from sentinel.services.limits import register_events

        register_events()
        for module in ("capabilities", "receivers"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
