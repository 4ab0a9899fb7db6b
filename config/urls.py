from django.contrib import admin
from django.urls import include, path

import config.routing  # noqa: F401 - registers the <id:...> converter
from config.metrics import metrics_view
from config.views import SchemaView, healthz, livez, llms_txt, readyz, swagger
from dashboard.views import home

# Django tries patterns in order: drafts, the busiest routes, first (no route of another app
# shares their prefixes).
api_v1 = [
    path("", include("drafts.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("payments.api.urls")),
    path("", include("fees.api.urls")),
    path("", include("paylinks.api.urls")),
    path("", include("refunds.api.urls")),
    path("", include("webhooks.api.urls")),
    path("", include("notifications.api.urls")),
    path("", include("chainwatch.api.urls")),
    path("", include("addressbook.api.urls")),
    path("", include("suggestions.api.urls")),
    path("", include("recurring.api.urls")),
    path("", include("demo.api.urls")),
]

urlpatterns = [
    path("api/v1/schema", SchemaView.as_view(), name="schema"),
    path("api/v1/", include(api_v1)),
    path("swagger", swagger, name="swagger"),
    path("metrics", metrics_view, name="metrics"),
    path("pay/", include("paylinks.urls")),
    path("refund/", include("refunds.urls")),
    path("llms.txt", llms_txt, name="llms-txt"),
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("account/", include("accounts.urls")),
    path("dashboard/", include("refunds.dashboard_urls")),  # before the dashboard's drafts/<id>/<action>
    path("dashboard/", include("dashboard.urls")),
    path("", home, name="home"),
]

# Django's error answers: problem+json unless the client asks for HTML (config/errors.py).
handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
