"""Settings for the service. Every value comes from the environment (README lists them)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_decimal,
    env_int,
    env_list,
    env_rate,
    env_secret,
    env_str,
    network_env_suffix,
)

BASE_DIR = Path(__file__).resolve().parent.parent
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
    (config/encryption.py; rotation in the README)."""
    keys = [key.strip() for key in (env_secret("FIELD_ENCRYPTION_KEY") or "").split(",") if key.strip()]
    if not keys:
        if not DEBUG:
            raise ImproperlyConfigured(
                "Set FIELD_ENCRYPTION_KEY (or FIELD_ENCRYPTION_KEY_FILE) when DEBUG is off: it encrypts webhook "
                "signing secrets and authenticator keys at rest. Generate one with "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'."
            )
        return [SECRET_KEY]  # development only: config/notices.py says so
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
    "notifications",
    "webhooks",
    "chainwatch",
    "dashboard",
    "addressbook",
    "suggestions",
    "recurring",
    "demo",
    "config",  # last: its ready() runs after every other app has imported what it needs
]

MIDDLEWARE = [
    "config.requests.RequestIdMiddleware",
    "config.metrics.RequestMetricsMiddleware",  # counts by URL pattern name and status (/metrics)
    "config.api.problems.ApiProblemMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
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
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several gunicorn workers and Celery write at once: WAL lets readers run beside the writer,
    # IMMEDIATE takes the write lock when a transaction starts (no deadlocking lock upgrade), and
    # the timeout makes a writer wait for the lock instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 20, minimum=1),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
elif env_bool("DATABASE_SERVER_SIDE_BINDING", True):
    # psycopg 3 sends parameters apart from the SQL and prepares a statement on the server
    # once a connection has run it `prepare_threshold` times: the hot statements (key look-up,
    # draft INSERT and SELECT) are parsed and planned once per connection, not per request.
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

# --- Cache (rate limits, rate feed) ----------------------------------------------
# Shared by every process: Redis in production; on the embedded default a file cache under
# VAR_DIR whose counters are incremented under a file lock, so every gunicorn worker and
# Celery process counts rate limits together.
CACHE_URL = env_str("CACHE_URL", "")
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "config.cache.PooledRedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "config.cache.LockedFileCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "OPTIONS": {"MAX_ENTRIES": 10000},
        }
    }
# Lets several deployments (or a benchmark beside the tests) share one Redis database.
CACHES["default"]["KEY_PREFIX"] = env_str("CACHE_KEY_PREFIX", "")

# --- Celery ---------------------------------------------------------------------
# Embedded default: files under VAR_DIR/broker (config/broker.py: kombu's filesystem transport
# with atomic writes and a short poll), so `make run` needs no broker. Production and tests:
# CELERY_BROKER_URL=redis://...
CELERY_BROKER_URL = env_secret("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
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
# Only the beat holding the scheduler lease sends (config/beat.py); a standby takes over
# within BEAT_LEASE_SECONDS + a third of it once the active one dies.
CELERY_BEAT_SCHEDULER = "config.beat:LeasedScheduler"
BEAT_LEASE_SECONDS = env_int("BEAT_LEASE_SECONDS", 30, minimum=3)
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
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

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

# --- Security (ready for TLS when DEBUG is off) -----------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE_SECONDS", 14 * 24 * 3600, minimum=300)
CSRF_COOKIE_SAMESITE = "Lax"
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"  # problem+json unless the client asks for HTML
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
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
# sessions together), on top of the read/write one (config/ratelimits.py).
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
}
API_KEYS_PER_ACCOUNT_MAX = env_int("API_KEYS_PER_ACCOUNT_MAX", 25, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["config.api.throttling.ApiRateThrottle", "config.api.throttling.CostThrottle"],
    "DEFAULT_PARSER_CLASSES": [
        "config.api.parsers.JsonParser",
        "config.api.parsers.TextJsonParser",
        "config.api.parsers.StructuredJsonParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "config.api.parsers.JsonNegotiation",
    "DEFAULT_SCHEMA_CLASS": "config.api.schema.ServiceAutoSchema",
    "EXCEPTION_HANDLER": "config.api.problems.problem_exception_handler",
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
        "The service never holds keys or funds. Authenticate with `Authorization: Bearer <API key>`."
    ),
    "VERSION": "v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": False,
    # Each request body under application/json only (text/json and application/*+json are taken
    # too, but three content types per body make client generators emit broken code).
    "PARSER_WHITELIST": ["config.api.parsers.JsonParser"],
    "ENUM_NAME_OVERRIDES": {
        "PaymentNetwork": "payments.enums.Network",
        "PaymentCurrency": "payments.enums.Currency",
        "PaymentMethod": "payments.enums.Method",
        "DraftStatus": "payments.enums.DraftStatus",
        "FeePlacement": "payments.enums.FeePlacement",
        "PaymentRequestStatus": "paylinks.models.PaymentRequestStatus",
        "RefundStatus": "refunds.models.RefundStatus",
        "SettlementCurrency": "drafts.settlement.SETTLEMENT_CURRENCIES",
        "AddressDirection": "addressbook.models.AddressDirection",
        "RecurrenceInterval": "recurring.models.RecurrenceInterval",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api.schema.reject_unknown_properties",
        "config.api.schema.document_location_on_created",
        "config.api.schema.add_problem_schema",
    ],
}

