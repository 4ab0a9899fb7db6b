"""Test settings: the real settings module, with the environment a test run needs.

Tests run against PostgreSQL and Redis on localhost (`make test` starts them).
Override any of these through the environment, e.g. a separate DATABASE_URL per checkout.
"""

import os

os.environ.setdefault("ENV_FILE", "")  # never a developer's local .env from `make run`
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/payments")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ.setdefault("CACHE_URL", "redis://127.0.0.1:6379/1")
# Every test run's cache keys carry a prefix, and each pytest-xdist worker (PYTEST_XDIST_WORKER,
# gw0, gw1, ...) one of its own, so workers sharing the Redis database never see each other's
# keys and tests/conftest.py empties only its own (docs/development.md, "Running the tests").
# Processes a test starts inherit the variable already suffixed and keep it as it is.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_prefix = os.environ.get("CACHE_KEY_PREFIX") or "test"
if _worker and not _prefix.endswith(f"-{_worker}"):
    _prefix = f"{_prefix}-{_worker}"
os.environ["CACHE_KEY_PREFIX"] = _prefix
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("FIELD_ENCRYPTION_KEY", "test-only-field-encryption-key-not-for-production")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("BASE_URL", "http://testserver")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
# No live rate provider (no internet in tests): the bundled table prices, marked not live.
# Tests of the live feed point providers at local servers and turn this off (tests/payments).
os.environ.setdefault("RATES_CRYPTO_PROVIDERS", "")
os.environ.setdefault("RATES_FX_PROVIDERS", "")
os.environ.setdefault("RATES_BUNDLED_ALLOWED", "true")
os.environ.setdefault("ENABLED_NETWORKS", "Mainnet,Solana,Ethereum,Base,Testnet,SolanaDevnet,Sepolia,BaseSepolia")

from config.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; never in production
# Processes a test starts may be given another (TESTS_EMAIL_BACKEND: an SMTP server that refuses).
EMAIL_BACKEND = os.environ.get("TESTS_EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
# A commit of the tests' PostgreSQL sessions does not wait for its WAL to reach the disk (the
# server's fsync, milliseconds per commit on a shared disk): the migrations of each worker's test
# database, every committing test and the servers started with these settings commit hundreds of
# times a file. Only a crash of the PostgreSQL server could lose those last commits, and a test
# run does not outlive one; what a transaction sees and when it is visible to others is unchanged.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"  # noqa: F405
RATES_LOCAL_CACHE_SECONDS = 0  # tests change the shared rate tables and expect it to show at once
# The service's table and the rules of the views that exist only in tests (tests/platform/urls.py).
AUTHORIZATION_TABLE = "tests.platform.authorization.ROUTES"

# The broker's queues under the same prefix (kombu's global_keyprefix), so a Celery worker a test
# starts takes only the tasks its own pytest worker sent; the database name already differs per
# xdist worker (pytest-django adds the _gw0 suffix).
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):  # noqa: F405
    CELERY_BROKER_TRANSPORT_OPTIONS = {**CELERY_BROKER_TRANSPORT_OPTIONS, "global_keyprefix": f"{_prefix}:"}  # noqa: F405
