"""Live and test mode: which of an account's objects a caller sees and makes.

An API key is live or test (``pdk_test_...``). Authentication marks the account it returns
with the key's mode (``mode_set``); a dashboard session marks it from its "Test mode" switch.
Every object an account owns (drafts, pay links, recurring templates, webhook endpoints,
events) carries a ``livemode`` column written from that mode, and every read of them goes
through ``owned``: a test key sees only test objects, a live key only live ones.

A test-mode caller creates only on test networks; test fees never accrue.
"""

from __future__ import annotations

from typing import TypeVar

from django.conf import settings
from django.db.models import Model, QuerySet

from core.problems import Problem
from payments.registry import NETWORKS

M = TypeVar("M", bound=Model)

# The attributes on the account instance a request works with.
_MODE_ATTRIBUTE = "livemode"
_KEY_ATTRIBUTE = "acting_by_key"


def livemode_of(user) -> bool:
    """The mode the caller works in: live unless a test key or the dashboard's test switch said so."""
    return getattr(user, _MODE_ATTRIBUTE, True)


def mode_set(user, *, livemode: bool):
    """Mark the account instance of a request (or of a task acting for an object) with a mode."""
    setattr(user, _MODE_ATTRIBUTE, livemode)
    return user


def by_key_set(user):
    """Mark the account instance of a request as acting through an API key (REST or MCP):
    authentication does, next to `mode_set`. The receiving-address lock and step-up read it."""
    setattr(user, _KEY_ATTRIBUTE, True)
    return user


def by_key(user) -> bool:
    """Whether the caller is an API key (REST or MCP), not a person's session or a task."""
    return getattr(user, _KEY_ATTRIBUTE, False)


def owned(objects: type[M] | QuerySet[M], user) -> QuerySet[M]:
    """The objects of this account in the caller's mode: the one filter every read of owned
    objects goes through."""
    queryset = objects if isinstance(objects, QuerySet) else objects._default_manager.all()
    return queryset.filter(user=user, livemode=livemode_of(user))


class LiveNetworkInTestMode(Problem):
    default_code = "live_network_in_test_mode"


def test_networks() -> list[str]:
    return [str(network) for network, info in NETWORKS.items() if info.is_testnet]


def network_check(user, network: str | None, *, field: str = "network") -> None:
    """Refuse a main network to a test-mode caller: test objects live on test networks only."""
    if network is None or livemode_of(user):
        return
    info = NETWORKS.get(network)
    if info is not None and not info.is_testnet:
        enabled = set(settings.ENABLED_NETWORKS)
        names = ", ".join(NETWORKS[n].network.label for n in test_networks() if n in enabled)
        raise LiveNetworkInTestMode(
            f"{info.network.label} is a main network, and test mode uses test networks only: pick one of {names}.",
            field=field,
            extra={"testNetworks": test_networks()},
        )
