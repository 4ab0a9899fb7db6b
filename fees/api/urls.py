from django.urls import path

from fees.api.views import AccruedFeesView, FeeQuoteView, FeeScheduleView, SettleAccruedFeesView

urlpatterns = [
    path("fees/schedule", FeeScheduleView.as_view(), name="fee-schedule"),
    path("fees/accrued", AccruedFeesView.as_view(), name="fees-accrued"),
    path("fees/accrued/settle", SettleAccruedFeesView.as_view(), name="fees-settle"),
    path("fees/quote", FeeQuoteView.as_view(), name="fees-quote"),
]
