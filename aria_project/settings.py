"""ARIA settings: everything comes from the environment (django-environ).

With nothing set, ARIA runs embedded: SQLite under var/, the in-memory channel layer and the
in-memory Celery broker with the worker and beat inside the web process. With DATABASE_URL and
REDIS_URL set it runs on PostgreSQL + Redis with separate worker and beat processes.
"""

from pathlib import Path

import environ

from aria_project.secrets import development_secret_key
from aria_project.security import production_allowed_hosts, production_secret_key
from core.private_files import private_dir

BASE_DIR = Path(__file__).resolve().parent.parent
# Owner-only (0700): the SQLite database (made 0600 on connect, core.private_files), secrets.
VAR_DIR = private_dir(Path(environ.Env().str("ARIA_VAR_DIR", default=str(BASE_DIR / "var"))))

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

ARIA_ENV = env.str("ARIA_ENV", default="development")
PRODUCTION = ARIA_ENV == "production"
DEBUG = env.bool("DJANGO_DEBUG", default=not PRODUCTION)

if PRODUCTION:
    SECRET_KEY = production_secret_key(env.str("SECRET_KEY", default=""))
    ALLOWED_HOSTS = production_allowed_hosts(env.list("ALLOWED_HOSTS", default=[]))
else:
    SECRET_KEY = env.str("SECRET_KEY", default="") or development_secret_key(VAR_DIR)
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# The audit chain's HMAC key (core/audit_digest.py), kept outside the database. Unset: derived from
# SECRET_KEY for this purpose only (development; `check --deploy` warns, aria.audit.W001). Previous
# keys (comma-separated) still verify records and the head after a rotation, never seal.
ARIA_AUDIT_KEY = env.str("ARIA_AUDIT_KEY", default="")
ARIA_AUDIT_PREVIOUS_KEYS = env.list("ARIA_AUDIT_PREVIOUS_KEYS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "csp",
    "ninja",  # serves the API docs' Swagger UI from static files (no CDN, CSP-friendly)
    "axes",  # login lockout after repeated failures (see "Rate limits" below)
    "core",
    "sentinel",
    "workorders",
    "assistant",
    "orchestrator",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.request_limits.ApiRequestLimitsMiddleware",  # API bodies: size and JSON depth, before any parsing
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its response
]

# API request bodies (core.request_limits): JSON size and nesting depth, multipart upload size.
ARIA_API_MAX_BODY_BYTES = env.int("ARIA_API_MAX_BODY_BYTES", default=2 * 1024 * 1024)
ARIA_API_MAX_JSON_DEPTH = env.int("ARIA_API_MAX_JSON_DEPTH", default=64)
ARIA_API_MAX_UPLOAD_BYTES = env.int("ARIA_API_MAX_UPLOAD_BYTES", default=64 * 1024 * 1024)
# Django's own cap on a body read into memory must not undercut the API's.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(2_621_440, ARIA_API_MAX_BODY_BYTES)

ROOT_URLCONF = "aria_project.urls"
ASGI_APPLICATION = "aria_project.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'aria.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )
elif env.int("DB_POOL_MAX_SIZE", default=10) > 0:
    # Under ASGI each request runs in a fresh thread, so per-thread persistent connections would
    # pile up until PostgreSQL refuses more: connections come from psycopg's pool instead.
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # required with a pool
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env.int("DB_POOL_MAX_SIZE", default=10),
        "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
    }
