"""The hosted pay page (no /api prefix: it is what the payer's browser opens)."""

from django.urls import re_path

from paylinks import views
from paylinks.models import TOKEN_PATTERN

urlpatterns = [
    re_path(rf"^(?P<token>{TOKEN_PATTERN})$", views.pay_page, name="pay-page"),
    re_path(rf"^(?P<token>{TOKEN_PATTERN})/select$", views.pay_select, name="pay-select"),
    re_path(rf"^(?P<token>{TOKEN_PATTERN})/receipt$", views.pay_receipt, name="pay-receipt"),
    re_path(rf"^(?P<token>{TOKEN_PATTERN})/document$", views.pay_document, name="pay-document"),
    re_path(rf"^(?P<token>{TOKEN_PATTERN})/simulate$", views.pay_simulate, name="pay-simulate"),
]
