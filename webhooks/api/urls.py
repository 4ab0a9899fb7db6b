from django.urls import path
from rest_framework.routers import SimpleRouter

from webhooks.api.views import NotificationPreferenceView, WebhookViewSet

router = SimpleRouter(trailing_slash=False)
router.register("webhooks", WebhookViewSet, basename="webhook")

urlpatterns = [
    path("notification-preferences", NotificationPreferenceView.as_view(), name="notification-preferences"),
    *router.urls,
]
