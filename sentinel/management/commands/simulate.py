"""`manage.py simulate [--scenario p02-bearing] [--interval 1] [--once]`: feed the demo plant."""

import threading

from django.core.management.base import BaseCommand, CommandError

from sentinel.simulator import SCENARIOS, Simulator


class Command(BaseCommand):
    help = "Feed realistic noisy samples for every enabled signal of the onboarded demo cells."

    def add_arguments(self, parser):
        parser.add_argument("--scenario", choices=sorted(SCENARIOS), help="Bend some signals (e.g. p02-bearing).")
        parser.add_argument("--interval", type=float, default=1.0, help="Seconds between samples (default 1).")
        parser.add_argument("--once", action="store_true", help="Send one round of samples and exit.")
        parser.add_argument(
            "--ramp-seconds", type=float, default=None, help="Scenario ramp duration (0 = jump to the end state)."
        )
        parser.add_argument("--seed", type=int, default=None, help="Random seed for reproducible noise.")
        parser.add_argument(
            "--via",
            choices=["service", "mqtt"],
            default="service",
            help="mqtt: publish to ARIA_MQTT_URL for the demo connector instead of calling the ingest service.",
        )

    def handle(self, *args, **options):
        if options["interval"] <= 0:
            raise CommandError("--interval must be positive")
        simulator = Simulator(
            scenario=options["scenario"],
            interval=options["interval"],
            ramp_seconds=options["ramp_seconds"],
            seed=options["seed"],
            via=options["via"],
            log=lambda message: self.stdout.write(message),
        )
        stop = threading.Event()
        try:
            simulator.run(stop, once=options["once"])
        except KeyboardInterrupt:
            stop.set()
        self.stdout.write(f"simulate: {simulator.ticks} round(s) of {len(simulator.channels)} signals sent")
