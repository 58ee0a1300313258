from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "ARIA kernel"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created  # in ready(): the app registry is loaded

        from core.private_files import protect_sqlite  # in ready(): the app registry is loaded

        connection_created.connect(protect_sqlite, dispatch_uid="core.protect_sqlite")

        from core.sockets import connect_socket_receivers  # in ready(): the app registry is loaded

        connect_socket_receivers()  # logout, revoked tokens, lost scopes close the user's sockets

        from core import receivers  # in ready(): the app registry is loaded

        receivers.connect()  # a task runs in the correlation scope of the request that queued it

        from core import audit_digest  # noqa: F401  # registers the audit key's deploy check
