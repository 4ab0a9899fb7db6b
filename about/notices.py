"""What this deployment leaves off, and how to turn it on.

Informational, not failures: `make run` prints them at start (`manage.py notices`), and
`/healthz` lists them under `notices` while still answering 200.
"""

from __future__ import annotations

from django.conf import settings


def setup_notices() -> list[str]:
    """One line per thing that is off: what it means and which setting turns it on."""
    from chainwatch.networks import watchers
    from payments.registry import network_info

    notices = []
    enabled = list(settings.ENABLED_NETWORKS)
    without_fee_address = [n for n in enabled if n not in settings.PLATFORM_FEE_ADDRESSES]
    if without_fee_address:
        bitcoin = [n for n in without_fee_address if network_info(n).family == "bitcoin"]
        effect = "MultiOutput drafts carry no fee output (the fee accrues) and fee settlement is refused"
        if not bitcoin:
            effect = "fee settlement is refused"
        example = settings.PLATFORM_FEE_ADDRESS_VARIABLES[without_fee_address[0]][0]
        notices.append(
            f"No fee address for {', '.join(without_fee_address)}: {effect} there. "
            f"Set FEE_ADDRESS_<NETWORK> (e.g. {example}=<your address>)."
        )
    watched = {network for network, family in watchers(with_endpoint=True) if family != "lightning"}
    unwatched = [n for n in enabled if n not in watched]
    if unwatched:
        notices.append(
            f"No node endpoint for {', '.join(unwatched)}: nothing watches these chains, so their drafts never "
            "leave Pending. Set RPC_URL_<NETWORK> (EVM, Solana) or BITCOIN_RPC_URL_<NETWORK> / "
            "ESPLORA_URL_<NETWORK> (Bitcoin), e.g. RPC_URL_SEPOLIA=http://127.0.0.1:8545."
        )
    if settings.FIELD_ENCRYPTION_KEYS == [settings.SECRET_KEY]:
        notices.append(
            "No FIELD_ENCRYPTION_KEY: webhook secrets and authenticator keys are encrypted with a key derived "
            "from SECRET_KEY (DEBUG only; changing SECRET_KEY makes them unreadable). Set FIELD_ENCRYPTION_KEY."
        )
    notices += _rates_notices()
    return notices


def _rates_notices() -> list[str]:
    from payments.rates.feed import bundled_notice

    if not settings.RATES_BUNDLED_ALLOWED:
        return []
    try:
        now = bundled_notice()
    except Exception:  # noqa: BLE001 - the shared cache unreachable: a notice still says what is allowed
        now = None
    # At start-up nothing is fetched yet: say what happens until (and whenever) live rates are missing.
    return [
        now
        or "RATES_BUNDLED_ALLOWED=true: whenever live rates are missing or stale, the bundled, dated rate table "
        'prices drafts and pay links, marked "not live". Set RATES_BUNDLED_ALLOWED=false in production.'
    ]
