"""People and members of an organization for the team tests: a person signed in and working in
an organization (the session's organization key, as the switcher sets it)."""

from __future__ import annotations

import uuid
from typing import TypeVar

from django.test import Client
from rest_framework.test import APIClient

from accounts.models import Membership, User
from accounts.teams import ORGANIZATION_SESSION_KEY

C = TypeVar("C", bound=Client)


def person(label: str = "p") -> User:
    return User.objects.create_user(f"{label}-{uuid.uuid4().hex[:6]}@example.com", "a long enough passphrase")


def working_in(organization: User, someone: User, client_class: type[C] = APIClient) -> C:
    """A client of `someone`, signed in and working in `organization`."""
    client = client_class()
    client.force_login(someone)
    session = client.session
    session[ORGANIZATION_SESSION_KEY] = organization.pk
    session.save()
    return client


def member(organization: User, role: str, client_class: type[C] = APIClient) -> tuple[C, User]:
    """A new person with `role` in `organization`, and their client working in it."""
    someone = person(role)
    Membership.objects.create(organization=organization, person=someone, role=role)
    return working_in(organization, someone, client_class), someone
