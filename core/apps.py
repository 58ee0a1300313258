from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "ARIA kernel"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from core.private_files import protect_sqlite

        connection_created.connect(protect_sqlite, dispatch_uid="core.protect_sqlite")

        from core.sockets import connect_socket_receivers

        connect_socket_receivers()  # logout, revoked tokens, lost scopes close the user's sockets

        from core import receivers

        receivers.connect()  # a task runs in the correlation scope of the request that queued it
