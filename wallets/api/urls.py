from rest_framework.routers import SimpleRouter

from wallets.api.views import ReceivingWalletViewSet

router = SimpleRouter(trailing_slash=False)
router.register("receiving-wallets", ReceivingWalletViewSet, basename="receiving-wallets")

urlpatterns = router.urls
