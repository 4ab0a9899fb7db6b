"""The team of an organization: its members (GET; PATCH a role; DELETE a member) and the
invitations (POST, GET, DELETE one; accept by the emailed link). Members and invitations need
the session of an owner or admin (config/authorization.py); accepting, the invited person
(signed in, or signed out to create their account)."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import invitations, teams
from accounts.models import Role
from accounts.profiles import merchant_profile_update, support_refund_limit
from core.api.pagination import PageQuerySerializer, paged_envelope_serializer, paginate
from core.api.problems import validated
from core.api.serializers import StrictChoiceField, StrictSerializer
from core.wire import json_datetime

TAG = ["team"]
ROLES = [(role.value, role.value) for role in Role]


class MemberSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The person's id")
    email = serializers.EmailField()
    role = serializers.ChoiceField(choices=ROLES)
    createdAt = serializers.DateTimeField()


class MemberListSerializer(serializers.Serializer):
    items = MemberSerializer(many=True)


class MemberUpdateSerializer(StrictSerializer):
    role = StrictChoiceField(choices=ROLES)


class InvitationSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    emailHint = serializers.CharField(help_text="The invited address, masked until it is accepted")
    role = serializers.ChoiceField(choices=ROLES)
    createdAt = serializers.DateTimeField()
    expiresAt = serializers.DateTimeField()


InvitationListSerializer = paged_envelope_serializer("InvitationList", InvitationSerializer)


class InvitationCreateSerializer(StrictSerializer):
    email = serializers.EmailField(max_length=254)
    role = StrictChoiceField(choices=ROLES)


class InvitationCreatedSerializer(serializers.Serializer):
    sent = serializers.BooleanField(help_text="The link was emailed to the invited address")


class InvitationAcceptSerializer(StrictSerializer):
    token = serializers.CharField(max_length=100)
    password = serializers.CharField(
        max_length=200, required=False, help_text="Signed out: the new account's password (none exists yet)"
    )


class InvitationAcceptedSerializer(serializers.Serializer):
    organization = serializers.UUIDField()
    role = serializers.ChoiceField(choices=ROLES)
    accountCreated = serializers.BooleanField()


def _member_json(membership) -> dict:
    return {
        "id": str(membership.person.public_id),
        "email": membership.person.email,
        "role": membership.role,
        "createdAt": json_datetime(membership.created_at),
    }


def _invitation_json(invitation) -> dict:
    return {
        "id": str(invitation.id),
        "emailHint": invitations.email_masked(invitation.email),
        "role": invitation.role,
        "createdAt": json_datetime(invitation.created_at),
        "expiresAt": json_datetime(invitation.expires_at),
    }


class TeamMembersView(APIView):
    @extend_schema(tags=TAG, summary="The organization's members and their roles", responses=MemberListSerializer)
    def get(self, request):
        return Response({"items": [_member_json(m) for m in teams.members_of(organization=request.user)]})


class TeamMemberView(APIView):
    problem_statuses = {"PATCH": (409,), "DELETE": (409,)}

    @extend_schema(
        tags=TAG,
        summary="Change a member's role (owners: by an owner)",
        request=MemberUpdateSerializer,
        responses=MemberSerializer,
    )
    def patch(self, request, person_id):
        body = validated(MemberUpdateSerializer, request.data)
        with transaction.atomic():
            membership = teams.member_get(organization=request.user, person_public_id=person_id)
            invitations.role_grant_check(granter_role=request.role, role=body["role"])
            if membership.role == Role.OWNER:
                invitations.role_grant_check(granter_role=request.role, role=Role.OWNER)
            membership = teams.member_role_set(membership=membership, role=body["role"])
        return Response(_member_json(membership))

    @extend_schema(tags=TAG, summary="Remove a member: their sessions and keys stop", responses={200: MemberSerializer})
    def delete(self, request, person_id):
        membership = teams.member_get(organization=request.user, person_public_id=person_id)
        if membership.role == Role.OWNER:
            invitations.role_grant_check(granter_role=request.role, role=Role.OWNER)
        teams.member_remove(membership=membership)
        return Response(_member_json(membership))


class TeamInvitationsView(APIView):
    problem_statuses = {"POST": (409,)}

    @extend_schema(
        tags=TAG,
        summary="Pending invitations (the addresses masked), newest first",
        parameters=[PageQuerySerializer],
        responses=InvitationListSerializer,
    )
    def get(self, request):
        page = paginate(invitations.invitations_pending(organization=request.user), request.query_params)
        return Response(page.envelope([_invitation_json(i) for i in page.items]))

    @extend_schema(
        tags=TAG,
        summary="Invite an address with a role: a link valid TEAM_INVITATION_DAYS is emailed",
        request=InvitationCreateSerializer,
        responses=InvitationCreatedSerializer,
    )
    def post(self, request):
        body = validated(InvitationCreateSerializer, request.data)
        invitations.invitation_create(
            organization=request.user,
            inviter=request.person,
            inviter_role=request.role,
            email=body["email"],
            role=body["role"],
        )
        return Response({"sent": True})


class TeamInvitationView(APIView):
    @extend_schema(tags=TAG, summary="Revoke a pending invitation", responses={200: InvitationSerializer})
    def delete(self, request, invitation_id):
        return Response(
            _invitation_json(invitations.invitation_revoke(organization=request.user, invitation_id=invitation_id))
        )


class TeamInvitationAcceptView(APIView):
    problem_statuses = {"POST": (409,)}

    @extend_schema(
        tags=TAG,
        summary="Accept an invitation: signed in as the invited address, or signed out to create its account",
        request=InvitationAcceptSerializer,
        responses=InvitationAcceptedSerializer,
    )
    def post(self, request):
        body = validated(InvitationAcceptSerializer, request.data)
        person = request.user if request.user and request.user.is_authenticated else None
        membership, created = invitations.invitation_accept(
            token=body["token"], person=person, password=body.get("password")
        )
        return Response(
            {"organization": str(membership.organization.public_id), "role": membership.role, "accountCreated": created}
        )


class RefundLimitSerializer(serializers.Serializer):
    limitUsd = serializers.DecimalField(
        max_digits=17,
        decimal_places=2,
        allow_null=True,
        coerce_to_string=True,
        help_text="The most a support member may approve in one refund, in USD (null: none)",
    )


class RefundLimitUpdateSerializer(StrictSerializer):
    limitUsd = serializers.DecimalField(max_digits=17, decimal_places=2, min_value=0, allow_null=True)


class TeamRefundLimitView(APIView):
    @extend_schema(tags=TAG, summary="The support role's refund approval limit", responses=RefundLimitSerializer)
    def get(self, request):
        return Response({"limitUsd": _limit_text(support_refund_limit(request.user.pk))})

    @extend_schema(
        tags=TAG,
        summary="Set the support role's refund approval limit (an owner)",
        request=RefundLimitUpdateSerializer,
        responses=RefundLimitSerializer,
    )
    def put(self, request):
        body = validated(RefundLimitUpdateSerializer, request.data)
        merchant_profile_update(
            user=request.user,
            changes={"support_refund_limit_usd": body["limitUsd"]},
            names={"support_refund_limit_usd": "limitUsd"},
        )
        return Response({"limitUsd": _limit_text(support_refund_limit(request.user.pk))})


def _limit_text(limit) -> str | None:
    return None if limit is None else f"{limit:.2f}"


class SecondFactorSerializer(serializers.Serializer):
    requireSecondFactor = serializers.BooleanField(
        help_text="Every member must have a second factor (an authenticator app or a passkey) to work here"
    )


class SecondFactorUpdateSerializer(StrictSerializer):
    requireSecondFactor = serializers.BooleanField()


class TeamSecondFactorView(APIView):
    problem_statuses = {"PUT": (409,)}

    @extend_schema(tags=TAG, summary="Whether members must have a second factor", responses=SecondFactorSerializer)
    def get(self, request):
        return Response({"requireSecondFactor": teams.second_factor_required_get(organization=request.user)})

    @extend_schema(
        tags=TAG,
        summary="Require a second factor of every member (an owner, who has one)",
        request=SecondFactorUpdateSerializer,
        responses=SecondFactorSerializer,
    )
    def put(self, request):
        body = validated(SecondFactorUpdateSerializer, request.data)
        required = teams.second_factor_required_set(
            organization=request.user, person=request.person, required=body["requireSecondFactor"]
        )
        return Response({"requireSecondFactor": required})


class LeftSerializer(serializers.Serializer):
    left = serializers.UUIDField(help_text="The organization left")
    organization = serializers.UUIDField(help_text="The organization the session now works in: the person's own")


class TeamLeaveView(APIView):
    problem_statuses = {"POST": (409,)}

    @extend_schema(
        tags=TAG,
        summary="Leave the organization worked in (not the last owner); the session moves to one's own account",
        request=None,
        responses=LeftSerializer,
    )
    def post(self, request):
        left = request.account
        teams.member_leave(request)
        return Response({"left": str(left.public_id), "organization": str(request.person.public_id)})
