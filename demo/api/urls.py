from django.urls import path

from demo.api.views import DemoConfigView, DemoDraftDetailView, DemoDraftsView

urlpatterns = [
    path("demo/config", DemoConfigView.as_view(), name="demo-config"),
    path("demo/drafts", DemoDraftsView.as_view(), name="demo-drafts"),
    path("demo/drafts/<id:pk>", DemoDraftDetailView.as_view(), name="demo-draft-detail"),
]
