from django.http import HttpResponse
from django.urls import path

from bench.bare.views import DraftsView, DraftView

urlpatterns = [
    path("api/v1/drafts", DraftsView.as_view()),
    path("api/v1/drafts/<uuid:pk>", DraftView.as_view()),
    path("healthz", lambda request: HttpResponse("ok")),
]