# --- Payments ---------------------------------------------------------------------
MAINNET_NETWORKS = ["Mainnet", "Solana", "Ethereum", "Base"]
TEST_NETWORKS = ["Testnet", "SolanaDevnet", "Sepolia", "BaseSepolia"]
# Bitcoin signet and regtest (a developer's own node): off unless ENABLED_NETWORKS names them.
DEVELOPER_NETWORKS = ["Signet", "Regtest"]
ENABLED_NETWORKS = env_list("ENABLED_NETWORKS", MAINNET_NETWORKS + (TEST_NETWORKS if DEBUG else []))
_unknown_networks = set(ENABLED_NETWORKS) - set(MAINNET_NETWORKS + TEST_NETWORKS + DEVELOPER_NETWORKS)
if _unknown_networks:
    raise ImproperlyConfigured(f"ENABLED_NETWORKS names unknown networks: {sorted(_unknown_networks)}")


# --- Money core: rates, quotes, fees (payments/, fees/) ---------------------------
def _json_setting(name: str, default: str):
    raw = env_str(name, default)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from exc


# {"USDC": {"Ethereum": "0x..."}}: overrides the registry's token addresses (payments/registry.py).
TOKEN_ADDRESSES = _json_setting("TOKEN_ADDRESSES", "{}")
if not isinstance(TOKEN_ADDRESSES, dict) or not all(
    isinstance(per_network, dict) and all(isinstance(a, str) for a in per_network.values())
    for per_network in TOKEN_ADDRESSES.values()
):
    raise ImproperlyConfigured('TOKEN_ADDRESSES must look like {"USDC": {"Ethereum": "0x..."}}.')

