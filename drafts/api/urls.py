from django.urls import path
from rest_framework.routers import SimpleRouter

from drafts.api.test_helpers import SimulateExpiryView, SimulatePaymentView, SimulateReorgView
from drafts.api.views import AccruedFeesView, DraftViewSet, FeeQuoteView, SettleAccruedFeesView

router = SimpleRouter(trailing_slash=False)
router.register("drafts", DraftViewSet, basename="draft")

urlpatterns = [
    path("fees/accrued", AccruedFeesView.as_view(), name="fees-accrued"),
    path("fees/accrued/settle", SettleAccruedFeesView.as_view(), name="fees-settle"),
    path("fees/quote", FeeQuoteView.as_view(), name="fees-quote"),
    path("test-helpers/drafts/<id:pk>/pay", SimulatePaymentView.as_view(), name="test-helpers-draft-pay"),
    path("test-helpers/drafts/<id:pk>/expire", SimulateExpiryView.as_view(), name="test-helpers-draft-expire"),
    path("test-helpers/drafts/<id:pk>/reorg", SimulateReorgView.as_view(), name="test-helpers-draft-reorg"),
    *router.urls,
]
