from django.contrib import admin
from django.urls import include, path, re_path

import core.routing  # noqa: F401 - registers the <id:...> converter
from about.api.views import SchemaView, swagger
from about.metrics import metrics_view
from about.problems import CODE_PATTERN
from about.views import favicon, healthz, livez, llms_txt, problem_page, readyz
from accounts.logos import DIGEST_PATTERN, merchant_logo
from dashboard.views.common import home

# Django tries patterns in order: drafts, the busiest routes, first (no route of another app
# shares their prefixes).
api_v1 = [
    path("", include("drafts.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("payments.api.urls")),
    path("", include("fees.api.urls")),
    path("", include("paylinks.api.urls")),
    path("", include("refunds.api.urls")),
    path("", include("attention.api.urls")),
    path("", include("webhooks.api.urls")),
    path("", include("notifications.api.urls")),
    path("", include("chainwatch.api.urls")),
    path("", include("addressbook.api.urls")),
    path("", include("wallets.api.urls")),
    path("", include("suggestions.api.urls")),
    path("", include("recurring.api.urls")),
    path("", include("demo.api.urls")),
    path("", include("audit.api.urls")),
]

urlpatterns = [
    path("api/v1/schema", SchemaView.as_view(), name="schema"),
    path("api/v1/", include(api_v1)),
    path("swagger", swagger, name="swagger"),
    path("metrics", metrics_view, name="metrics"),
    path("pay/", include("paylinks.urls")),
    path("refund/", include("refunds.urls")),
    re_path(rf"^merchant-logos/(?P<digest>{DIGEST_PATTERN})\.png$", merchant_logo, name="merchant-logo"),
    path("llms.txt", llms_txt, name="llms-txt"),
    path("favicon.ico", favicon, name="favicon"),
    re_path(rf"^problems/(?P<code>{CODE_PATTERN.pattern})$", problem_page, name="problem-type"),
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("account/", include("accounts.urls")),
    path("dashboard/", include("dashboard.urls")),
    path("", home, name="home"),
]

# Django's error answers: problem+json unless the client asks for HTML (core/errors.py).
handler400 = "core.errors.bad_request"
handler403 = "core.errors.permission_denied"
handler404 = "core.errors.not_found"
handler500 = "core.errors.server_error"
