from django.urls import path

from dashboard.views import api_keys, common, drafts, fees, overview, paylinks, security, templates, transfers, webhooks

app_name = "dashboard"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("drafts/", drafts.drafts, name="drafts"),
    path("drafts/new", drafts.draft_new, name="draft_new"),
    path("drafts/fee-preview", drafts.fee_preview, name="fee_preview"),
    path("drafts/<id:draft_id>/", drafts.draft_detail, name="draft"),
    path("drafts/<id:draft_id>/pdf", drafts.draft_pdf_download, name="draft_pdf"),
    path("drafts/<id:draft_id>/tx-template.json", drafts.draft_template_download, name="draft_template"),
    path("drafts/<id:draft_id>/<slug:action>", drafts.draft_action, name="draft_action"),
    path("webhooks/", webhooks.webhooks, name="webhooks"),
    path("webhooks/<id:webhook_id>/", webhooks.webhook_detail, name="webhook"),
    path("webhooks/<id:webhook_id>/<slug:action>", webhooks.webhook_action, name="webhook_action"),
    path("api-keys/", api_keys.api_keys, name="api_keys"),
    path("api-keys/<id:key_id>/revoke", api_keys.api_key_revoke_view, name="api_key_revoke"),
    path("fees/", fees.fees, name="fees"),
    path("pay-links/", paylinks.paylinks, name="paylinks"),
    path("pay-links/new", paylinks.paylink_new, name="paylink_new"),
    path("pay-links/<id:payment_request_id>/", paylinks.paylink_detail, name="paylink"),
    path("pay-links/<id:payment_request_id>/cancel", paylinks.paylink_cancel, name="paylink_cancel"),
    path("templates/", templates.templates, name="templates"),
    path("templates/<id:template_id>/<slug:action>", templates.template_action, name="template_action"),
    path("address-book/", templates.address_book, name="address_book"),
    path("address-book/<id:entry_id>/default", templates.address_book_default, name="address_book_default"),
    path("address-book/<id:entry_id>/delete", templates.address_book_delete, name="address_book_delete"),
    path("transfers/", transfers.transfers, name="transfers"),
    path("transfers/<id:report_id>/attach", transfers.transfer_attach_view, name="transfer_attach"),
    path("security/", security.security, name="security"),
    path("notifications/", security.notifications, name="notifications"),
    path("signout", common.signout, name="signout"),
]
