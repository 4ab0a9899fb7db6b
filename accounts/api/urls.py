from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api.views import ApiKeyViewSet, MeView

router = SimpleRouter(trailing_slash=False)
router.register("api-keys", ApiKeyViewSet, basename="api-key")

urlpatterns = [path("auth/me", MeView.as_view(), name="auth-me"), *router.urls]
