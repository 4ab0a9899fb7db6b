"""Reads for the demo: what it offers, and its drafts (nobody else's)."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.conf import settings
from django.db.models import QuerySet

from core.problems import NotFound
from drafts.models import OPEN_STATUSES, Draft
from drafts.requests import OriginKind
from payments.registry import all_assets


@dataclass(frozen=True)
class DemoNetwork:
    network: str
    currencies: list[str]
    receiver_address: str


def demo_networks() -> list[DemoNetwork]:
    """Test networks this deployment serves and the operator gave a demo address for."""
    if not settings.DEMO_ENABLED:
        return []
    offered = []
    for network in settings.TEST_NETWORKS:
        address = settings.DEMO_RECEIVING_ADDRESSES.get(network)
        if network in settings.ENABLED_NETWORKS and address:
            currencies = [str(a.currency) for a in all_assets() if a.network == network]
            offered.append(DemoNetwork(network=network, currencies=currencies, receiver_address=address))
    return offered


def demo_drafts() -> QuerySet:
    return Draft.objects.filter(origin=OriginKind.DEMO)


def demo_open_draft_count() -> int:
    return demo_drafts().filter(status__in=OPEN_STATUSES).count()


def demo_draft_get(*, draft_id: UUID | str) -> Draft:
    """A demo draft by id; any other draft is as unknown as a missing one (404)."""
    try:
        return demo_drafts().get(pk=draft_id)
    except (Draft.DoesNotExist, ValueError):
        raise NotFound("No such demo draft.") from None
