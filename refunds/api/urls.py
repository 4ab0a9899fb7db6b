from django.urls import re_path
from rest_framework.routers import SimpleRouter

from paylinks.models import TOKEN_PATTERN
from refunds.api.views import RefundClaimView, RefundViewSet

router = SimpleRouter(trailing_slash=False)
router.register("refunds", RefundViewSet, basename="refund")

urlpatterns = [
    *router.urls,
    re_path(rf"^refund-claims/(?P<token>{TOKEN_PATTERN})$", RefundClaimView.as_view(), name="refund-claim"),
]
