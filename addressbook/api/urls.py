from rest_framework.routers import SimpleRouter

from addressbook.api.views import AddressBookViewSet

router = SimpleRouter(trailing_slash=False)
router.register("address-book", AddressBookViewSet, basename="address-book")

urlpatterns = router.urls
