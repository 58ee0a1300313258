from django.apps import AppConfig


class OrchestratorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "orchestrator"
    offline_policies = "orchestrator.offline"  # the fake engine's stand-ins, imported only when it runs

    def ready(self) -> None:
        # Capabilities and event types register on import.
        from importlib import import_module
        from importlib.util import find_spec  # in ready(): the app registry is loaded

        from orchestrator import events  # in ready(): the app registry is loaded

        events.register()
        for module in ("capabilities", "receivers"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
        from orchestrator import reapers  # the sweeper's re-drive of lost plan work (core.sweep)

        reapers.register()