else:  # DB_POOL_MAX_SIZE=0, e.g. behind PgBouncer: one connection per request
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channel layer and Celery broker ---------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
# The longest task hard time limit (orchestrator.execute_plan); tests/core/test_reliability_settings
# checks every registered task stays within it.
ARIA_LONGEST_TASK_SECONDS = 960
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "core.channel_layer.RedisChannelLayer",  # receive that ends when cancelled
            # redis-py 8 defaults socket_timeout to 5 s, the same as channels-redis' blocking
            # BZPOPMIN: an idle consumer's read would time out and kill the socket (1011).
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}], "capacity": 5000, "expiry": 30},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # acks_late: a message is unacked while its task runs. Redis re-delivers an unacked message
    # after visibility_timeout, so it must outlast the longest task (kombu's default is 3600 s,
    # an hour of "investigating"); the sweeper (core.sweep) re-drives sooner via leases.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": ARIA_LONGEST_TASK_SECONDS + 300}
    # One beat publishes: the others stand by on a Redis leader lease (core/beat.py) and take
    # over within its TTL when the leader dies.
    CELERY_BEAT_SCHEDULER = "core.beat:LeaderScheduler"
    ARIA_BEAT_LOCK_TTL_SECONDS = env.float("ARIA_BEAT_LOCK_TTL_SECONDS", default=30.0)
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 5000}}}
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {"polling_interval": 0.1}  # the in-process queue: pick up tasks fast
# `manage.py runaria` binds here.
ARIA_HOST = env.str("ARIA_HOST", default="127.0.0.1")
ARIA_PORT = env.int("ARIA_PORT", default=8000)
# Embedded: the web process runs the Celery worker and beat in threads (no broker to share).
ARIA_EMBEDDED_WORKER = env.bool("ARIA_EMBEDDED_WORKER", default=not REDIS_URL)
# The Celery app runaria embeds: the kernel finds it here (as ASGI_APPLICATION), never imports the project.
ARIA_CELERY_APP = "aria_project.celery.app"

