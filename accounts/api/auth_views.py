"""The auth endpoints of the spec (/api/v1/auth/...) plus passkey management. Thin: each
validates its body, calls one function of accounts (passwords, passkeys, totp, sessions,
closure) and renders the result.

Sessions: Django's session cookie (HttpOnly, SameSite=Lax, Secure outside development),
a new key at every sign-in. CSRF is enforced on unsafe methods of a signed-in session (DRF's
SessionAuthentication) and not under a Bearer key. The anonymous steps accept only JSON
bodies, which a cross-site form cannot send, so a foreign page cannot start them either."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import closure, passkeys, passwords, sessions, totp
from accounts.api.serializers import (
    AccountSerializer,
    AuthStepSerializer,
    EmailCodeCompleteRequestSerializer,
    LoginCompleteRequestSerializer,
    MeSerializer,
    PasskeyRenameRequestSerializer,
    PasskeySerializer,
    PasswordChangeRequestSerializer,
    PasswordForgotCompleteRequestSerializer,
    PasswordForgotRequestSerializer,
    PasswordLoginRequestSerializer,
    PasswordRegisterRequestSerializer,
    PublicKeyOptionsSerializer,
    RegisterBeginRequestSerializer,
    RegisterCompleteRequestSerializer,
    StepUpRequestSerializer,
    TotpCodeRequestSerializer,
    TotpDisabledSerializer,
    TotpDisableRequestSerializer,
    TotpEnabledSerializer,
    TotpSetupSerializer,
)
from accounts.models import ApiKey
from accounts.passwords import Step
from accounts.scopes import ALL_SCOPES
from accounts.selectors import account_summary
from core.problems import Problem

TAG = ["auth"]
CODE_SENT = "If the address can be used, a code is on its way by email. It works once and expires in a few minutes."
DETAILS = {
    "totpRequired": "Password accepted. Send a code from your authenticator app (or a recovery code).",
    "signedIn": "Signed in.",
    "signedOut": "Signed out.",
    "passwordReset": "Password changed. Every session was signed out; sign in with the new password.",
    "passwordChanged": "Password changed. Your other sessions were signed out.",
    "passkeyAdded": "Passkey added.",
    "accountDeleted": "The account is deleted.",
    "steppedUp": "Confirmed. Actions that need it are allowed for the next few minutes.",
}


def _body(serializer_class, request) -> dict:
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body.validated_data


def _user(request):
    return request.user if request.user and request.user.is_authenticated else None


def step_response(step: Step, *, login_code: bool = False) -> Response:
    detail = (
        "A code was emailed to you. It works once and expires in a few minutes."
        if login_code
        else CODE_SENT
        if step.status == "emailCodeSent"
        else DETAILS.get(step.status, step.status)
    )
    body: dict[str, Any] = {"status": step.status, "detail": detail}
    if step.user is not None and step.status in ("signedIn", "passkeyAdded", "passwordChanged"):
        body["account"] = AccountSerializer(account_summary(user=step.user)).data
    response = Response(body)
    if step.device_token:
        sessions.device_cookie_set(response, step.device_token)
    return response


class AuthView(APIView):
    """The sign-in steps: how a session comes to exist, for a visitor or a signed-in session,
    never an API key (config/authorization.py). A signed-in session calling one still needs
    its CSRF token (403)."""

    problem_statuses = {"POST": [403]}


class SessionView(APIView):
    """Needs a signed-in browser session; an API key gets 403 session_required
    (config/authorization.py)."""

    problem_statuses = {"POST": [409], "DELETE": [409]}


def _schema(summary: str, request=None, response=AuthStepSerializer, **kwargs):
    return extend_schema(tags=TAG, summary=summary, request=request, responses={200: response}, **kwargs)


class PasswordRegisterView(AuthView):
    @_schema("Register with email and password (a code is emailed)", PasswordRegisterRequestSerializer)
    def post(self, request):
        data = _body(PasswordRegisterRequestSerializer, request)
        step = passwords.password_register_begin(
            request, email=data["email"], password=data["password"], client=sessions.client_of(request)
        )
        return step_response(step)


class PasswordRegisterCompleteView(AuthView):
    @_schema("Complete a password registration with the emailed code (signs in)", EmailCodeCompleteRequestSerializer)
    def post(self, request):
        data = _body(EmailCodeCompleteRequestSerializer, request)
        step = passwords.password_register_complete(request, code=data["code"], client=sessions.client_of(request))
        return step_response(step)


class PasswordLoginView(AuthView):
    problem_statuses = {"POST": [401, 403]}

    @_schema("Sign in with a password, step 1 (then a TOTP or emailed code)", PasswordLoginRequestSerializer)
    def post(self, request):
        data = _body(PasswordLoginRequestSerializer, request)
        step = passwords.password_login_begin(
            request, email=data["email"], password=data["password"], client=sessions.client_of(request)
        )
        return step_response(step, login_code=step.status == "emailCodeSent")


class PasswordLoginCompleteView(AuthView):
    @_schema("Sign in with a password, step 2: the emailed, TOTP or recovery code", EmailCodeCompleteRequestSerializer)
    def post(self, request):
        data = _body(EmailCodeCompleteRequestSerializer, request)
        step = passwords.password_login_complete(request, code=data["code"], client=sessions.client_of(request))
        return step_response(step)


class PasswordForgotView(AuthView):
    @_schema("Forgotten password: email a reset code", PasswordForgotRequestSerializer)
    def post(self, request):
        data = _body(PasswordForgotRequestSerializer, request)
        return step_response(passwords.password_forgot_begin(email=data["email"], client=sessions.client_of(request)))


class PasswordForgotCompleteView(AuthView):
    @_schema(
        "Forgotten password: set a new one with the emailed code (ends every session)",
        PasswordForgotCompleteRequestSerializer,
    )
    def post(self, request):
        data = _body(PasswordForgotCompleteRequestSerializer, request)
        step = passwords.password_forgot_complete(
            email=data["email"], code=data["code"], new_password=data["newPassword"], client=sessions.client_of(request)
        )
        return step_response(step)


class PasswordChangeView(SessionView):
    @_schema("Change the password (other sessions end)", PasswordChangeRequestSerializer)
    def post(self, request):
        data = _body(PasswordChangeRequestSerializer, request)
        step = passwords.password_change(
            request,
            user=request.user,
            current_password=data["currentPassword"],
            new_password=data["newPassword"],
            client=sessions.client_of(request),
        )
        return step_response(step)


class RegisterBeginView(AuthView):
    @_schema(
        "Passkey registration, begin (signed in: add one; else verify the email first)",
        RegisterBeginRequestSerializer,
        PublicKeyOptionsSerializer,
    )
    def post(self, request):
        data = _body(RegisterBeginRequestSerializer, request)
        step, options = passkeys.passkey_register_begin(
            request,
            user=_user(request),
            email=data.get("email"),
            code=data.get("code"),
            client=sessions.client_of(request),
        )
        detail = CODE_SENT if step.status == "emailCodeSent" else "Pass publicKey to navigator.credentials.create()."
        return Response({"status": step.status, "detail": detail, "publicKey": options})


class RegisterCompleteView(AuthView):
    problem_statuses = {"POST": [403, 409]}

    @_schema("Passkey registration, complete (a new account is signed in)", RegisterCompleteRequestSerializer)
    def post(self, request):
        data = _body(RegisterCompleteRequestSerializer, request)
        step = passkeys.passkey_register_complete(
            request,
            user=_user(request),
            credential=request.data.get("credential"),
            name=data.get("name") or "",
            client=sessions.client_of(request),
        )
        return step_response(step)


class LoginBeginView(AuthView):
    @_schema("Passkey sign-in, begin (usernameless)", None, PublicKeyOptionsSerializer)
    def post(self, request):
        options = passkeys.passkey_login_begin(request)
        return Response(
            {"status": "options", "detail": "Pass publicKey to navigator.credentials.get().", "publicKey": options}
        )


class LoginCompleteView(AuthView):
    problem_statuses = {"POST": [401, 403]}

    @_schema("Passkey sign-in, complete", LoginCompleteRequestSerializer)
    def post(self, request):
        _body(LoginCompleteRequestSerializer, request)
        step = passkeys.passkey_login_complete(
            request, credential=request.data.get("credential"), client=sessions.client_of(request)
        )
        return step_response(step)


class LogoutView(AuthView):
    @_schema("Sign out (ends this session)")
    def post(self, request):
        sessions.session_sign_out(request)
        return Response({"status": "signedOut", "detail": DETAILS["signedOut"]})


class MeView(APIView):
    @extend_schema(tags=TAG, summary="The account and credentials behind this request", responses=MeSerializer)
    def get(self, request):
        api_key = request.auth if isinstance(request.auth, ApiKey) else None
        # A session: who signed in, and the organization and role they work with (accounts.teams).
        person = request.user if api_key else getattr(request, "person", request.user)
        body = account_summary(user=person) | {
            "authenticatedWith": "apiKey" if api_key else "session",
            "sessionMethod": None if api_key else sessions.session_method(request),
            "scopes": api_key.scopes if api_key else ALL_SCOPES,
            "organizationId": request.user.public_id,
            "role": None if api_key else getattr(request, "role", None),
        }
        return Response(MeSerializer(body).data)


class AccountView(SessionView):
    @extend_schema(
        tags=TAG,
        summary="Delete the account (sign in again first: within the last few minutes)",
        request=None,
        responses={200: AuthStepSerializer},
    )
    def delete(self, request):
        closure.account_delete(request, user=request.user, client=sessions.client_of(request))
        return Response({"status": "accountDeleted", "detail": DETAILS["accountDeleted"]})


class TotpSetupView(SessionView):
    @_schema("Set up an authenticator app: otpauth URI and QR code", None, TotpSetupSerializer)
    def post(self, request):
        setup = totp.totp_setup(user=request.user)
        return Response({"otpauthUri": setup.otpauth_uri, "secret": setup.secret, "qrSvg": setup.qr_svg})


class TotpEnableView(SessionView):
    @_schema(
        "Turn the authenticator app on with a code (returns ten recovery codes, once)",
        TotpCodeRequestSerializer,
        TotpEnabledSerializer,
    )
    def post(self, request):
        data = _body(TotpCodeRequestSerializer, request)
        codes = totp.totp_enable(request, user=request.user, code=data["code"], client=sessions.client_of(request))
        return Response({"totpEnabled": True, "recoveryCodes": codes})


class TotpDisableView(SessionView):
    problem_statuses = {"POST": [403, 409]}

    @_schema(
        "Turn the authenticator app off (step-up: a code or recovery code here, or a recent step-up)",
        TotpDisableRequestSerializer,
        TotpDisabledSerializer,
    )
    def post(self, request):
        data = _body(TotpDisableRequestSerializer, request)
        totp.totp_disable(request, user=request.user, code=data.get("code"), client=sessions.client_of(request))
        return Response({"totpEnabled": False})


class PasskeyListView(SessionView):
    @extend_schema(tags=TAG, summary="The account's passkeys", responses=PasskeySerializer(many=True))
    def get(self, request):
        return Response(PasskeySerializer(request.user.passkeys.all(), many=True).data)


class PasskeyDetailView(SessionView):
    @extend_schema(
        tags=TAG, summary="Rename a passkey", request=PasskeyRenameRequestSerializer, responses=PasskeySerializer
    )
    def patch(self, request, passkey_id):
        data = _body(PasskeyRenameRequestSerializer, request)
        return Response(
            PasskeySerializer(passkeys.passkey_rename(user=request.user, passkey_id=passkey_id, name=data["name"])).data
        )

    @extend_schema(
        tags=TAG,
        summary="Delete a passkey (not the account's last way to sign in)",
        responses={200: PasskeySerializer(many=True), 409: OpenApiResponse(description="The last way to sign in")},
    )
    def delete(self, request, passkey_id):
        passkeys.passkey_delete(request, user=request.user, passkey_id=passkey_id, client=sessions.client_of(request))
        return Response(PasskeySerializer(request.user.passkeys.all(), many=True).data)


class StepUpBeginView(SessionView):
    @_schema("Step-up with a passkey, begin: options for the account's passkeys", None, PublicKeyOptionsSerializer)
    def post(self, request):
        options = passkeys.passkey_step_up_begin(request, user=request.user)
        return Response(
            {"status": "options", "detail": "Pass publicKey to navigator.credentials.get().", "publicKey": options}
        )


class StepUpView(SessionView):
    """Prove a second factor now: what adding a passkey, turning off the authenticator app,
    creating an API key and the receiving-address lock need within the last few minutes."""

    problem_statuses = {"POST": [401, 403, 409]}

    @_schema("Step-up: confirm it is you with an authenticator code or a passkey assertion", StepUpRequestSerializer)
    def post(self, request):
        data = _body(StepUpRequestSerializer, request)
        client = sessions.client_of(request)
        if data.get("code") and request.data.get("credential"):
            raise Problem("Give a code or a passkey credential, not both.", code="ambiguous", field="code")
        if request.data.get("credential"):
            passkeys.passkey_step_up_complete(
                request, user=request.user, credential=request.data["credential"], client=client
            )
        elif data.get("code"):
            totp.totp_step_up(request, user=request.user, code=data["code"], client=client)
        else:
            raise Problem(
                "Give a code from the authenticator app, or a passkey credential (POST /auth/step-up/begin first).",
                code="required",
                field="code",
            )
        return Response({"status": "steppedUp", "detail": DETAILS["steppedUp"]})
