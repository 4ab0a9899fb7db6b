"""Settings come from the environment and fail loudly; production mode is TLS-ready."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests import fresh

ROOT = Path(__file__).resolve().parents[2]
PRINT = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({k: getattr(s, k) for k in %r}, default=str))"
)


def settings_under(env: dict[str, str], *names: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean |= {
        "ENV_FILE": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "VAR_DIR": "/tmp/settings-test-var",
        "FIELD_ENCRYPTION_KEY": "settings-test-" + "f" * 40,
    } | env
    return fresh.run([sys.executable, "-c", PRINT % (list(names),)], cwd=ROOT, env=clean, timeout=60)


def test_production_mode_needs_a_secret_key():
    result = settings_under({}, "DEBUG")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_mode_needs_a_field_encryption_key_of_some_length():
    missing = settings_under({"SECRET_KEY": "x" * 50, "FIELD_ENCRYPTION_KEY": ""}, "DEBUG")
    short = settings_under({"SECRET_KEY": "x" * 50, "FIELD_ENCRYPTION_KEY": "a" * 40 + ",short"}, "DEBUG")

    assert missing.returncode != 0 and "Set FIELD_ENCRYPTION_KEY" in missing.stderr
    assert short.returncode != 0 and "FIELD_ENCRYPTION_KEY: key 2 is shorter than 32 characters" in short.stderr


def test_debug_mode_without_a_field_encryption_key_starts_and_says_what_it_uses():
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    env |= {"ENV_FILE": "", "VAR_DIR": "/tmp/settings-test-var", "DEBUG": "true", "SECRET_KEY": "d" * 50}
    result = fresh.run([sys.executable, "manage.py", "notices"], cwd=ROOT, env=env, timeout=60)

    assert result.returncode == 0, result.stderr
    assert "No FIELD_ENCRYPTION_KEY" in result.stdout and "derived from SECRET_KEY" in result.stdout


def test_production_mode_is_ready_for_tls():
    result = settings_under(
        {"SECRET_KEY": "x" * 50},
        "DEBUG",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS",
        "SECURE_CONTENT_TYPE_NOSNIFF",
        "SECURE_REFERRER_POLICY",
        "SECURE_SSL_REDIRECT",
        "ENABLED_NETWORKS",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SECURE_SSL_REDIRECT"]
    assert values["SECURE_HSTS_SECONDS"] >= 31536000
    assert values["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert values["SECURE_REFERRER_POLICY"] == "same-origin"
    assert values["ENABLED_NETWORKS"] == ["Mainnet", "Solana", "Ethereum", "Base"]


def test_secrets_can_come_from_files(tmp_path):
    secret = tmp_path / "key"
    secret.write_text("from-a-file-" + "y" * 40 + "\n")
    result = settings_under({"SECRET_KEY_FILE": str(secret)}, "SECRET_KEY")
    assert json.loads(result.stdout)["SECRET_KEY"] == "from-a-file-" + "y" * 40


def test_embedded_defaults_are_sqlite_and_a_filesystem_broker():
    result = settings_under({"SECRET_KEY": "x" * 50}, "DATABASES", "CELERY_BROKER_URL")
    values = json.loads(result.stdout)
    assert values["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert values["CELERY_BROKER_URL"] == "filesystem://"


def test_postgres_and_redis_are_used_when_configured():
    result = settings_under(
        {"SECRET_KEY": "x" * 50, "DATABASE_URL": "postgres://u@db:5432/pay", "CELERY_BROKER_URL": "redis://r:6379/0"},
        "DATABASES",
        "CELERY_BROKER_URL",
    )
    values = json.loads(result.stdout)
    assert values["DATABASES"]["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert values["CELERY_BROKER_URL"] == "redis://r:6379/0"


def test_bad_values_fail_loudly():
    for env, name in [
        ({"DEBUG": "maybe"}, "DEBUG"),
        ({"EMAIL_PORT": "twenty-five"}, "EMAIL_PORT"),
        ({"ENABLED_NETWORKS": "Mainnet,Dogecoin"}, "Dogecoin"),
        ({"API_RATE_LIMIT_PDF_PER_KEY": "20/fortnight"}, "API_RATE_LIMIT_PDF_PER_KEY"),
        ({"API_KEYS_PER_ACCOUNT_MAX": "0"}, "API_KEYS_PER_ACCOUNT_MAX"),
    ]:
        result = settings_under({"SECRET_KEY": "x" * 50} | env, "DEBUG")
        assert result.returncode != 0 and name in result.stderr, (env, result.stderr[-300:])


def test_debug_mode_generates_a_development_key_into_an_ignored_file():
    result = settings_under({"DEBUG": "true"}, "SECRET_KEY")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["SECRET_KEY"]) >= 50
    assert ".secret_key" in (ROOT / ".gitignore").read_text()


def test_operator_fee_addresses_are_validated_at_start_up():
    good = settings_under(
        {"SECRET_KEY": "x" * 50, "FEE_ADDRESS_MAINNET": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
        "PLATFORM_FEE_ADDRESSES",
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["PLATFORM_FEE_ADDRESSES"] == {
        "Mainnet": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
    }
    bad = settings_under(
        {"SECRET_KEY": "x" * 50, "FEE_ADDRESS_ETHEREUM": "0x52908400098527886e0F7030069857D2E4169EE7"},
        "PLATFORM_FEE_ADDRESSES",
    )
    assert bad.returncode != 0 and "FEE_ADDRESS_ETHEREUM" in bad.stderr


def test_regtest_and_signet_fee_addresses_are_read_and_validated():
    env = {
        "SECRET_KEY": "x" * 50,
        "FEE_ADDRESS_REGTEST": "bcrt1qd7spv5q28348xl4myc8zmh983w5jx32cs707jh",
        "FEE_ADDRESS_SIGNET": "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
    }
    good = settings_under(env, "PLATFORM_FEE_ADDRESSES")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["PLATFORM_FEE_ADDRESSES"] == {
        "Signet": "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl",
        "Regtest": "bcrt1qd7spv5q28348xl4myc8zmh983w5jx32cs707jh",
    }
    bad = settings_under({"SECRET_KEY": "x" * 50, "FEE_ADDRESS_REGTEST": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"})
    assert bad.returncode != 0 and "FEE_ADDRESS_REGTEST" in bad.stderr


def test_the_outbound_loopback_switch_is_off_by_default_and_also_read_under_its_former_names():
    base = {"SECRET_KEY": "x" * 50}
    assert json.loads(settings_under(base, "OUTBOUND_ALLOW_LOOPBACK").stdout)["OUTBOUND_ALLOW_LOOPBACK"] is False
    for name in ("OUTBOUND_ALLOW_LOOPBACK", "WEBHOOKS_ALLOW_LOOPBACK", "LNURL_ALLOW_HTTP_LOOPBACK"):
        result = settings_under(base | {name: "true"}, "OUTBOUND_ALLOW_LOOPBACK")
        assert json.loads(result.stdout)["OUTBOUND_ALLOW_LOOPBACK"] is True, name


def test_signet_and_regtest_are_off_by_default_even_in_debug_and_on_when_named():
    default = settings_under({"DEBUG": "1"}, "ENABLED_NETWORKS", "CELERY_BEAT_SCHEDULE")
    assert default.returncode == 0, default.stderr
    values = json.loads(default.stdout)
    assert "Testnet" in values["ENABLED_NETWORKS"]
    assert not {"Signet", "Regtest"} & set(values["ENABLED_NETWORKS"])

    named = settings_under({"DEBUG": "1", "ENABLED_NETWORKS": "Mainnet,Signet,Regtest"}, "CELERY_BEAT_SCHEDULE")
    assert named.returncode == 0, named.stderr
    beat = json.loads(named.stdout)["CELERY_BEAT_SCHEDULE"]
    assert {"chainwatch-signet-bitcoin", "chainwatch-regtest-bitcoin", "chainwatch-regtest-lightning"} <= set(beat)


def test_on_the_embedded_broker_emails_have_a_queue_and_a_worker_of_their_own():
    """Under `make run` a sign-in code never waits behind webhook deliveries: emails go to the
    `email` queue, which a worker of its own serves; with a broker server nothing is routed, so a
    production worker (default queue) runs everything."""
    route = (
        "import json, django; django.setup(); from config.celery import app; "
        "print(json.dumps([app.amqp.router.route({}, t)['queue'].name "
        "for t in ('notifications.send_email', 'notifications.send_due_emails', 'webhooks.deliver')]))"
    )
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean |= {
        "ENV_FILE": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "VAR_DIR": "/tmp/settings-test-var",
        "SECRET_KEY": "x" * 50,
        "FIELD_ENCRYPTION_KEY": "settings-test-" + "f" * 40,
    }
    for broker, queues in ((None, ["email", "email", "celery"]), ("redis://r:6379/0", ["celery"] * 3)):
        env = clean | ({"CELERY_BROKER_URL": broker} if broker else {})
        result = fresh.run([sys.executable, "-c", route], cwd=ROOT, env=env)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout.strip().splitlines()[-1]) == queues, broker
    run_sh = (ROOT / "scripts" / "run.sh").read_text()
    assert re.search(r"celery -A config (\S+ )?worker .*--concurrency 1 -Q email\b", run_sh)
    assert re.search(r"celery -A config (\S+ )?worker .*\\\n\s+-Q celery,email\b", run_sh)


def test_collected_scripts_and_styles_are_compressed_and_source_maps_are_not(settings):
    """Payers' phones get the pages' scripts and styles brotli- and gzip-compressed (whitenoise at
    collectstatic); source maps, two thirds of the collected bytes and read only by developer
    tools, are served as they are rather than compressed at every start."""
    from whitenoise.compress import Compressor

    compressor = Compressor(extensions=settings.WHITENOISE_SKIP_COMPRESS_EXTENSIONS, quiet=True)
    assert compressor.should_compress("paylinks/pay.css")
    assert compressor.should_compress("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert not compressor.should_compress("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js.map")
    assert not compressor.should_compress("paylinks/logo.png")


def test_collectstatic_collects_what_pages_load_and_not_the_unused_api_browser_or_redoc(settings, tmp_path):
    """`collectstatic` (at every start of `make run`, in the image) copies and compresses the
    pages' files and the API reference's (/swagger), not DRF's browsable-API assets or ReDoc's
    bundle, which no page of the service loads."""
    from django.core.management import call_command

    root = settings.STATIC_ROOT = tmp_path / "static"
    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # what is collected, not compressed
    settings.STORAGES = {**settings.STORAGES, "staticfiles": plain}
    call_command("collectstatic", interactive=False, verbosity=0)
    collected = {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}
    swagger = "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"
    assert {"paylinks/pay.css", "dashboard/app.js", swagger} <= collected
    assert any(path.startswith("admin/") for path in collected)
    assert not [path for path in collected if path.startswith("rest_framework/") or "/redoc/" in path]
