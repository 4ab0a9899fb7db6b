"""Invitations to an organization: sent by email with a link valid TEAM_INVITATION_DAYS, used
once, revocable. The invited address is the invitation's secret until it is accepted: the
list shows it masked, to everyone. Accepting needs the invited address's account (signed in)
or creates it (the link, sent to that address, proves it is theirs)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from accounts.models import Invitation, Membership, Role, User
from accounts.passwords import active_user, email_normalize, password_check_strength
from accounts.roles import Work, may
from accounts.services import account_create
from accounts.teams import member_add
from audit import services as audit
from core.problems import Conflict, NotFound, PermissionDenied, Problem
from notifications import kinds
from notifications.services import email_enqueue

ACCEPT_PATH = "/account/invitation/"


class InvitationInvalid(Problem):
    status_code = 404
    default_code = "invitation_invalid"
    default_detail = gettext_lazy("This invitation link is not valid: it was used, revoked or has expired.")


class OwnerInviteRequired(PermissionDenied):
    default_code = "role_required"
    default_detail = "Only an owner may make someone an owner."


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def email_masked(email: str) -> str:
    """`j***@example.com`: enough for a member to recognise an invitation, not to read the address."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}"


def role_grant_check(*, granter_role: str | None, role: str) -> Role:
    """An owner makes owners; an admin every other role."""
    role = Role(role)
    if role == Role.OWNER and not may(granter_role, Work.OWNER):
        raise OwnerInviteRequired(field="role")
    return role


def invitation_create(*, organization: User, inviter: User, inviter_role: str, email: str, role: str) -> str:
    """Invite an address; returns the link (emailed to it)."""
    role = role_grant_check(granter_role=inviter_role, role=role)
    email = email_normalize(email)
    if Membership.objects.filter(organization=organization, person__email=email).exists():
        raise Conflict(gettext("This person is already a member."), code="already_member", field="email")
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    url = f"{settings.BASE_URL}{ACCEPT_PATH}{token}"
    with transaction.atomic():
        invitation = Invitation.objects.create(
            organization=organization,
            email=email,
            role=role,
            token_hash=_hash(token),
            created_by=inviter,
            created_at=now,
            expires_at=now + timedelta(days=settings.TEAM_INVITATION_DAYS),
        )
        audit.record(
            organization=organization,
            action="member.invited",
            changes={"invitation": invitation.id, "email": email_masked(email), "role": role},
        )
        email_enqueue(
            kind=kinds.TEAM_INVITATION,
            to=email,
            context={
                "organization": organization.email,
                "role": str(role),
                "url": url,
                "days": settings.TEAM_INVITATION_DAYS,
            },
        )
    return url


def invitations_pending(*, organization: User):
    return Invitation.objects.filter(
        organization=organization, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    ).select_related("created_by")


def invitation_revoke(*, organization: User, invitation_id) -> Invitation:
    invitation = invitations_pending(organization=organization).filter(pk=invitation_id).first()
    if invitation is None:
        raise NotFound("No such pending invitation.")
    with transaction.atomic():
        Invitation.objects.filter(pk=invitation.pk).update(revoked_at=timezone.now())
        audit.record(
            organization=organization, action="member.invitation_revoked", changes={"invitation": invitation.id}
        )
    invitation.revoked_at = timezone.now()
    return invitation


def invitation_accept(*, token: str, person: User | None, password: str | None = None) -> tuple[Membership, bool]:
    """Join the organization as `person` (signed in: their address must be the invited one), or,
    signed out, create the invited address's account with `password`. Returns the membership
    and whether an account was created."""
    now = timezone.now()
    with transaction.atomic():
        invitation = (
            Invitation.objects.select_for_update()
            .select_related("organization")
            .filter(token_hash=_hash(token or ""), accepted_at__isnull=True, revoked_at__isnull=True)
            .filter(expires_at__gt=now)
            .first()
        )
        if invitation is None:
            raise InvitationInvalid()
        created = False
        if person is None:
            if active_user(invitation.email) is not None:
                raise Conflict(
                    "An account with this address exists: sign in, then open the link again.", code="sign_in_first"
                )
            if not password:
                raise Problem(gettext("Choose a password for the new account."), code="required", field="password")
            password_check_strength(password, email=invitation.email)
            person, created = account_create(email=invitation.email, password_hash=make_password(password)), True
        elif person.email != invitation.email:
            raise PermissionDenied(
                "This invitation is for another address: sign in with the invited one.", code="invitation_other_person"
            )
        Invitation.objects.filter(pk=invitation.pk).update(accepted_at=now, accepted_by=person)
        membership = member_add(organization=invitation.organization, person=person, role=invitation.role)
    return membership, created