# Rate feed. Every listed provider is asked on each refresh and their prices are combined
# per pair (median, outliers dropped): "name" or "name=base URL" (payments/rates/providers.py).
RATES_CRYPTO_PROVIDERS = env_list("RATES_CRYPTO_PROVIDERS", ["kraken", "coinbase", "bitstamp", "coingecko"])
RATES_FX_PROVIDERS = env_list("RATES_FX_PROVIDERS", ["ecb", "open-er-api"])
RATES_KRAKEN_URL = env_str("RATES_KRAKEN_URL", "https://api.kraken.com").rstrip("/")
RATES_COINBASE_URL = env_str("RATES_COINBASE_URL", "https://api.coinbase.com").rstrip("/")
RATES_BITSTAMP_URL = env_str("RATES_BITSTAMP_URL", "https://www.bitstamp.net").rstrip("/")
RATES_COINGECKO_URL = env_str("RATES_COINGECKO_URL", "https://api.coingecko.com").rstrip("/")
RATES_COINGECKO_API_KEY = env_secret("RATES_COINGECKO_API_KEY") or ""
RATES_ECB_URL = env_str("RATES_ECB_URL", "https://www.ecb.europa.eu").rstrip("/")
RATES_OPEN_ER_API_URL = env_str("RATES_OPEN_ER_API_URL", "https://open.er-api.com").rstrip("/")
RATES_HTTP_TIMEOUT_SECONDS = env_int("RATES_HTTP_TIMEOUT_SECONDS", 5, minimum=1)
RATES_REFRESH_SECONDS = env_int("RATES_REFRESH_SECONDS", 60, minimum=5)
RATES_MAX_AGE_SECONDS = env_int("RATES_MAX_AGE_SECONDS", 600, minimum=10)
# A source farther than this from the median of the others is dropped (and counted).
RATES_OUTLIER_PERCENT = env_decimal("RATES_OUTLIER_PERCENT", "3")
RATES_MIN_SOURCES = env_int("RATES_MIN_SOURCES", 2, minimum=1)  # agreeing sources per crypto price
RATES_FX_MIN_SOURCES = env_int("RATES_FX_MIN_SOURCES", 1, minimum=1)  # the ECB quotes ~30 currencies only
# Stablecoins priced at their peg instead of their own markets: only when the operator says so.
RATES_STABLECOINS_AT_PAR = env_list("RATES_STABLECOINS_AT_PAR", [])
# The bundled, dated snapshot prices a pair with no fresh live price only when this is true
# (`make run` sets it, for trying without internet); every surface then says "not live".
RATES_BUNDLED_ALLOWED = env_bool("RATES_BUNDLED_ALLOWED", False)
# Each process keeps the parsed rate tables this long before reading the shared cache again.
RATES_LOCAL_CACHE_SECONDS = env_int("RATES_LOCAL_CACHE_SECONDS", 2, minimum=0)
if RATES_MAX_AGE_SECONDS <= RATES_REFRESH_SECONDS:
    raise ImproperlyConfigured("RATES_MAX_AGE_SECONDS must be longer than RATES_REFRESH_SECONDS.")
if not 0 < RATES_OUTLIER_PERCENT < 100:
    raise ImproperlyConfigured("RATES_OUTLIER_PERCENT must be between 0 and 100.")
if set(RATES_STABLECOINS_AT_PAR) - {"USDC", "USDT", "EURC"}:
    raise ImproperlyConfigured(f"RATES_STABLECOINS_AT_PAR may list USDC, USDT, EURC; got {RATES_STABLECOINS_AT_PAR}.")
for _setting, _providers, _known in (
    ("RATES_CRYPTO_PROVIDERS", RATES_CRYPTO_PROVIDERS, {"kraken", "coinbase", "bitstamp", "coingecko"}),
    ("RATES_FX_PROVIDERS", RATES_FX_PROVIDERS, {"ecb", "open-er-api"}),
):
    _names = [item.partition("=")[0].strip() for item in _providers]
    if "snapshot" in _names:
        raise ImproperlyConfigured(
            f"{_setting} lists snapshot: the bundled table is no provider; set RATES_BUNDLED_ALLOWED=true instead."
        )
    if set(_names) - _known or (not _names and not RATES_BUNDLED_ALLOWED):
        raise ImproperlyConfigured(f"{_setting} must list providers among {sorted(_known)}; got {_providers}.")
CELERY_BEAT_SCHEDULE["payments-rates-refresh"] = {
    "task": "payments.rates_refresh",
    "schedule": float(RATES_REFRESH_SECONDS),
    "options": {"expires": float(RATES_REFRESH_SECONDS)},
}

# Quotes
QUOTE_LOCK_MINUTES = env_int("QUOTE_LOCK_MINUTES", 15, minimum=1)

