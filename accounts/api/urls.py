from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api import auth_views as auth
from accounts.api import team_views as team
from accounts.api.profile_views import MerchantLogoView, MerchantProfileView
from accounts.api.receiver_lock_views import ReceiverLockView
from accounts.api.views import ApiKeyViewSet

router = SimpleRouter(trailing_slash=False)
router.register("api-keys", ApiKeyViewSet, basename="api-key")

urlpatterns = [
    path("auth/register/begin", auth.RegisterBeginView.as_view(), name="auth-register-begin"),
    path("auth/register/complete", auth.RegisterCompleteView.as_view(), name="auth-register-complete"),
    path("auth/login/begin", auth.LoginBeginView.as_view(), name="auth-login-begin"),
    path("auth/login/complete", auth.LoginCompleteView.as_view(), name="auth-login-complete"),
    path("auth/logout", auth.LogoutView.as_view(), name="auth-logout"),
    path("auth/password/register", auth.PasswordRegisterView.as_view(), name="auth-password-register"),
    path(
        "auth/password/register/complete",
        auth.PasswordRegisterCompleteView.as_view(),
        name="auth-password-register-complete",
    ),
    path("auth/password/change", auth.PasswordChangeView.as_view(), name="auth-password-change"),
    path("auth/password/forgot", auth.PasswordForgotView.as_view(), name="auth-password-forgot"),
    path(
        "auth/password/forgot/complete", auth.PasswordForgotCompleteView.as_view(), name="auth-password-forgot-complete"
    ),
    path("auth/password/login", auth.PasswordLoginView.as_view(), name="auth-password-login"),
    path("auth/password/login/complete", auth.PasswordLoginCompleteView.as_view(), name="auth-password-login-complete"),
    path("auth/me", auth.MeView.as_view(), name="auth-me"),
    path("auth/account", auth.AccountView.as_view(), name="auth-account"),
    path("auth/step-up/begin", auth.StepUpBeginView.as_view(), name="auth-step-up-begin"),
    path("auth/step-up", auth.StepUpView.as_view(), name="auth-step-up"),
    path("auth/totp/setup", auth.TotpSetupView.as_view(), name="auth-totp-setup"),
    path("auth/totp/enable", auth.TotpEnableView.as_view(), name="auth-totp-enable"),
    path("auth/totp/disable", auth.TotpDisableView.as_view(), name="auth-totp-disable"),
    path("auth/passkeys", auth.PasskeyListView.as_view(), name="auth-passkeys"),
    path("auth/passkeys/<id:passkey_id>", auth.PasskeyDetailView.as_view(), name="auth-passkey"),
    path("team/members", team.TeamMembersView.as_view(), name="team-members"),
    path("team/refund-limit", team.TeamRefundLimitView.as_view(), name="team-refund-limit"),
    path("team/leave", team.TeamLeaveView.as_view(), name="team-leave"),
    path("team/second-factor", team.TeamSecondFactorView.as_view(), name="team-second-factor"),
    path("team/members/<id:person_id>", team.TeamMemberView.as_view(), name="team-member"),
    path("team/invitations", team.TeamInvitationsView.as_view(), name="team-invitations"),
    path("team/invitations/accept", team.TeamInvitationAcceptView.as_view(), name="team-invitation-accept"),
    path("team/invitations/<id:invitation_id>", team.TeamInvitationView.as_view(), name="team-invitation"),
    path("account/profile", MerchantProfileView.as_view(), name="account-profile"),
    path("account/profile/logo", MerchantLogoView.as_view(), name="account-profile-logo"),
    path("account/receiver-lock", ReceiverLockView.as_view(), name="account-receiver-lock"),
    *router.urls,
]
