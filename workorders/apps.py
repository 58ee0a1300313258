from importlib import import_module
from importlib.util import find_spec

from django.apps import AppConfig


class WorkordersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workorders"
    offline_policies = "workorders.offline"  # the fake engine's stand-ins, imported only when it runs

    def ready(self) -> None:
        # Capabilities, signal receivers and the database checks register on import.
        for module in ("capabilities", "receivers", "checks"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
        # In ready(): these modules import the models, which cannot load while apps.py is imported.
        from workorders import events, metrics, reapers
        from workorders.services import handover, logbook

        events.register()  # work_order_updated, equipment_kb_updated
        logbook.register_events()  # logbook_entry_created
        handover.register_events()  # handover_updated
        reapers.register()  # the sweeper's re-drive of stranded orders (core.sweep)
        metrics.register()  # work orders by status, read at scrape time (core.metrics)
