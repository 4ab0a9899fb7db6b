"""The service's own settings: Django, database, cache, Celery, security, the API, health."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from whitenoise.compress import Compressor

from config.settings.database import primary_tuned
from config.settings.replica import replica_database
from core.env import (
    env_bool,
    env_int,
    env_list,
    env_rate,
    env_secret,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    key = env_secret("SECRET_KEY")
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured("Set SECRET_KEY (or SECRET_KEY_FILE) when DEBUG is off.")
    # Development only: a random key generated once into an ignored file.
    path = BASE_DIR / ".secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()


def _field_encryption_keys() -> list[str]:
    """FIELD_ENCRYPTION_KEY: comma-separated, the first encrypts and all decrypt
    (core/encryption.py; rotation in docs/settings.md)."""
    keys = [key.strip() for key in (env_secret("FIELD_ENCRYPTION_KEY") or "").split(",") if key.strip()]
    if not keys:
        if not DEBUG:
            raise ImproperlyConfigured(
                "Set FIELD_ENCRYPTION_KEY (or FIELD_ENCRYPTION_KEY_FILE) when DEBUG is off: it encrypts webhook "
                "signing secrets and authenticator keys at rest. Generate one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'."
            )
        return [SECRET_KEY]  # development only: about/notices.py says so
    if short := [n for n, key in enumerate(keys, start=1) if len(key) < 32]:
        raise ImproperlyConfigured(
            f"FIELD_ENCRYPTION_KEY: key {short[0]} is shorter than 32 characters; use a long random string."
        )
    return keys


FIELD_ENCRYPTION_KEYS = _field_encryption_keys()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
BASE_URL = env_str("BASE_URL", "http://127.0.0.1:8000").rstrip("/")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [BASE_URL])

INSTALLED_APPS = [
    "accounts.admin_apps.AccountAdminConfig",  # django.contrib.admin behind the account sign-in
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_otp",  # its TOTP device is accounts.TotpDevice (the key encrypted at rest)
    "accounts",
    "payments",
    "fees",
    "drafts",
    "paylinks",
    "refunds",
    "attention",
    "notifications",
    "webhooks",
    "chainwatch",
    "dashboard",
    "addressbook",
    "wallets",
    "suggestions",
    "recurring",
    "demo",
    "about",
    "audit",
    "core.apps.CoreConfig",  # last: its ready() runs after every other app has imported what it needs
]

MIDDLEWARE = [
    "core.requests.RequestIdMiddleware",
    "audit.context.AuditContextMiddleware",  # who acts, for the audit log: no one until authenticated
    "core.metrics.RequestMetricsMiddleware",  # counts by URL pattern name and status (/metrics)
    "core.api.problems.ApiProblemMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, CSRF, user and messages middleware, skipped by a call that names an API
    # key (accounts/middleware.py).
    "accounts.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "accounts.middleware.CsrfViewMiddleware",
    "accounts.middleware.AuthenticationMiddleware",
    # With a read replica: whose reads these are, and a writing caller's WAL position (core/replica.py)
    "core.replica.ReplicaCallerMiddleware",
    # Pages: the authorization table's rule before the view (REST: accounts.permissions.HasScope)
    "accounts.middleware.AuthorizationMiddleware",
    # After authentication: the dashboard speaks the account's language (accounts/languages.py)
    "accounts.languages.LanguageMiddleware",
    "accounts.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.context.navigation",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
# Embedded default: a SQLite file. Production and tests: DATABASE_URL=postgres://...
DATABASES = {
    "default": dj_database_url.parse(
        env_secret("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        # A kept connection that died while idle (database restarted, network cut) is noticed
        # before its next use and replaced, in web requests and Celery tasks alike.
        conn_health_checks=True,
    )
}
DATABASE_TRANSACTION_POOLER = env_bool("DATABASE_TRANSACTION_POOLER", False)
primary_tuned(DATABASES["default"], pooler=DATABASE_TRANSACTION_POOLER)  # config/settings/database.py
# An optional PostgreSQL streaming replica (hot standby) that serves the reads of lists, exports
# and charts (core/replica.py). Never a write, never a read inside a transaction; a caller that
# wrote reads the primary until the replica has replayed its write; a replica down or further
# behind than DATABASE_REPLICA_MAX_LAG_SECONDS is passed over for the primary.
DATABASE_REPLICA_URL = env_secret("DATABASE_REPLICA_URL") or ""
DATABASE_REPLICA_MAX_LAG_SECONDS = env_int("DATABASE_REPLICA_MAX_LAG_SECONDS", 10, minimum=0)
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = replica_database(DATABASE_REPLICA_URL, DATABASES["default"])
    DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
# Who may call what: every route and MCP tool with its rule (config/authorization.py), read and
# enforced by accounts/authorization.py.
AUTHORIZATION_TABLE = "config.authorization.ROUTES"

# --- Cache (rate limits, rate feed) ----------------------------------------------
# Shared by every process: Redis in production; on the embedded default a file cache under
# VAR_DIR whose counters are incremented under a file lock, so every gunicorn worker and
# Celery process counts rate limits together.
CACHE_URL = env_str("CACHE_URL", "")
# A Redis that stops answering (a host down, a partition) fails a call after this many seconds
# instead of holding the request.
CACHE_TIMEOUT_SECONDS = env_int("CACHE_TIMEOUT_SECONDS", 2, minimum=1)
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "core.cache.PooledRedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {"socket_connect_timeout": CACHE_TIMEOUT_SECONDS, "socket_timeout": CACHE_TIMEOUT_SECONDS},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "core.cache.LockedFileCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 10000},
        }
    }
# Lets several deployments (or a benchmark beside the tests) share one Redis database.
CACHES["default"]["KEY_PREFIX"] = env_str("CACHE_KEY_PREFIX", "")
# While the cache does not answer, each process counts rate limits in its own memory
# (docs/operations.md, "When Redis is down"), each request weighing RATE_LIMIT_LOCAL_WEIGHT:
# set it to the number of processes serving requests (gunicorn workers and MCP workers on
# every instance) for the processes together to allow about the shared limit; 1 lets each
# process allow the whole limit. The cache is asked again every RATE_LIMIT_CACHE_RETRY_SECONDS.
RATE_LIMIT_LOCAL_WEIGHT = env_int("RATE_LIMIT_LOCAL_WEIGHT", 1, minimum=1)
RATE_LIMIT_CACHE_RETRY_SECONDS = env_int("RATE_LIMIT_CACHE_RETRY_SECONDS", 2, minimum=1)

# --- Celery ---------------------------------------------------------------------
# Embedded default: files under VAR_DIR/broker (core/broker.py: kombu's filesystem transport
# with atomic writes and a short poll), so `make run` needs no broker. Production and tests:
# CELERY_BROKER_URL=redis://...
CELERY_BROKER_URL = env_secret("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT = "core.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        "polling_interval": 0.05,  # seconds between looks at the folder when it is empty or the worker busy
    }
    for _folder in ("queue", "claimed", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    # Emails (sign-in codes among them) have a queue of their own, which `make run` serves with a
    # worker of its own: they never wait behind webhook deliveries.
    CELERY_TASK_ROUTES = {"notifications.*": {"queue": "email"}}
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 120, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 180, minimum=1)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Leases (core/leases.py) last LEASE_SECONDS unless renewed; their holders renew them every third
# of it while they work, so work whose process was killed is taken up within this.
LEASE_SECONDS = env_int("LEASE_SECONDS", 10, minimum=3)
# Only the beat holding the scheduler lease sends (core/beat.py); a standby takes over
# within BEAT_LEASE_SECONDS + a third of it once the active one dies.
CELERY_BEAT_SCHEDULER = "core.beat:LeasedScheduler"
BEAT_LEASE_SECONDS = env_int("BEAT_LEASE_SECONDS", LEASE_SECONDS, minimum=3)
# Beat jobs are named entries; each app adds its own below.
CELERY_BEAT_SCHEDULE: dict[str, dict] = {}
# Keep database connections across tasks (Celery's Django fixup closes them otherwise).
CELERY_DB_REUSE_MAX = 1000

# --- Passwords, i18n, static ------------------------------------------------------
# Argon2id first; older hashes still verify and are re-hashed with Argon2 at the next login.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
# The languages of the payer's pages, emails and PDF (locale/, docs/decisions.md "Languages").
# Each has a complete catalog for the payer's strings; `make lint` fails when one is missing.
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("pt-br", "Português (Brasil)"),
    ("it", "Italiano"),
    ("nl", "Nederlands"),
    ("pl", "Polski"),
    ("tr", "Türkçe"),
    ("ru", "Русский"),
    ("ja", "日本語"),
    ("zh-hans", "简体中文"),
    ("ar", "العربية"),
    ("hi", "हिन्दी"),
    ("id", "Bahasa Indonesia"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The languages the dashboard and account pages are translated into: an account whose language
# is not among them reads those pages in English (its language still picks its PDFs' language).
DASHBOARD_LANGUAGES = [code for code, _name in LANGUAGES]
LANGUAGE_COOKIE_NAME = "lang"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "core.staticfiles.AppDirectoriesFinder",  # collects only what pages load
]
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Source maps (two thirds of the collected bytes: the API reference's bundles) are read only by
# a browser's developer tools: served as they are, not compressed at every collectstatic.
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")

# --- Email ------------------------------------------------------------------------
# Never the console by default: emails carry sign-in and reset codes, and only a backend the
# operator names (console, say) may print them. With DEBUG, each email is a file under
# EMAIL_FILE_PATH, in a folder only this user can read.
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "notifications.mailfiles.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 15, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "payments@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# A test-mode object's email to a customer (a test refund's claim link) goes to the account's
# own address unless this is on (docs/test-mode.md); test emails are marked "[TEST]" either way.
TEST_MODE_CUSTOMER_EMAILS = env_bool("TEST_MODE_CUSTOMER_EMAILS", False)

# --- Security (ready for TLS when DEBUG is off) -----------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE_SECONDS", 14 * 24 * 3600, minimum=300)
CSRF_COOKIE_SAMESITE = "Lax"
CSRF_FAILURE_VIEW = "core.errors.csrf_failure"  # problem+json unless the client asks for HTML
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^livez$", r"^readyz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- API ----------------------------------------------------------------------------
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 256 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# Deeper JSON is a 400 before parsing (the parser recurses once per level).
API_MAX_JSON_DEPTH = env_int("API_MAX_JSON_DEPTH", 32, minimum=2)
if API_MAX_JSON_DEPTH > 200:
    raise ImproperlyConfigured("API_MAX_JSON_DEPTH must be at most 200 (the parser recurses once per level).")
API_AUTH_FAILURES_PER_MINUTE = env_int("API_AUTH_FAILURES_PER_MINUTE", 30, minimum=1)
API_RATE_LIMITS = {
    "read": env_str("API_RATE_LIMIT_READS", "600/min"),
    "write": env_str("API_RATE_LIMIT_WRITES", "120/min"),
}
# Costly operations have budgets of their own, per API key and per account (its keys and
# sessions together), on top of the read/write one (core/ratelimits.py).
API_COST_RATE_LIMITS = {
    "pdf": {
        "key": env_rate("API_RATE_LIMIT_PDF_PER_KEY", "20/min"),
        "account": env_rate("API_RATE_LIMIT_PDF_PER_ACCOUNT", "30/min"),
    },
    "tx-template": {
        "key": env_rate("API_RATE_LIMIT_TX_TEMPLATE_PER_KEY", "60/min"),
        "account": env_rate("API_RATE_LIMIT_TX_TEMPLATE_PER_ACCOUNT", "120/min"),
    },
    "batch": {
        "key": env_rate("API_RATE_LIMIT_BATCH_PER_KEY", "10/min"),
        "account": env_rate("API_RATE_LIMIT_BATCH_PER_ACCOUNT", "20/min"),
    },
    "csv": {"account": env_rate("API_RATE_LIMIT_CSV_PER_ACCOUNT", "10/min")},  # the dashboard's export
    # Simulated payments, expiries and reorgs (REST, MCP, a test pay page's button): each writes
    # a payment, events and webhook deliveries.
    "test-helper": {
        "key": env_rate("API_RATE_LIMIT_TEST_HELPER_PER_KEY", "60/min"),
        "account": env_rate("API_RATE_LIMIT_TEST_HELPER_PER_ACCOUNT", "120/min"),
    },
}
API_KEYS_PER_ACCOUNT_MAX = env_int("API_KEYS_PER_ACCOUNT_MAX", 25, minimum=1)

REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.ApiRateThrottle", "core.api.throttling.CostThrottle"],
    "DEFAULT_PARSER_CLASSES": [
        "core.api.parsers.JsonParser",
        "core.api.parsers.TextJsonParser",
        "core.api.parsers.StructuredJsonParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["core.api.renderers.JsonRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.parsers.JsonNegotiation",
    "DEFAULT_SCHEMA_CLASS": "about.api.schema.ServiceAutoSchema",
    "EXCEPTION_HANDLER": "core.api.problems.problem_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_PAGINATION_CLASS": None,
    "URL_FORMAT_OVERRIDE": None,
    # Reverse proxies in front of the app (X-Forwarded-For entries to trust); the client's
    # address counts failed key checks and anonymous rate limits. 0: the socket's peer.
    "NUM_PROXIES": env_int("NUM_PROXIES", 0, minimum=0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Non-custodial payment drafts and pay links",
    "DESCRIPTION": (
        "Prepares payment instructions that payers sign and send from their own wallets. "
        "The service never holds keys or funds. Authenticate with `Authorization: Bearer <API key>`. "
        "A test key (`pdk_test_...`) sees and makes only test objects, on test networks, and may pay them "
        "on demand with the test helpers; every object says `livemode`."
    ),
    "VERSION": "v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["accounts.permissions.HasScope"],  # the authorization table's `schema` row
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": False,
    # Each request body under application/json only (text/json and application/*+json are taken
    # too, but three content types per body make client generators emit broken code).
    "PARSER_WHITELIST": ["core.api.parsers.JsonParser"],
    "ENUM_NAME_OVERRIDES": {
        "PaymentNetwork": "payments.enums.Network",
        "PaymentCurrency": "payments.enums.Currency",
        "PaymentMethod": "payments.enums.Method",
        "DraftStatus": "drafts.enums.DraftStatus",
        "FeePlacement": "payments.enums.FeePlacement",
        "PaymentRequestStatus": "paylinks.models.PaymentRequestStatus",
        "RefundStatus": "refunds.models.RefundStatus",
        # Fee settlements and pay links take the same four (drafts.settlement, paylinks.services):
        # one component, as drf-spectacular names one set of values once.
        "BtcOrStablecoin": "drafts.settlement.SETTLEMENT_CURRENCIES",
        "AddressDirection": "addressbook.models.AddressDirection",
        "RecurrenceInterval": "recurring.models.RecurrenceInterval",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "about.api.schema.reject_unknown_properties",
        "about.api.schema.document_location_on_created",
        "about.api.schema.add_problem_schema",
        "about.api.schema.add_servers",
        "about.api.schema.define_tags",
        "about.api.schema.drop_redundant_nullable",
    ],
}

# --- Health -------------------------------------------------------------------------
# /metrics answers loopback clients, and anyone sending `Authorization: Bearer <METRICS_TOKEN>`.
METRICS_TOKEN = env_secret("METRICS_TOKEN") or ""
# The worker and the chain listener count what only they see (watcher passes, delivery outcomes,
# task failures). With METRICS_PORT set, each serves its own figures in the Prometheus format on
# METRICS_ADDRESS:METRICS_PORT (no token: bind it to loopback or a private network), for a
# machine whose web does not share PROMETHEUS_MULTIPROC_DIR with them (docs/production.md).
METRICS_PORT = env_int("METRICS_PORT", 0, minimum=0)
METRICS_ADDRESS = env_str("METRICS_ADDRESS", "127.0.0.1")
# /healthz answers `status` and `failed` to anyone; its `checks`, `notices` and `detail` to
# loopback clients and to `Authorization: Bearer <HEALTHZ_TOKEN>` (about/operator.py).
HEALTHZ_TOKEN = env_secret("HEALTHZ_TOKEN") or ""
HEALTHZ_BROKER_TIMEOUT_SECONDS = env_int("HEALTHZ_BROKER_TIMEOUT_SECONDS", 3, minimum=1)
# Beat sends a heartbeat task this often: beat notes the tick as it sends it, a worker as it runs it.
HEARTBEAT_INTERVAL_SECONDS = env_int("HEARTBEAT_INTERVAL_SECONDS", 15, minimum=1)
CELERY_BEAT_SCHEDULE["config-heartbeat"] = {
    "task": "config.heartbeat",
    "schedule": float(HEARTBEAT_INTERVAL_SECONDS),
    "options": {"expires": float(HEARTBEAT_INTERVAL_SECONDS)},
}
# /healthz turns red past these ages: the last beat tick, the last heartbeat a worker ran, the
# oldest webhook delivery and email due but not yet sent.
HEALTHZ_BEAT_STALE_SECONDS = env_int("HEALTHZ_BEAT_STALE_SECONDS", 45, minimum=1)
HEALTHZ_WORKER_STALE_SECONDS = env_int("HEALTHZ_WORKER_STALE_SECONDS", 45, minimum=1)
HEALTHZ_WEBHOOK_DUE_SECONDS = env_int("HEALTHZ_WEBHOOK_DUE_SECONDS", 60, minimum=1)
HEALTHZ_EMAIL_DUE_SECONDS = env_int("HEALTHZ_EMAIL_DUE_SECONDS", 60, minimum=1)
# A request that found the database, cache or broker down answers 503 with this Retry-After.
OUTAGE_RETRY_AFTER_SECONDS = env_int("OUTAGE_RETRY_AFTER_SECONDS", 5, minimum=1)

# plain, or json: one JSON object per line with request_id, account_id, task_name and task_id.
LOG_FORMAT = env_str("LOG_FORMAT", "plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured("LOG_FORMAT must be plain or json.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.requests.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "core.requests.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
