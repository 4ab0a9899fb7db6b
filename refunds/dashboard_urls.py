"""The merchant's refund pages, under /dashboard/ beside the dashboard's own (wired in
config/urls.py before them, so the dashboard imports nothing of refunds)."""

from django.urls import path

from refunds import pages

app_name = "refunds"

urlpatterns = [
    path("refunds/", pages.refunds, name="list"),
    path("refunds/<id:refund_id>/", pages.refund_detail, name="detail"),
    path("refunds/<id:refund_id>/<slug:action>", pages.refund_action, name="action"),
    path("drafts/<id:draft_id>/refund", pages.refund_new, name="new"),
]
