"""Demo seeding: core seeds users; every installed app with a `seed` module seeds its own data.

Each app's `seed.seed(stdout)` must be idempotent.
"""

from importlib import import_module

from django.apps import apps
from django.utils.module_loading import module_has_submodule


def seed_all_apps(stdout) -> None:
    for config in apps.get_app_configs():
        if config.name != "core" and module_has_submodule(config.module, "seed"):
            import_module(f"{config.name}.seed").seed(stdout)
