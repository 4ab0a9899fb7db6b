"""Money-core settings come from the environment and fail loudly on bad values."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
        "DEBUG": "true",
    }
    return fresh.run(
        [sys.executable, "-c", PRINT % (list(names),)],
        cwd=ROOT,
        env=clean | env,
        timeout=60,
    )


def test_the_defaults_are_live_providers_without_the_snapshot_and_the_specs_fees():
    result = settings_under(
        {},
        "RATES_CRYPTO_PROVIDERS",
        "RATES_FX_PROVIDERS",
        "RATES_BUNDLED_ALLOWED",
        "QUOTE_LOCK_MINUTES",
        "FEE_MIN_USD",
        "FEE_MAX_USD",
        "FEE_DUST_LIMIT_SATS",
        "FEE_DUST_WAIVERS_PER_DAY",
        "TOKEN_ADDRESSES",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values == {
        "RATES_CRYPTO_PROVIDERS": ["kraken", "coinbase", "bitstamp", "coingecko"],
        "RATES_FX_PROVIDERS": ["ecb", "open-er-api"],
        "RATES_BUNDLED_ALLOWED": False,
        "QUOTE_LOCK_MINUTES": 15,
        "FEE_MIN_USD": "0.01",
        "FEE_MAX_USD": "100",
        "FEE_DUST_LIMIT_SATS": 546,
        "FEE_DUST_WAIVERS_PER_DAY": 10,
        "TOKEN_ADDRESSES": {},
    }


def test_providers_and_token_overrides_are_read_from_the_environment():
    result = settings_under(
        {
            "RATES_CRYPTO_PROVIDERS": "coingecko=http://127.0.0.1:8001,coingecko",
            "TOKEN_ADDRESSES": '{"USDC": {"Ethereum": "0x5FbDB2315678afecb367f032d93F642f64180aa3"}}',
        },
        "RATES_CRYPTO_PROVIDERS",
        "TOKEN_ADDRESSES",
        "CELERY_BEAT_SCHEDULE",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["RATES_CRYPTO_PROVIDERS"] == ["coingecko=http://127.0.0.1:8001", "coingecko"]
    assert values["TOKEN_ADDRESSES"]["USDC"]["Ethereum"].startswith("0x5FbDB")
    assert "payments-rates-refresh" in values["CELERY_BEAT_SCHEDULE"]


@pytest.mark.parametrize(
    "env,named",
    [
        ({"TOKEN_ADDRESSES": "{not json"}, "TOKEN_ADDRESSES"),
        ({"TOKEN_ADDRESSES": '{"USDC": "0xabc"}'}, "TOKEN_ADDRESSES"),
        ({"RATES_CRYPTO_PROVIDERS": "coinmarketcap"}, "RATES_CRYPTO_PROVIDERS"),
        ({"RATES_FX_PROVIDERS": "coingecko"}, "RATES_FX_PROVIDERS"),
        ({"RATES_CRYPTO_PROVIDERS": "kraken,snapshot"}, "RATES_BUNDLED_ALLOWED"),
        ({"RATES_FX_PROVIDERS": ""}, "RATES_FX_PROVIDERS"),
        ({"RATES_OUTLIER_PERCENT": "0"}, "RATES_OUTLIER_PERCENT"),
        ({"RATES_STABLECOINS_AT_PAR": "DAI"}, "RATES_STABLECOINS_AT_PAR"),
        ({"RATES_MAX_AGE_SECONDS": "30", "RATES_REFRESH_SECONDS": "60"}, "RATES_MAX_AGE_SECONDS"),
        ({"FEE_TIERS": "[{"}, "FEE_TIERS"),
        ({"FEE_MAX_USD": "lots"}, "FEE_MAX_USD"),
        ({"QUOTE_LOCK_MINUTES": "0"}, "QUOTE_LOCK_MINUTES"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(env, named):
    result = settings_under(env, "DEBUG")
    assert result.returncode != 0
    assert named in result.stderr
