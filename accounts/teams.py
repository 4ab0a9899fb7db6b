"""Organizations and their members: which organization a signed-in person works in, with which
role, and the changes to membership.

An organization is an account (`accounts.User`, the row that owns every object); a person signs
in as themselves and works in their own account (of which they are the owner) or in another one
they are a member of, chosen with the dashboard's organization switcher and kept in the session.
`organization_resolve` runs once per signed-in request (accounts.middleware), before the
authorization table's rule is checked: on an organization's route the request's `user` becomes
the organization, so every view's "owner" is the organization's account without the view
knowing; `request.person` stays the person who signed in and `request.role` is their role.

A person's own account costs no query; another organization costs one (the membership, joined
with the organization). A member removed from an organization finds their next request refused
and their session ended; the API keys they created in it are revoked at their removal.
API keys belong to the organization (`ApiKey.user`) and say who created them (`created_by`).
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from accounts.languages import account_language, supported
from accounts.models import ApiKey, Membership, MerchantProfile, Role, User
from accounts.roles import GRANTS, Work
from audit import services as audit
from core.problems import NotFound, Problem

ORGANIZATION_SESSION_KEY = "accounts.organization"  # the pk of the organization worked in


class OrganizationRequest(HttpRequest):
    """A signed-in session's request once `organization_resolve` ran: who signed in (`person`),
    the organization worked in (`account`) and the person's role there (None: not a member)."""

    person: User
    account: User
    role: str | None


class LastOwner(Problem):
    status_code = 409
    default_code = "last_owner"
    default_detail = "An organization keeps at least one owner: make another member an owner first."


class OwnAccountOwner(Problem):
    status_code = 409
    default_code = "own_account_owner"
    default_detail = "A person always owns their own account; they cannot leave it or be removed from it."


def organization_resolve(request: OrganizationRequest, person: User) -> bool:
    """Set `request.person`, `request.account` (the organization worked in) and `request.role`.
    False when the session names an organization the person is no longer a member of."""
    request.person = person
    organization_id = request.session.get(ORGANIZATION_SESSION_KEY)
    if organization_id is None or organization_id == person.pk:
        request.account, request.role = person, Role.OWNER
        return True
    membership = (
        Membership.objects.select_related("organization__merchant_profile")
        .filter(person=person, organization_id=organization_id, organization__is_active=True)
        .first()
    )
    if membership is None:
        request.account, request.role = person, None
        return False
    request.account, request.role = membership.organization, membership.role
    return True


def second_factor_missing(request) -> bool:
    """The organization worked in requires a second factor of its members and the person who
    signed in has none (TOTP or passkey). A person's own account asks nothing (its owner needed
    one to turn the requirement on); another organization's setting came with the membership's
    query, so only a member of an organization that requires it pays a query for it."""
    account, person = request.account, request.person
    if account.pk == person.pk:
        return False
    try:
        required = account.merchant_profile.require_second_factor
    except ObjectDoesNotExist:
        return False
    from accounts.stepup import has_second_factor

    return required and not has_second_factor(person)


class SecondFactorFirst(Problem):
    status_code = 409
    default_code = "second_factor_first"
    default_detail = "Set up a second factor (an authenticator app or a passkey) for yourself before requiring one."


def second_factor_required_get(*, organization: User) -> bool:
    return bool(
        MerchantProfile.objects.filter(user_id=organization.pk).values_list("require_second_factor", flat=True).first()
    )


def second_factor_required_set(*, organization: User, person: User, required: bool) -> bool:
    """An owner requires (or stops requiring) a second factor of every member; they must have
    one themselves to require it. Audit-logged."""
    from accounts.profiles import DEFAULTS
    from accounts.stepup import has_second_factor

    if required and not has_second_factor(person):
        raise SecondFactorFirst(field="requireSecondFactor")
    with transaction.atomic():
        row, _created = MerchantProfile.objects.select_for_update().get_or_create(
            user_id=organization.pk, defaults=DEFAULTS
        )
        if row.require_second_factor != required:
            MerchantProfile.objects.filter(pk=row.pk).update(require_second_factor=required)
            audit.record(
                organization=organization,
                action="settings.second_factor_required",
                changes={"requireSecondFactor": [row.require_second_factor, required]},
            )
    return required


def organizations_of(*, person: User) -> list[Membership]:
    """The organizations a person may work in (their own first)."""
    memberships = list(
        Membership.objects.select_related("organization")
        .filter(person=person, organization__is_active=True)
        .order_by("created_at", "pk")
    )
    return sorted(memberships, key=lambda m: m.organization_id != person.pk)


