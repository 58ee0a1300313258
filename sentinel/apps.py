from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable, Mapping
from typing import Any

from django.apps import AppConfig

from core.background import BackgroundService, ThreadService, register_background_service


def add_simulator_arguments(parser: ArgumentParser) -> None:
    """`manage.py runaria`'s flags for the demo simulator."""
    parser.add_argument("--scenario", default=None, help="Simulator scenario, e.g. p02-bearing.")
    parser.add_argument("--no-simulator", action="store_true", help="Do not run the demo simulator.")
    parser.add_argument(
        "--via",
        choices=["service", "mqtt"],
        default="service",
        help="mqtt: the simulator publishes to the broker at ARIA_MQTT_URL and the demo connector ingests it.",
    )


def build_simulator(options: Mapping[str, Any], log: Callable[[str], None]) -> BackgroundService | None:
    """The demo simulator as a runaria background service; ValueError for an unknown scenario."""
    if options.get("no_simulator"):
        return None
    from sentinel.simulator import Simulator  # in ready() / background services: the app registry is loaded

    simulator = Simulator(scenario=options.get("scenario"), log=log, via=options.get("via") or "service")
    return ThreadService("simulator", simulator.run)


def add_connector_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("--no-connectors", action="store_true", help="Do not run the plant connectors.")


def build_connectors(options: Mapping[str, Any], log: Callable[[str], None]) -> BackgroundService | None:
    """The enabled connectors (admin › Connectors) in a thread; with `--via mqtt` the demo MQTT
    connector is switched on first."""
    if options.get("no_connectors"):
        return None
    # in ready() / background services: the app registry is loaded
    from sentinel.connectors.supervisor import ConnectorSupervisor

    if options.get("via") == "mqtt":
        from sentinel.seed import demo_connector_enable  # in ready() / background services: the app registry is loaded

        demo_connector_enable(log)
    return ThreadService("connectors", ConnectorSupervisor(log=log).run)


class SentinelConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "sentinel"

    def ready(self) -> None:
        # Event types, capabilities and signal receivers register on import.
        from importlib import import_module
        from importlib.util import find_spec  # in ready() / background services: the app registry is loaded

        # in ready() / background services: the app registry is loaded
        from sentinel.services._common import register_alarm_events
        from sentinel.services.limits import register_events

        register_events()
        register_alarm_events()
        from sentinel import metrics  # in ready() / background services: the app registry is loaded

        metrics.register()  # open alarms by state, read at scrape time (core.metrics)
        for module in ("capabilities", "receivers", "history.tasks"):
            if find_spec(f"{self.name}.{module}"):
                import_module(f"{self.name}.{module}")
        register_background_service(
            "simulator",
            build=build_simulator,
            add_arguments=add_simulator_arguments,
            standalone_command="python manage.py simulate",
        )
        register_background_service(
            "connectors",
            build=build_connectors,
            add_arguments=add_connector_arguments,
            standalone_command="python manage.py run_connectors",
        )
