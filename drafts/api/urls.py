from django.urls import path
from rest_framework.routers import SimpleRouter

from drafts.api.solana_pay import SolanaPayTransactionRequestView
from drafts.api.test_helpers import SimulateExpiryView, SimulatePaymentView, SimulateReorgView
from drafts.api.views import DraftViewSet

router = SimpleRouter(trailing_slash=False)
router.register("drafts", DraftViewSet, basename="draft")

urlpatterns = [
    path("test-helpers/drafts/<id:pk>/pay", SimulatePaymentView.as_view(), name="test-helpers-draft-pay"),
    path("test-helpers/drafts/<id:pk>/expire", SimulateExpiryView.as_view(), name="test-helpers-draft-expire"),
    path("test-helpers/drafts/<id:pk>/reorg", SimulateReorgView.as_view(), name="test-helpers-draft-reorg"),
    path("solana-pay/<id:pk>", SolanaPayTransactionRequestView.as_view(), name="solana-pay-transaction-request"),
    *router.urls,
]
