from rest_framework.routers import SimpleRouter

from recurring.api.views import RecurringTemplateViewSet

router = SimpleRouter(trailing_slash=False)
router.register("recurring-templates", RecurringTemplateViewSet, basename="recurring-template")

urlpatterns = router.urls
