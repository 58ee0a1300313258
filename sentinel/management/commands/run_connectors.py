"""`manage.py run_connectors`: run every enabled connector (MQTT, Sparkplug B, OPC UA) until stopped."""

import signal
import threading

from django.core.management.base import BaseCommand

from sentinel.connectors.supervisor import ConnectorSupervisor


class Command(BaseCommand):
    help = "Run the plant connectors configured in the admin (Sentinel › Connectors)."

    def handle(self, *args, **options):
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        supervisor = ConnectorSupervisor(log=lambda message: self.stdout.write(message))
        try:
            supervisor.run(stop)
        except KeyboardInterrupt:
            stop.set()
        self.stdout.write("connectors: stopped")
