from django.urls import path

from attention.api.views import AttentionView

urlpatterns = [path("attention", AttentionView.as_view(), name="attention")]
