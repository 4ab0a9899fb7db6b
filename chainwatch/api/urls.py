from rest_framework.routers import SimpleRouter

from chainwatch.api.views import TransferViewSet

router = SimpleRouter(trailing_slash=False)
router.register("transfers", TransferViewSet, basename="transfer")

urlpatterns = router.urls