CELERY_TASK_ALWAYS_EAGER = env.bool("ARIA_CELERY_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = env.str("CELERY_BEAT_SCHEDULE_FILENAME", default=str(VAR_DIR / "celerybeat-schedule"))

ARIA_SENTINEL_INTERVAL = env.float("ARIA_SENTINEL_INTERVAL", default=5.0)
# Alarms on one cell within this many seconds of the first are one process upset: one work order.
ARIA_ALARM_EPISODE_SECONDS = env.float("ARIA_ALARM_EPISODE_SECONDS", default=600.0)
# How often a process re-checks the published tools/MCP servers stamp (core.capabilities.refresh_registry).
ARIA_REGISTRY_REFRESH_SECONDS = env.float("ARIA_REGISTRY_REFRESH_SECONDS", default=2.0)
ARIA_PLAN_POLL_INTERVAL = env.float("ARIA_PLAN_POLL_INTERVAL", default=10.0)
# A plan step left `running` longer than this is taken over (its worker is presumed dead).
ARIA_PLAN_STEP_LEASE_SECONDS = env.float("ARIA_PLAN_STEP_LEASE_SECONDS", default=300.0)
# Work leases held while work runs (investigations, generations, plan steps) are renewed every
# TTL/3; a holder that dies on any host frees its work within this TTL (core.leases.lease_hold).
ARIA_LEASE_TTL_SECONDS = env.float("ARIA_LEASE_TTL_SECONDS", default=45.0)
# /ws/events consumers re-read the outbox this often (0 = off): events that missed the fast path.
ARIA_EVENTS_TAIL_SECONDS = env.float("ARIA_EVENTS_TAIL_SECONDS", default=2.0)
# The sweeper (core.sweep): work stuck this long past its deadline is re-driven or ended.
ARIA_SWEEP_INTERVAL = env.float("ARIA_SWEEP_INTERVAL", default=15.0)
ARIA_SWEEP_GRACE_SECONDS = env.float("ARIA_SWEEP_GRACE_SECONDS", default=30.0)
ARIA_STRANDED_AFTER_SECONDS = env.float("ARIA_STRANDED_AFTER_SECONDS", default=60.0)
# The dispatch outbox relay (core.relay_dispatch): often in embedded mode, where a second
# process (shell, simulate) hands its follow-up work to this one through the database.
ARIA_DISPATCH_RELAY_INTERVAL = env.float("ARIA_DISPATCH_RELAY_INTERVAL", default=5.0 if REDIS_URL else 1.0)
# History (docs/HISTORY.md): raw samples kept this many days (per signal kind by key pattern, e.g.
# "vibration_*=90,temperature_*=7"); on PostgreSQL partitions of this many hours, created this
# many days ahead; rollups kept longer (0 = forever); how often the rollup and upkeep run.
ARIA_HISTORY_RETENTION_DAYS = env.int("ARIA_HISTORY_RETENTION_DAYS", default=30)
ARIA_HISTORY_RETENTION_DAYS_BY_KIND = env.dict("ARIA_HISTORY_RETENTION_DAYS_BY_KIND", cast={"value": int}, default={})
ARIA_HISTORY_PARTITION_HOURS = env.int("ARIA_HISTORY_PARTITION_HOURS", default=24)
ARIA_HISTORY_PARTITIONS_AHEAD_DAYS = env.int("ARIA_HISTORY_PARTITIONS_AHEAD_DAYS", default=3)
ARIA_HISTORY_MINUTE_ROLLUP_RETENTION_DAYS = env.int("ARIA_HISTORY_MINUTE_ROLLUP_RETENTION_DAYS", default=90)
ARIA_HISTORY_HOUR_ROLLUP_RETENTION_DAYS = env.int("ARIA_HISTORY_HOUR_ROLLUP_RETENTION_DAYS", default=730)
ARIA_HISTORY_ROLLUP_INTERVAL = env.float("ARIA_HISTORY_ROLLUP_INTERVAL", default=30.0)
ARIA_HISTORY_ROLLUP_BATCH_MINUTES = env.int("ARIA_HISTORY_ROLLUP_BATCH_MINUTES", default=240)
ARIA_HISTORY_UPKEEP_INTERVAL = env.float("ARIA_HISTORY_UPKEEP_INTERVAL", default=3600.0)
# Each scan round fans out into this many cell groups (scan-bucket ranges), one task each: set it to the
# number of worker processes that should scan side by side (1 = one task scans everything).
ARIA_SCAN_GROUPS = env.int("ARIA_SCAN_GROUPS", default=1)
# Samples a connector keeps to retry while the database refuses them; beyond, the oldest are dropped.
ARIA_CONNECTOR_BACKLOG = env.int("ARIA_CONNECTOR_BACKLOG", default=100_000)
# Database connections a connector stores its samples over, split by signal (PostgreSQL; 1 = one).
ARIA_CONNECTOR_INGEST_LANES = env.int("ARIA_CONNECTOR_INGEST_LANES", default=1)
# One beat entry per periodic job; the apps own the tasks, the composition root owns the schedule.
CELERY_BEAT_SCHEDULE = {
    "sentinel-scan": {"task": "sentinel.scan", "schedule": ARIA_SENTINEL_INTERVAL},
    "orchestrator-poll-jobs": {"task": "orchestrator.poll_jobs", "schedule": ARIA_PLAN_POLL_INTERVAL},
    "assistant-expire-runs": {"task": "assistant.expire_stale_runs", "schedule": 60.0},
    "core-sweep": {"task": "core.sweep", "schedule": ARIA_SWEEP_INTERVAL},
    "core-relay-dispatch": {"task": "core.relay_dispatch", "schedule": ARIA_DISPATCH_RELAY_INTERVAL},
    "sentinel-history-rollup": {"task": "sentinel.history_rollup", "schedule": ARIA_HISTORY_ROLLUP_INTERVAL},
    "sentinel-history-upkeep": {"task": "sentinel.history_upkeep", "schedule": ARIA_HISTORY_UPKEEP_INTERVAL},
}

# --- Engines ----------------------------------------------------------------------------------
ARIA_ENGINE = env.str("ARIA_ENGINE", default="auto")
ARIA_MODEL = env.str("ARIA_MODEL", default="")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="") or None
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
OLLAMA_HOST = env.str("OLLAMA_HOST", default="")
ARIA_MODELS = {
    "extraction": env.str("ARIA_MODEL_EXTRACTION", default="claude-haiku-4-5"),
    "vision": env.str("ARIA_MODEL_VISION", default="claude-sonnet-4-6"),
    "reasoning": env.str("ARIA_MODEL_REASONING", default="claude-sonnet-4-6"),
    "chat": env.str("ARIA_MODEL_CHAT", default="claude-sonnet-4-6"),
    "opus": env.str("ARIA_MODEL_OPUS", default="claude-opus-4-8"),
}

