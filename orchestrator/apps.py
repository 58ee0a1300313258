from django.apps import AppConfig


class OrchestratorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "orchestrator"

    def ready(self) -> None:
        # Capabilities, event types and the planner's fake policy register on import.
        from importlib import import_module
        from importlib.util import find_spec

        from orchestrator import events

        events.register()
        import_module("orchestrator.planning.fake_policies")
        import_module("orchestrator.coordinator.fake_gateway")
        for module in ("capabilities", "receivers"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
        from orchestrator import reapers  # the sweeper's re-drive of lost plan work (core.sweep)

        reapers.register()
