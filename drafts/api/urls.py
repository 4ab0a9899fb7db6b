from django.urls import path
from rest_framework.routers import SimpleRouter

from drafts.api.views import AccruedFeesView, DraftViewSet, FeeQuoteView, SettleAccruedFeesView

router = SimpleRouter(trailing_slash=False)
router.register("drafts", DraftViewSet, basename="draft")

urlpatterns = [
    path("fees/accrued", AccruedFeesView.as_view(), name="fees-accrued"),
    path("fees/accrued/settle", SettleAccruedFeesView.as_view(), name="fees-settle"),
    path("fees/quote", FeeQuoteView.as_view(), name="fees-quote"),
    *router.urls,
]
