from django.urls import path

from payments.api.views import RatesView

urlpatterns = [path("rates", RatesView.as_view(), name="rates")]