# Fees (defaults are the spec's schedule)
FEE_TIERS = _json_setting(
    "FEE_TIERS",
    '[{"upToUsd": 10, "percent": "0.49"}, {"upToUsd": 50, "percent": "0.39"}, {"upToUsd": 100, "percent": "0.29"},'
    ' {"upToUsd": 500, "percent": "0.19"}, {"upToUsd": 2000, "percent": "0.14"},'
    ' {"upToUsd": 10000, "percent": "0.09"}, {"upToUsd": 50000, "percent": "0.04"},'
    ' {"upToUsd": 100000, "percent": "0.02"}, {"upToUsd": null, "percent": "0.01"}]',
)
FEE_MIN_USD = env_decimal("FEE_MIN_USD", "0.01")
FEE_MAX_USD = env_decimal("FEE_MAX_USD", "100")
FEE_DUST_LIMIT_SATS = env_int("FEE_DUST_LIMIT_SATS", 546, minimum=0)
FEE_DUST_WAIVERS_PER_DAY = env_int("FEE_DUST_WAIVERS_PER_DAY", 10, minimum=0)
# Accrued fees: an account is blocked from fee-accruing drafts at either cap.
FEE_MAX_OUTSTANDING_USD = env_decimal("FEE_MAX_OUTSTANDING_USD", "25")
FEE_MAX_AGE_DAYS = env_int("FEE_MAX_AGE_DAYS", 30, minimum=1)

# --- Drafts (drafts/) ----------------------------------------------------------------
DRAFT_LATE_PAYMENT_GRACE_HOURS = env_int("DRAFT_LATE_PAYMENT_GRACE_HOURS", 72, minimum=0)


def _fee_address(network: str) -> tuple[str, str]:
    """(variable, address) of FEE_ADDRESS_<NETWORK>; the joined spelling (FEE_ADDRESS_BASESEPOLIA)
    of earlier versions is still read."""
    name, legacy = f"FEE_ADDRESS_{network_env_suffix(network)}", f"FEE_ADDRESS_{network.upper()}"
    address, old = env_str(name, ""), env_str(legacy, "") if legacy != name else ""
    if address and old and address != old:
        raise ImproperlyConfigured(f"{name} and {legacy} name different addresses; set only {name}.")
    return (name, address) if address or not old else (legacy, old)


# The operator's fee addresses per network: FEE_ADDRESS_MAINNET, FEE_ADDRESS_BASE_SEPOLIA, ...
PLATFORM_FEE_ADDRESS_VARIABLES = {network: _fee_address(network) for network in MAINNET_NETWORKS + TEST_NETWORKS}
PLATFORM_FEE_ADDRESSES = {
    network: address for network, (_, address) in PLATFORM_FEE_ADDRESS_VARIABLES.items() if address
}
PAYMENT_URI_LABEL = env_str("PAYMENT_URI_LABEL", "")
IDEMPOTENCY_KEY_TTL_HOURS = env_int("IDEMPOTENCY_KEY_TTL_HOURS", 24, minimum=1)
CELERY_BEAT_SCHEDULE["drafts-expire"] = {"task": "drafts.expire_drafts", "schedule": 60.0}
CELERY_BEAT_SCHEDULE["drafts-idempotency-cleanup"] = {"task": "drafts.purge_idempotency_keys", "schedule": 3600.0}
LNURL_TIMEOUT_SECONDS = env_int("LNURL_TIMEOUT_SECONDS", 10, minimum=1)


# --- Chain watching (chainwatch/) --------------------------------------------------------
# Endpoints per network: RPC_URL_<NETWORK> (EVM and Solana JSON-RPC), ESPLORA_URL_<NETWORK> and
# BITCOIN_RPC_URL_<NETWORK> (Bitcoin; user:password@ in the URL for Core). <NETWORK> is the
# network name in upper snake case: MAINNET, TESTNET, SIGNET, REGTEST, ETHEREUM, BASE, SEPOLIA,
# BASE_SEPOLIA, SOLANA, SOLANA_DEVNET.
CHAINWATCH_ENDPOINTS = {
    _n: {
        "rpc_url": env_secret(f"RPC_URL_{network_env_suffix(_n)}") or "",
        "esplora_url": env_str(f"ESPLORA_URL_{network_env_suffix(_n)}", ""),
        "bitcoin_rpc_url": env_secret(f"BITCOIN_RPC_URL_{network_env_suffix(_n)}") or "",
    }
    for _n in MAINNET_NETWORKS + TEST_NETWORKS + DEVELOPER_NETWORKS
}
# "core" or "esplora" per Bitcoin network; empty picks Core when BITCOIN_RPC_URL_<NETWORK> is set.
CHAINWATCH_BITCOIN_SOURCE = {
    _n: env_str(f"BITCOIN_SOURCE_{network_env_suffix(_n)}", "") for _n in ("Mainnet", "Testnet", "Signet", "Regtest")
}
for _n, _source in CHAINWATCH_BITCOIN_SOURCE.items():
    if _source not in ("", "core", "esplora"):
        raise ImproperlyConfigured(f"BITCOIN_SOURCE_{network_env_suffix(_n)} must be core or esplora.")
