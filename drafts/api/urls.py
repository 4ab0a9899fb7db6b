from rest_framework.routers import SimpleRouter

from drafts.api.views import DraftViewSet

router = SimpleRouter(trailing_slash=False)
router.register("drafts", DraftViewSet, basename="draft")

urlpatterns = [
    *router.urls,
]
