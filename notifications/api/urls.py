from django.urls import path

from notifications.api.views import NotificationPreferenceView

urlpatterns = [
    path("notification-preferences", NotificationPreferenceView.as_view(), name="notification-preferences"),
]