# Token contracts and mints: TOKEN_ADDRESSES in the money-core section (the registry).

CHAINWATCH_INTERVAL_SECONDS = env_int("CHAINWATCH_INTERVAL_SECONDS", 15, minimum=1)
CHAINWATCH_BLOCKS_PER_PASS = env_int("CHAINWATCH_BLOCKS_PER_PASS", 100, minimum=1)
CHAINWATCH_LOG_BLOCKS_PER_CALL = env_int("CHAINWATCH_LOG_BLOCKS_PER_CALL", 2000, minimum=1)
CHAINWATCH_ADDRESSES_PER_LOG_CALL = env_int("CHAINWATCH_ADDRESSES_PER_LOG_CALL", 1000, minimum=1)
CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL = env_int("CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL", 100, minimum=1)
CHAINWATCH_PASSES_PER_RUN = env_int("CHAINWATCH_PASSES_PER_RUN", 20, minimum=1)
CHAINWATCH_RUN_SECONDS = env_int("CHAINWATCH_RUN_SECONDS", 60, minimum=1)
CHAINWATCH_START_LOOKBACK_BLOCKS = env_int("CHAINWATCH_START_LOOKBACK_BLOCKS", 100, minimum=0)
CHAINWATCH_REORG_DEPTH = env_int("CHAINWATCH_REORG_DEPTH", 64, minimum=1)
CHAINWATCH_HTTP_TIMEOUT_SECONDS = env_int("CHAINWATCH_HTTP_TIMEOUT_SECONDS", 10, minimum=1)
CHAINWATCH_MAX_REQUESTS_PER_SECOND = env_int("CHAINWATCH_MAX_REQUESTS_PER_SECOND", 50, minimum=0)
CHAINWATCH_JSONRPC_BATCH_SIZE = env_int("CHAINWATCH_JSONRPC_BATCH_SIZE", 100, minimum=1)
CHAINWATCH_MEMPOOL_TXS_PER_PASS = env_int("CHAINWATCH_MEMPOOL_TXS_PER_PASS", 5000, minimum=1)
CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS = env_int("CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS", 20, minimum=1)
CHAINWATCH_SOLANA_SIGNATURES_PER_CALL = env_int("CHAINWATCH_SOLANA_SIGNATURES_PER_CALL", 1000, minimum=1)
CHAINWATCH_SOLANA_RELIST_SLOTS = env_int("CHAINWATCH_SOLANA_RELIST_SLOTS", 150, minimum=0)
CHAINWATCH_SOLANA_TRANSACTIONS_PER_PASS = env_int("CHAINWATCH_SOLANA_TRANSACTIONS_PER_PASS", 2000, minimum=1)
# Age of a watcher's last successful pass (it runs every CHAINWATCH_INTERVAL_SECONDS) at which
# /healthz turns red: a dead node or a stopped watcher shows within a minute.
CHAINWATCH_STALE_AFTER_SECONDS = env_int("CHAINWATCH_STALE_AFTER_SECONDS", 60, minimum=1)
# Lightning: LUD-21 verify URLs travel with each draft; LND REST or LNbits check the rest.
CHAINWATCH_LIGHTNING_ENABLED = env_bool("CHAINWATCH_LIGHTNING_ENABLED", True)
LND_REST_URL = env_str("LND_REST_URL", "")
LND_MACAROON_HEX = env_secret("LND_MACAROON_HEX") or ""
LNBITS_URL = env_str("LNBITS_URL", "")
LNBITS_API_KEY = env_secret("LNBITS_API_KEY") or ""
CHAINWATCH_LND_INVOICES_PER_CALL = env_int("CHAINWATCH_LND_INVOICES_PER_CALL", 1000, minimum=1)
CHAINWATCH_LND_STREAM_IDLE_MS = env_int("CHAINWATCH_LND_STREAM_IDLE_MS", 1000, minimum=1)
CHAINWATCH_LND_STREAM_SECONDS = env_int("CHAINWATCH_LND_STREAM_SECONDS", 20, minimum=1)
CHAINWATCH_LND_RELIST_SECONDS = env_int("CHAINWATCH_LND_RELIST_SECONDS", 300, minimum=0)
CHAINWATCH_LNBITS_PAYMENTS_PER_CALL = env_int("CHAINWATCH_LNBITS_PAYMENTS_PER_CALL", 500, minimum=1)
CHAINWATCH_LNBITS_RELIST_SECONDS = env_int("CHAINWATCH_LNBITS_RELIST_SECONDS", 300, minimum=0)
CHAINWATCH_LUD21_CHECKS_PER_PASS = env_int("CHAINWATCH_LUD21_CHECKS_PER_PASS", 200, minimum=1)
# One beat entry per enabled network and chain family; a watcher without an endpoint skips itself.
_CHAINWATCH_FAMILIES = {
    "Mainnet": ("bitcoin", "lightning"),
    "Testnet": ("bitcoin", "lightning"),
    "Signet": ("bitcoin", "lightning"),
    "Regtest": ("bitcoin", "lightning"),
    "Solana": ("solana",),
    "SolanaDevnet": ("solana",),
}
for _n in ENABLED_NETWORKS:
    for _family in _CHAINWATCH_FAMILIES.get(_n, ("evm",)):
        CELERY_BEAT_SCHEDULE[f"chainwatch-{_n.lower()}-{_family}"] = {
            "task": "chainwatch.run",
            "schedule": float(CHAINWATCH_INTERVAL_SECONDS),
            "args": (_n, _family),
            "options": {"expires": float(CHAINWATCH_INTERVAL_SECONDS)},
        }

