from django.urls import path

from fees.api.views import FeeScheduleView

urlpatterns = [
    path("fees/schedule", FeeScheduleView.as_view(), name="fee-schedule"),
]
