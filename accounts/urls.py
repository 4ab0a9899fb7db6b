from django.urls import path

from accounts import pages

urlpatterns = [
    path("", pages.account, name="account"),
    path("register", pages.register, name="register"),
    path("register/code", pages.register_code, name="register_code"),
    path("sign-in", pages.sign_in, name="login"),
    path("sign-in/code", pages.sign_in_code, name="login_code"),
    path("sign-out", pages.sign_out, name="logout"),
    path("forgot", pages.forgot, name="forgot"),
    path("forgot/code", pages.forgot_code, name="forgot_code"),
    path("security-link/<str:token>", pages.security_link, name="security_link"),
    path("invitation/<str:token>", pages.invitation, name="invitation"),
]