# --- Pay links (paylinks/) -------------------------------------------------------------
# How long the draft created when a payer picks an option stays payable (whole hours; its
# rate is locked for QUOTE_LOCK_MINUTES, and a late payment is still matched in the grace window).
PAYLINKS_DRAFT_EXPIRY_HOURS = env_int("PAYLINKS_DRAFT_EXPIRY_HOURS", 1, minimum=1)
# Per client IP on the anonymous checkout endpoints and the pay page.
CHECKOUT_RATE_LIMITS = {
    "read": env_str("CHECKOUT_RATE_LIMIT_READS", "120/min"),
    "write": env_str("CHECKOUT_RATE_LIMIT_WRITES", "20/min"),
}
PAYLINKS_EXPIRE_INTERVAL_SECONDS = env_int("PAYLINKS_EXPIRE_INTERVAL_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE["paylinks-expire-due"] = {
    "task": "paylinks.expire_due",
    "schedule": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS),
    "options": {"expires": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS)},
}

# --- Refunds (refunds/) -------------------------------------------------------------------
CELERY_BEAT_SCHEDULE["refunds-expire-due"] = {
    "task": "refunds.expire_due",
    "schedule": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS),
    "options": {"expires": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS)},
}

# --- Outbound requests to user-supplied URLs (outbound/) ---------------------------------
# One guard for webhook endpoints, Lightning addresses (LNURL-pay) and LUD-21 verify URLs,
# so one setting: admit http(s)://127.0.0.1, [::1] and localhost on any port. Local
# development and tests only; no API call can turn it on. The earlier per-feature names
# (WEBHOOKS_ALLOW_LOOPBACK, LNURL_ALLOW_HTTP_LOOPBACK) are still read.
OUTBOUND_ALLOW_LOOPBACK = env_bool(
    "OUTBOUND_ALLOW_LOOPBACK",
    env_bool("WEBHOOKS_ALLOW_LOOPBACK", False) or env_bool("LNURL_ALLOW_HTTP_LOOPBACK", False),
)
OUTBOUND_RESOLVER = env_str("OUTBOUND_RESOLVER", env_str("WEBHOOKS_RESOLVER", "outbound.guard.SystemResolver"))
# CA bundle for server certificates; empty means certifi's Mozilla bundle.
OUTBOUND_CA_BUNDLE = env_str("OUTBOUND_CA_BUNDLE", env_str("WEBHOOKS_CA_BUNDLE", ""))