# --- Sandbox for untrusted code (docs/SANDBOX.md) ---------------------------------------------
ARIA_SANDBOX_BWRAP = env.str("ARIA_SANDBOX_BWRAP", default="bwrap")
# Development only: run draft/published tools and stdio MCP servers UNISOLATED when bwrap is unusable.
ARIA_SANDBOX_ALLOW_UNISOLATED = env.bool("ARIA_SANDBOX_ALLOW_UNISOLATED", default=False)
# Extra read-only paths a sandboxed stdio MCP server may see (where the admin installed servers).
ARIA_SANDBOX_READ_ONLY_PATHS = env.list("ARIA_SANDBOX_READ_ONLY_PATHS", default=[])
# Hosts (or host:port) HTTP MCP servers may be reached at; empty = HTTP MCP servers refused.
ARIA_MCP_HTTP_ALLOWED_HOSTS = env.list("ARIA_MCP_HTTP_ALLOWED_HOSTS", default=[])

# --- Auth, sessions, security -----------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "control-room"
LOGOUT_REDIRECT_URL = "login"

# --- Rate limits, model budget, login lockout (core/throttling.py, core/sockets.py) ------------
# The throttles' counters live in Django's cache: Redis when REDIS_URL is set (shared by every
# web process), else this process' memory (embedded mode is one process).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "aria"}}
# Per user and scope, "<count>/<s|m|h|d>" (django-ninja's rate format); "off" disables a scope.
ARIA_RATES = {
    "chat": env.str("ARIA_RATE_CHAT", default="20/m"),  # chat + session turns, REST and WebSocket
    "coordinator": env.str("ARIA_RATE_COORDINATOR", default="10/m"),  # coordinator route + coordinate mode
    "draft_test": env.str("ARIA_RATE_DRAFT_TEST", default="10/m"),
    "draft_review": env.str("ARIA_RATE_DRAFT_REVIEW", default="5/m"),  # agent reviews: a model call each
    "plan_create": env.str("ARIA_RATE_PLAN_CREATE", default="20/m"),
}
# Model tokens (input + output) per user per day on a real provider; 0 = no budget. Fake engine exempt.
ARIA_DAILY_TOKEN_BUDGET = env.int("ARIA_DAILY_TOKEN_BUDGET", default=200_000)
# Open sockets re-validate their session/token and scopes this often (0 = only on events/frames).
ARIA_SOCKET_RECHECK_SECONDS = env.float("ARIA_SOCKET_RECHECK_SECONDS", default=60.0)
# /metrics without a token: requests straight from these networks (core.metrics; never via a proxy).
ARIA_METRICS_ALLOWED_NETWORKS = env.list("ARIA_METRICS_ALLOWED_NETWORKS", default=["127.0.0.1/32"])
# django-axes: after this many failed sign-ins for one username from one address, that pair is
# locked out for the cool-off (an admin can reset it under Axes in the admin).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("ARIA_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("ARIA_LOGIN_COOLOFF_MINUTES", default=15.0) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "core.views.login_lockout"

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CSP_DIRECTIVES = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'", "ws:", "wss:"],
    "frame-ancestors": ["'none'"],
}
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    CSP_DIRECTIVES["connect-src"] = ["'self'", "wss:"]

CONTENT_SECURITY_POLICY = {"DIRECTIVES": CSP_DIRECTIVES}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.str("STATIC_ROOT", default=str(BASE_DIR / "static_collected"))
MEDIA_ROOT = env.str("MEDIA_ROOT", default=str(VAR_DIR / "media"))
MEDIA_URL = "media/"

ARIA_LOG_FORMAT = env.str("ARIA_LOG_FORMAT", default="plain")
if ARIA_LOG_FORMAT not in ("plain", "json"):
    raise ValueError(f"ARIA_LOG_FORMAT must be plain or json, not {ARIA_LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        # ARIA_LOG_FORMAT=json: one JSON object per line (timestamp, level, logger, message, extras).
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(process)d %(threadName)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": ARIA_LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Listing "django" drops the handlers Django's DEFAULT_LOGGING gave it (a plain console
        # handler while DEBUG): its records propagate to root only, so each is printed once.
        "django": {"level": "INFO"},
        "django.server": {"propagate": True},
        "daphne": {"level": "WARNING"},
        # Quiet in the web process (embedded worker); `celery worker/beat -l info` lowers it
        # (aria_project/celery.py).
        "celery": {"level": "WARNING"},
        # Logs "Terminating session: None" at INFO on every stateless MCP request.
        "mcp.server.streamable_http": {"level": "WARNING"},
    },
}
