from django.urls import path

from dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("drafts/", views.drafts, name="drafts"),
    path("drafts/new", views.draft_new, name="draft_new"),
    path("drafts/fee-preview", views.fee_preview, name="fee_preview"),
    path("drafts/<id:draft_id>/", views.draft_detail, name="draft"),
    path("drafts/<id:draft_id>/pdf", views.draft_pdf_download, name="draft_pdf"),
    path("drafts/<id:draft_id>/tx-template.json", views.draft_template_download, name="draft_template"),
    path("drafts/<id:draft_id>/<slug:action>", views.draft_action, name="draft_action"),
    path("webhooks/", views.webhooks, name="webhooks"),
    path("webhooks/<id:webhook_id>/", views.webhook_detail, name="webhook"),
    path("webhooks/<id:webhook_id>/<slug:action>", views.webhook_action, name="webhook_action"),
    path("api-keys/", views.api_keys, name="api_keys"),
    path("api-keys/<id:key_id>/revoke", views.api_key_revoke_view, name="api_key_revoke"),
    path("fees/", views.fees, name="fees"),
    path("pay-links/", views.paylinks, name="paylinks"),
    path("pay-links/new", views.paylink_new, name="paylink_new"),
    path("pay-links/<id:payment_request_id>/", views.paylink_detail, name="paylink"),
    path("pay-links/<id:payment_request_id>/cancel", views.paylink_cancel, name="paylink_cancel"),
    path("templates/", views.templates, name="templates"),
    path("templates/<id:template_id>/<slug:action>", views.template_action, name="template_action"),
    path("address-book/", views.address_book, name="address_book"),
    path("address-book/<id:entry_id>/default", views.address_book_default, name="address_book_default"),
    path("address-book/<id:entry_id>/delete", views.address_book_delete, name="address_book_delete"),
    path("transfers/", views.transfers, name="transfers"),
    path("transfers/<id:report_id>/attach", views.transfer_attach_view, name="transfer_attach"),
    path("security/", views.security, name="security"),
    path("notifications/", views.notifications, name="notifications"),
    path("signout", views.signout, name="signout"),
]