# --- Webhooks and email notifications (webhooks/) ----------------------------------------
WEBHOOKS_TIMEOUT_SECONDS = env_int("WEBHOOKS_TIMEOUT_SECONDS", 15, minimum=1)
WEBHOOKS_RESPONSE_MAX_BYTES = env_int("WEBHOOKS_RESPONSE_MAX_BYTES", 4096, minimum=0)
WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = env_int("WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT", 2, minimum=1)
WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES = env_int("WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES", 10, minimum=1)
WEBHOOKS_DISPATCH_INTERVAL_SECONDS = env_int("WEBHOOKS_DISPATCH_INTERVAL_SECONDS", 5, minimum=1)
WEBHOOKS_DISPATCH_BATCH = env_int("WEBHOOKS_DISPATCH_BATCH", 200, minimum=1)
# After a secret rotation, deliveries are signed with both secrets this long.
WEBHOOKS_SECRET_OVERLAP_HOURS = env_int("WEBHOOKS_SECRET_OVERLAP_HOURS", 24, minimum=0)
NOTIFICATIONS_EMAIL_INTERVAL_SECONDS = env_int("NOTIFICATIONS_EMAIL_INTERVAL_SECONDS", 30, minimum=1)
NOTIFICATIONS_EMAIL_MAX_ATTEMPTS = env_int("NOTIFICATIONS_EMAIL_MAX_ATTEMPTS", 5, minimum=1)
CELERY_BEAT_SCHEDULE["webhooks-dispatch-due"] = {
    "task": "webhooks.dispatch_due",
    "schedule": float(WEBHOOKS_DISPATCH_INTERVAL_SECONDS),
    "options": {"expires": float(WEBHOOKS_DISPATCH_INTERVAL_SECONDS)},
}
CELERY_BEAT_SCHEDULE["notifications-send-due-emails"] = {
    "task": "notifications.send_due_emails",
    "schedule": float(NOTIFICATIONS_EMAIL_INTERVAL_SECONDS),
    "options": {"expires": float(NOTIFICATIONS_EMAIL_INTERVAL_SECONDS)},
}

# --- Human accounts (docs/accounts.md) ----------------------------------------------
# Failed password, emailed-code and TOTP attempts (accounts/ratelimit.py): per account and
# IP address, per IP address, and per account from browsers that never signed in to it.
AUTH_ATTEMPTS_PER_MINUTE = env_int("AUTH_ATTEMPTS_PER_MINUTE", 10, minimum=1)
AUTH_ADDRESS_ATTEMPTS_PER_MINUTE = env_int("AUTH_ADDRESS_ATTEMPTS_PER_MINUTE", 20, minimum=1)
AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE = env_int("AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE", 30, minimum=1)
# Emails (codes, or the notices sent instead) to one address per purpose and hour.
AUTH_CODE_EMAILS_PER_HOUR = env_int("AUTH_CODE_EMAILS_PER_HOUR", 5, minimum=1)
if AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE <= AUTH_ATTEMPTS_PER_MINUTE:
    # Else one attacker's address could use up the pool every browser but the owner's shares.
    raise ImproperlyConfigured("AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE must be above AUTH_ATTEMPTS_PER_MINUTE.")
AUTH_EMAIL_CODE_MINUTES = env_int("AUTH_EMAIL_CODE_MINUTES", 10, minimum=1)
AUTH_EMAIL_CODE_MAX_TRIES = env_int("AUTH_EMAIL_CODE_MAX_TRIES", 5, minimum=1)
AUTH_REAUTH_MINUTES = env_int("AUTH_REAUTH_MINUTES", 5, minimum=1)
# WebAuthn: the RP ID is BASE_URL's host name and the origin its scheme, host and port.
WEBAUTHN_RP_NAME = env_str("WEBAUTHN_RP_NAME", "Payment drafts")
WEBAUTHN_CHALLENGE_SECONDS = 300
OTP_TOTP_ISSUER = env_str("OTP_TOTP_ISSUER", WEBAUTHN_RP_NAME)
# Exactly one 30-second step of drift either way; django-otp does not learn a drift (which
# would let the window creep).
OTP_TOTP_SYNC = False
LOGIN_URL = "/account/sign-in"
CELERY_BEAT_SCHEDULE["accounts-purge-email-codes"] = {"task": "accounts.purge_email_codes", "schedule": 3600.0}

