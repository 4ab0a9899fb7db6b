from django.urls import re_path
from rest_framework.routers import SimpleRouter

from paylinks.api.views import (
    CheckoutDetailView,
    CheckoutReceiptView,
    CheckoutSelectView,
    CheckoutStatusView,
    PaymentRequestViewSet,
)
from paylinks.models import TOKEN_PATTERN

router = SimpleRouter(trailing_slash=False)
router.register("payment-requests", PaymentRequestViewSet, basename="payment-request")

urlpatterns = [
    *router.urls,
    re_path(rf"^checkout/(?P<token>{TOKEN_PATTERN})$", CheckoutDetailView.as_view(), name="checkout-detail"),
    re_path(rf"^checkout/(?P<token>{TOKEN_PATTERN})/select$", CheckoutSelectView.as_view(), name="checkout-select"),
    re_path(rf"^checkout/(?P<token>{TOKEN_PATTERN})/status$", CheckoutStatusView.as_view(), name="checkout-status"),
    re_path(rf"^checkout/(?P<token>{TOKEN_PATTERN})/receipt$", CheckoutReceiptView.as_view(), name="checkout-receipt"),
]