def organization_switch(request: HttpRequest, *, person: User, organization_public_id: str) -> Membership:
    """Work in another organization the person is a member of (the dashboard's switcher)."""
    membership = (
        Membership.objects.select_related("organization")
        .filter(person=person, organization__public_id=organization_public_id, organization__is_active=True)
        .first()
    )
    if membership is None:
        raise NotFound("No such organization.", field="organization")
    request.session[ORGANIZATION_SESSION_KEY] = membership.organization_id
    return membership


def member_leave(request) -> Membership:
    """The signed-in person leaves the organization they work in (any member but the last owner,
    and never their own account); their session moves to their own account."""
    membership = Membership.objects.select_related("person").get(
        organization_id=request.account.pk, person_id=request.person.pk
    )
    member_remove(membership=membership, action="member.left")
    request.session.pop(ORGANIZATION_SESSION_KEY, None)
    request.user = request.account = request.person
    request.role = Role.OWNER
    return membership


def members_of(*, organization: User):
    return Membership.objects.select_related("person").filter(organization=organization).order_by("created_at", "pk")


def _owners_left(organization: User, *, without: Membership) -> int:
    return (
        Membership.objects.select_for_update()
        .filter(organization=organization, role=Role.OWNER)
        .exclude(pk=without.pk)
        .count()
    )


def member_get(*, organization: User, person_public_id) -> Membership:
    membership = members_of(organization=organization).filter(person__public_id=person_public_id).first()
    if membership is None:
        raise NotFound("No such member.", field="member")
    return membership


def member_add(*, organization: User, person: User, role: str) -> Membership:
    membership, created = Membership.objects.get_or_create(
        organization=organization, person=person, defaults={"role": Role(role)}
    )
    if created:
        audit.record(
            organization=organization, action="member.added", changes={"person": person.public_id, "role": role}
        )
    return membership


def member_role_set(*, membership: Membership, role: str) -> Membership:
    role = Role(role)
    with transaction.atomic():
        if membership.person_id == membership.organization_id and role != Role.OWNER:
            raise OwnAccountOwner(field="role")
        if (
            membership.role == Role.OWNER
            and role != Role.OWNER
            and not _owners_left(membership.organization, without=membership)
        ):
            raise LastOwner(field="role")
        Membership.objects.filter(pk=membership.pk).update(role=role)
        audit.record(
            organization=membership.organization_id,
            action="member.role_changed",
            changes={"person": membership.person.public_id, "role": [membership.role, role]},
        )
    membership.role = role
    return membership


def member_remove(*, membership: Membership, action: str = "member.removed") -> int:
    """Remove a member: their next request in the organization is refused (their session
    ends) and the API keys they created in it are revoked. Returns how many keys were revoked.
    `action`: "member.left" when the member leaves on their own."""
    with transaction.atomic():
        if membership.person_id == membership.organization_id:
            raise OwnAccountOwner()
        if membership.role == Role.OWNER and not _owners_left(membership.organization, without=membership):
            raise LastOwner()
        membership.delete()
        revoked = ApiKey.objects.filter(
            user_id=membership.organization_id, created_by_id=membership.person_id, revoked_at__isnull=True
        ).update(revoked_at=timezone.now())
        audit.record(
            organization=membership.organization_id,
            action=action,
            changes={"person": membership.person.public_id, "role": membership.role, "keysRevoked": revoked},
        )
        return revoked


def email_readers(organization: User, work: str) -> list[tuple[int, str, str | None]]:
    """Who reads the organization's emails about `work` (notifications.kinds audience): each
    active member whose role grants it, as (person id, address, their language), the
    organization's own person first. One query."""
    roles = [role for role, grants in GRANTS.items() if Work(work) in grants]
    memberships = (
        Membership.objects.select_related("person__merchant_profile")
        .filter(organization=organization, role__in=roles, person__is_active=True)
        .order_by("created_at", "pk")
    )
    readers: list[tuple[int, str, str | None]] = []
    for membership in memberships:
        person = membership.person
        try:
            language = supported(person.merchant_profile.language)
        except ObjectDoesNotExist:  # no profile: the defaults (English)
            language = None
        reader = (person.pk, person.email, language)
        if person.pk == organization.pk:
            readers.insert(0, reader)
        else:
            readers.append(reader)
    if not any(pk == organization.pk for pk, _address, _language in readers):
        readers.insert(0, (organization.pk, organization.email, account_language(organization)))
    return readers