# --- Recurring templates (recurring/) -------------------------------------------------------
RECURRING_INTERVAL_SECONDS = env_int("RECURRING_INTERVAL_SECONDS", 30, minimum=1)
RECURRING_BATCH = env_int("RECURRING_BATCH", 200, minimum=1)
# A claimed run is someone else's for this long (longer than a task may run); then it is claimed again.
RECURRING_CLAIM_SECONDS = env_int("RECURRING_CLAIM_SECONDS", 300, minimum=30)
RECURRING_RETRY_SECONDS = env_int("RECURRING_RETRY_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE["recurring-run-due"] = {
    "task": "recurring.run_due",
    "schedule": float(RECURRING_INTERVAL_SECONDS),
    "options": {"expires": float(RECURRING_INTERVAL_SECONDS)},
}

# --- Demo (demo/) ----------------------------------------------------------------------------
# Anyone may open a short-lived draft on a test network, paid to the operator's demo address
# for that network: DEMO_ADDRESS_TESTNET, DEMO_ADDRESS_SEPOLIA, DEMO_ADDRESS_BASE_SEPOLIA,
# DEMO_ADDRESS_SOLANA_DEVNET (`make run` sets public test-vector addresses).
DEMO_ENABLED = env_bool("DEMO_ENABLED", True)
DEMO_RECEIVING_ADDRESSES = {
    network: address
    for network in TEST_NETWORKS
    if (address := env_str(f"DEMO_ADDRESS_{network_env_suffix(network)}", "").strip())
}
DEMO_ACCOUNT_EMAIL = env_str("DEMO_ACCOUNT_EMAIL", "demo@demo.invalid")
DEMO_AMOUNT_USD = env_decimal("DEMO_AMOUNT_USD", "1")
if DEMO_AMOUNT_USD <= 0:
    raise ImproperlyConfigured("DEMO_AMOUNT_USD must be positive.")
DEMO_EXPIRY_MINUTES = env_int("DEMO_EXPIRY_MINUTES", 30, minimum=1)
DEMO_MAX_OPEN_DRAFTS = env_int("DEMO_MAX_OPEN_DRAFTS", 100, minimum=1)
DEMO_RATE_LIMIT = env_rate("DEMO_RATE_LIMIT", "10/hour")
# The payment simulator: `make run` turns it on; off otherwise.
DEMO_SIMULATE_PAYMENTS = env_bool("DEMO_SIMULATE_PAYMENTS", False)
DEMO_SIMULATE_INTERVAL_SECONDS = env_int("DEMO_SIMULATE_INTERVAL_SECONDS", 2, minimum=1)
DEMO_SIMULATE_SEEN_AFTER_SECONDS = env_int("DEMO_SIMULATE_SEEN_AFTER_SECONDS", 5, minimum=0)
DEMO_SIMULATE_BLOCK_SECONDS = env_int("DEMO_SIMULATE_BLOCK_SECONDS", 3, minimum=1)
if DEMO_SIMULATE_PAYMENTS:
    CELERY_BEAT_SCHEDULE["demo-simulate-payments"] = {
        "task": "demo.simulate_payments",
        "schedule": float(DEMO_SIMULATE_INTERVAL_SECONDS),
        "options": {"expires": float(DEMO_SIMULATE_INTERVAL_SECONDS)},
    }

# --- Suggestions (suggestions/) ------------------------------------------------------------
SUGGESTIONS_RATE_LIMIT = env_rate("SUGGESTIONS_RATE_LIMIT", "10/hour")

# --- Health -------------------------------------------------------------------------
# /metrics answers loopback clients, and anyone sending `Authorization: Bearer <METRICS_TOKEN>`.
METRICS_TOKEN = env_secret("METRICS_TOKEN") or ""
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
    "filters": {"request_id": {"()": "config.requests.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "config.requests.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
