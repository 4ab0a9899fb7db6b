"""The hosted claim page (no /api prefix: it is what the customer's browser opens)."""

from django.urls import re_path

from paylinks.models import TOKEN_PATTERN
from refunds import views

urlpatterns = [
    re_path(rf"^(?P<token>{TOKEN_PATTERN})$", views.claim_page, name="refund-claim-page"),
]
