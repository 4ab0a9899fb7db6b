"""Who may call what: every route of the URLconf and every MCP tool, with the caller it lets in.

This table is the authorization, not a description of it: the REST permission class
(`accounts.permissions.HasScope`), the page middleware (`accounts.middleware.AuthorizationMiddleware`)
and the MCP dispatch (`mcp_server.server`) read it through `accounts.authorization`, which
refuses a route it does not name. `tests/platform/test_authorization_table.py` walks the live
URLconf and the MCP tool list, fails on a route missing here, and calls each with every kind of
credential.

Keys are route names as `reverse` takes them (`dashboard:overview`; `admin:*` for every admin
route not named), `mcp:<tool>` for MCP tools and `mcp-resource:<uri>` for MCP resources; values
map an HTTP method (`*`: every method) to a rule:

    public()        anyone; no credential consulted
    payer()         anyone holding the token in the URL (pay and refund pages, the checkout API)
    operator()      the operator's own check in the view (/metrics: loopback or METRICS_TOKEN)
    person()        a visitor or a signed-in session, never an API key (the sign-in steps);
                    step_up_when_signed_in: a signed-in session needs a recent second factor
    key(scope)      an API key carrying the scope (None: any key of the account); a signed-in
                    session acts with every scope. test_keys=False: live keys only ("mode")
    session()       a signed-in session; an API key gets 403 session_required (a key is never a person)
    step_up()       a session that proved a second factor within STEP_UP_MINUTES (accounts/stepup.py);
                    proof_in_request: the request may carry the proof itself (a code), which the
                    service door checks (accounts.totp.totp_disable), else the session's
    staff()         a staff session signed in with a second factor (the admin)

Organizations' routes name the work a member's role must grant (`Rule.role`, accounts/roles.py):
a read (GET, HEAD) needs READ only unless `role_reads`; a change needs the named work. `key`
rules take it from their scope unless named. A rule without a role is a person's own route (the
sign-in steps, their passkeys, password and second factor): it acts on who signed in, whatever
organization they work in. tests/accounts/test_roles.py calls every session route with every role.
"""

from __future__ import annotations

from accounts.authorization import (
    Rule,
    key,
    operator,
    payer,
    person,
    public,
    session,
    staff,
    step_up,
)
from accounts.roles import Work

# The work a member's role must grant (accounts/roles.py, the table of roles).
READ, MONEY, DEVELOPER, ADMIN, OWNER = Work.READ, Work.MONEY, Work.DEVELOPER, Work.ADMIN, Work.OWNER

# The REST API under /api/v1 (and its schema).
API: dict[str, dict[str, Rule]] = {
    "schema": {"GET": public()},
    "test-helpers-draft-pay": {"POST": key("drafts:write", role=DEVELOPER)},
    "test-helpers-draft-expire": {"POST": key("drafts:write", role=DEVELOPER)},
    "test-helpers-draft-reorg": {"POST": key("drafts:write", role=DEVELOPER)},
    "draft-list": {"GET": key("drafts:read"), "POST": key("drafts:write")},
    "draft-batch": {"POST": key("drafts:write")},
    "draft-detail": {"GET": key("drafts:read")},
    "draft-accept-received": {"POST": key("drafts:write")},
    "draft-cancel": {"POST": key("drafts:write")},
    "draft-fees": {"GET": key("drafts:read")},
    "draft-pdf": {"GET": key("drafts:read")},
    "draft-requote": {"POST": key("drafts:write")},
    "draft-status": {"GET": key("drafts:read")},
    "draft-tx-template": {"GET": key("drafts:read")},
    "auth-register-begin": {"POST": person(step_up_when_signed_in=True)},  # sign-up, or add a passkey
    "auth-register-complete": {"POST": person(step_up_when_signed_in=True)},
    "auth-login-begin": {"POST": person()},
    "auth-login-complete": {"POST": person()},
    "auth-logout": {"POST": person()},
    "auth-password-register": {"POST": person()},
    "auth-password-register-complete": {"POST": person()},
    "auth-password-change": {"POST": session()},
    "auth-password-forgot": {"POST": person()},
    "auth-password-forgot-complete": {"POST": person()},
    "auth-password-login": {"POST": person()},
    "auth-password-login-complete": {"POST": person()},
    "auth-me": {"GET": key()},
    "auth-account": {"DELETE": session()},
    "auth-totp-setup": {"POST": session()},
    "auth-totp-enable": {"POST": session()},
    "auth-step-up-begin": {"POST": session()},
    "auth-step-up": {"POST": session()},
    "auth-totp-disable": {"POST": step_up(proof_in_request=True)},  # its code is the proof
    "auth-passkeys": {"GET": session()},
    "auth-passkey": {"PATCH": session(), "DELETE": session()},
    "account-profile": {"GET": key(), "PATCH": key("paylinks:write", role=ADMIN)},
    # On needs a session; off needs step-up too, asked by the service (addressbook.services).
    "account-receiver-lock": {"GET": session(ADMIN), "PUT": session(ADMIN)},
    "account-profile-logo": {"PUT": key("paylinks:write", role=ADMIN), "DELETE": key("paylinks:write", role=ADMIN)},
    "api-key-list": {"GET": session(DEVELOPER), "POST": step_up(DEVELOPER)},
    "api-key-detail": {"DELETE": session(DEVELOPER)},
    "rates": {"GET": key("rates:read")},
    "fee-schedule": {"GET": key("fees:read")},
    "fees-accrued": {"GET": key("fees:read")},
    "fees-settle": {"POST": key("fees:write")},
    "fees-quote": {"POST": key("fees:read")},
    "payment-request-list": {"GET": key("paylinks:read"), "POST": key("paylinks:write")},
    "payment-request-detail": {"GET": key("paylinks:read")},
    "payment-request-cancel": {"POST": key("paylinks:write")},
    "checkout-detail": {"GET": payer()},
    "solana-pay-transaction-request": {"GET": payer(), "POST": payer()},  # the draft id in the path
    "checkout-select": {"POST": payer()},
    "checkout-status": {"GET": payer()},
    "checkout-receipt": {"POST": payer()},
    # Payments and transfers; its refunds need refunds:read, its webhooks and keys webhooks:manage.
    "attention": {"GET": key("drafts:read")},
    "refund-list": {"GET": key("refunds:read"), "POST": key("refunds:write")},
    "refund-detail": {"GET": key("refunds:read")},
    "refund-approve": {"POST": key("refunds:write")},
    "refund-cancel": {"POST": key("refunds:write")},
    "refund-claim": {"GET": payer(), "POST": payer()},
    "webhook-list": {"GET": key("webhooks:manage"), "POST": key("webhooks:manage")},
    "webhook-detail": {
        "GET": key("webhooks:manage"),
        "PATCH": key("webhooks:manage"),
        "DELETE": key("webhooks:manage"),
    },
    "webhook-deliveries": {"GET": key("webhooks:manage")},
    "webhook-redeliver": {"POST": key("webhooks:manage")},
    "webhook-rotate-secret": {"POST": key("webhooks:manage")},
    "webhook-test": {"POST": key("webhooks:manage")},
    "event-list": {"GET": key("events:read")},
    "event-detail": {"GET": key("events:read")},
    "event-stream": {"GET": key("events:read")},
    "event-redeliver": {"POST": key("webhooks:manage")},
    "notification-preferences": {"GET": key("webhooks:manage"), "PATCH": key("webhooks:manage")},
    "transfer-list": {"GET": key("drafts:read")},
    "transfer-attach": {"POST": key("drafts:write")},
    "receiving-wallets-list": {"GET": key("wallets:read"), "POST": key("wallets:write")},
    "receiving-wallets-detail": {"GET": key("wallets:read"), "DELETE": key("wallets:write")},
    "address-book-list": {"GET": key("addressbook:manage"), "POST": key("addressbook:manage")},
    "address-book-detail": {
        "GET": key("addressbook:manage"),
        "PUT": key("addressbook:manage"),
        "DELETE": key("addressbook:manage"),
    },
    "suggestions": {"POST": public()},
    "recurring-template-list": {"GET": key("templates:manage"), "POST": key("templates:manage")},
    "recurring-template-detail": {"GET": key("templates:manage"), "DELETE": key("templates:manage")},
    "recurring-template-pause": {"POST": key("templates:manage")},
    "recurring-template-resume": {"POST": key("templates:manage")},
    "audit-log": {"GET": session(ADMIN, role_reads=True)},  # owners and admins, never a key
    # The team: an owner's or admin's session (making or unmaking an owner: an owner, in the view).
    "team-members": {"GET": session(ADMIN, role_reads=True)},
    "team-refund-limit": {"GET": session(ADMIN, role_reads=True), "PUT": session(OWNER)},  # support's limit
    "team-leave": {"POST": session(READ)},  # any member leaves (the last owner cannot; not one's own account)
    "team-second-factor": {"GET": session(ADMIN, role_reads=True), "PUT": session(OWNER)},  # require 2FA of members
    "team-member": {"PATCH": session(ADMIN), "DELETE": session(ADMIN)},
    "team-invitations": {"GET": session(ADMIN, role_reads=True), "POST": session(ADMIN)},
    "team-invitation": {"DELETE": session(ADMIN)},
    "team-invitation-accept": {"POST": person()},  # the invited person, signed in or not
    "demo-config": {"GET": public()},
    "demo-drafts": {"POST": public()},
    "demo-draft-detail": {"GET": public()},
}

# Pages: server-rendered, a browser session or none. Pages never read an API key.
PAGES: dict[str, dict[str, Rule]] = {
    "home": {"*": public()},  # redirects: a merchant to the overview, a visitor to sign-in
    "swagger": {"GET": public()},
    "llms-txt": {"GET": public()},
    "favicon": {"GET": public()},
    "problem-type": {"GET": public()},  # what an error's `type` means (about/problems.py)
    "healthz": {"GET": public()},
    "livez": {"GET": public()},
    "readyz": {"GET": public()},
    "metrics": {"GET": operator()},
    "merchant-logo": {"GET": public()},
    "pay-page": {"GET": payer()},
    "pay-select": {"POST": payer()},
    "pay-receipt": {"POST": payer()},
    "pay-document": {"GET": payer()},  # the chosen draft's PDF: the receipt once paid (no fee line)
    "pay-simulate": {"POST": payer()},  # test-mode pay links only (drafts.simulation refuses live ones)
    "refund-claim-page": {"GET": payer(), "POST": payer()},
    "account": {"*": session()},
    "invitation": {"*": payer()},  # a team invitation's single-use token in the URL, emailed to the invited
    "security_link": {"*": payer()},  # the signed single-use token in the URL, emailed to the owner
    "register": {"*": person()},
    "register_code": {"*": person()},
    "login": {"*": person()},
    "login_code": {"*": person()},
    "logout": {"*": person()},
    "forgot": {"*": person()},
    "forgot_code": {"*": person()},
    "dashboard:overview": {"GET": session(READ)},
    "dashboard:organization": {"POST": session()},  # the switcher: the person's own memberships
    "dashboard:team": {"GET": session(ADMIN, role_reads=True), "POST": session(ADMIN)},  # POST invites
    "dashboard:team_member": {"POST": session(ADMIN)},  # making or unmaking an owner: an owner (the view)
    "dashboard:team_invitation_revoke": {"POST": session(ADMIN)},
    "dashboard:audit_log": {"GET": session(ADMIN, role_reads=True)},  # the CSV export too
    "dashboard:mode": {"*": session(DEVELOPER)},
    "dashboard:drafts": {"*": session(MONEY)},
    "dashboard:draft_new": {"*": session(MONEY)},
    "dashboard:fee_preview": {"GET": session(READ)},
    "dashboard:draft": {"*": session(MONEY)},
    "dashboard:draft_pdf": {"GET": session(READ)},
    "dashboard:draft_template": {"*": session(MONEY)},
    "dashboard:refund_new": {"*": session(MONEY)},
    "dashboard:draft_action": {"*": session(MONEY)},
    "dashboard:webhooks": {"*": session(DEVELOPER)},
    "dashboard:webhook_deliveries": {"GET": session(DEVELOPER)},
    "dashboard:events": {"GET": session(DEVELOPER)},
    "dashboard:webhook": {"*": session(DEVELOPER)},
    "dashboard:webhook_action": {"*": session(DEVELOPER)},
    "dashboard:api_keys": {"GET": session(DEVELOPER), "POST": step_up(DEVELOPER)},  # POST creates a key
    "dashboard:api_key_revoke": {"*": session(DEVELOPER)},
    "dashboard:api_key_rotate": {"*": session(DEVELOPER)},  # the new key: step-up, asked by its service
    "dashboard:fees": {"*": session(ADMIN)},
    "dashboard:paylinks": {"*": session(MONEY)},
    "dashboard:paylink_new": {"*": session(MONEY)},
    "dashboard:paylink": {"*": session(MONEY)},
    "dashboard:paylink_cancel": {"*": session(MONEY)},
    "dashboard:refunds": {"*": session(MONEY)},
    "dashboard:refund": {"*": session(MONEY)},
    "dashboard:refund_action": {"*": session(MONEY)},
    "dashboard:templates": {"*": session(MONEY)},
    "dashboard:template_action": {"*": session(MONEY)},
    "dashboard:address_book": {"*": session(ADMIN)},
    "dashboard:address_book_default": {"*": session(ADMIN)},
    "dashboard:address_book_delete": {"*": session(ADMIN)},
    "dashboard:address_book_usable_now": {"POST": step_up(ADMIN)},  # an address usable by keys before its delay
    "dashboard:receiver_lock": {"POST": session(ADMIN)},  # off asks for step-up in the service
    "dashboard:receiving_wallets": {"*": session(ADMIN)},
    "dashboard:receiving_wallet_archive": {"POST": session(ADMIN)},
    "dashboard:confirm": {"*": session()},  # step-up itself
    "dashboard:transfers": {"*": session(MONEY)},
    "dashboard:transfer_attach": {"*": session(MONEY)},
    "dashboard:security": {"*": session()},
    "dashboard:totp_off": {"POST": step_up(proof_in_request=True)},  # the app off: its code is the proof
    "dashboard:notifications": {"*": session(DEVELOPER)},
    "dashboard:profile": {"*": session(ADMIN)},
    "dashboard:signout": {"*": person()},
    # The admin's own sign-in door: sends a visitor to the account's sign-in, tells staff
    # without a second factor what to do (accounts/admin_site.py).
    "admin:login": {"*": person()},
    "admin:*": {"*": staff()},
}

# MCP tools (mcp_server/tools.py, account_tools.py): API keys only, each with the scope of the
# REST operation it mirrors. No tool changes the account itself (passkeys, password, second
# factor, keys, sessions, deletion): such a rule would be session(), which refuses every key.
MCP: dict[str, dict[str, Rule]] = {
    "mcp:create_draft": {"*": key("drafts:write")},  # POST /api/v1/drafts
    "mcp:create_drafts_batch": {"*": key("drafts:write")},  # POST /api/v1/drafts/batch
    "mcp:get_draft": {"*": key("drafts:read")},  # GET /api/v1/drafts/{id}
    "mcp:list_drafts": {"*": key("drafts:read")},  # GET /api/v1/drafts
    "mcp:get_draft_status": {"*": key("drafts:read")},  # GET /api/v1/drafts/{id}/status
    "mcp:cancel_draft": {"*": key("drafts:write")},  # POST /api/v1/drafts/{id}/cancel
    "mcp:accept_received": {"*": key("drafts:write")},  # POST /api/v1/drafts/{id}/accept-received
    "mcp:requote_draft": {"*": key("drafts:write")},  # POST /api/v1/drafts/{id}/requote
    "mcp:get_tx_template": {"*": key("drafts:read")},  # GET /api/v1/drafts/{id}/tx-template
    "mcp:get_draft_fees": {"*": key("drafts:read")},  # GET /api/v1/drafts/{id}/fees
    "mcp:create_payment_request": {"*": key("paylinks:write")},  # POST /api/v1/payment-requests
    "mcp:get_payment_request": {"*": key("paylinks:read")},  # GET /api/v1/payment-requests/{id}
    "mcp:list_payment_requests": {"*": key("paylinks:read")},  # GET /api/v1/payment-requests
    "mcp:cancel_payment_request": {"*": key("paylinks:write")},  # POST /api/v1/payment-requests/{id}/cancel
    "mcp:create_refund": {"*": key("refunds:write")},  # POST /api/v1/refunds
    "mcp:get_refund": {"*": key("refunds:read")},  # GET /api/v1/refunds/{id}
    "mcp:list_refunds": {"*": key("refunds:read")},  # GET /api/v1/refunds
    "mcp:approve_refund": {"*": key("refunds:write")},  # POST /api/v1/refunds/{id}/approve
    "mcp:cancel_refund": {"*": key("refunds:write")},  # POST /api/v1/refunds/{id}/cancel
    "mcp:get_attention": {"*": key("drafts:read")},  # GET /api/v1/attention
    "mcp:get_rates": {"*": key("rates:read")},  # GET /api/v1/rates
    "mcp:get_fee_schedule": {"*": key("fees:read")},  # GET /api/v1/fees/schedule
    "mcp:quote_fee": {"*": key("fees:read")},  # POST /api/v1/fees/quote
    "mcp:get_accrued_fees": {"*": key("fees:read")},  # GET /api/v1/fees/accrued
    "mcp:settle_accrued_fees": {"*": key("fees:write")},  # POST /api/v1/fees/accrued/settle
    "mcp:list_webhooks": {"*": key("webhooks:manage")},  # GET /api/v1/webhooks
    "mcp:test_pay_draft": {"*": key("drafts:write", role=DEVELOPER)},  # POST /api/v1/test-helpers/drafts/{id}/pay
    "mcp:test_expire_draft": {"*": key("drafts:write", role=DEVELOPER)},  # POST /api/v1/test-helpers/drafts/{id}/expire
    "mcp:test_reorg_draft": {"*": key("drafts:write", role=DEVELOPER)},  # POST /api/v1/test-helpers/drafts/{id}/reorg
    "mcp:create_webhook": {"*": key("webhooks:manage")},  # POST /api/v1/webhooks
    "mcp:delete_webhook": {"*": key("webhooks:manage")},  # DELETE /api/v1/webhooks/{id}
    "mcp:test_webhook": {"*": key("webhooks:manage")},  # POST /api/v1/webhooks/{id}/test
    "mcp:create_recurring_template": {"*": key("templates:manage")},  # POST /api/v1/recurring-templates
    "mcp:list_recurring_templates": {"*": key("templates:manage")},  # GET /api/v1/recurring-templates
    "mcp:pause_recurring_template": {"*": key("templates:manage")},  # POST /api/v1/recurring-templates/{id}/pause
    "mcp:resume_recurring_template": {"*": key("templates:manage")},  # POST /api/v1/recurring-templates/{id}/resume
    "mcp:delete_recurring_template": {"*": key("templates:manage")},  # DELETE /api/v1/recurring-templates/{id}
    "mcp:add_address": {"*": key("addressbook:manage")},  # POST /api/v1/address-book
    "mcp:list_address_book": {"*": key("addressbook:manage")},  # GET /api/v1/address-book
    "mcp:delete_address": {"*": key("addressbook:manage")},  # DELETE /api/v1/address-book/{id}
    "mcp:list_webhook_deliveries": {"*": key("webhooks:manage")},  # GET /api/v1/webhooks/{id}/deliveries
    "mcp:redeliver_webhook_delivery": {"*": key("webhooks:manage")},  # POST .../deliveries/{deliveryId}/redeliver
    "mcp:rotate_webhook_secret": {"*": key("webhooks:manage")},  # POST /api/v1/webhooks/{id}/rotate-secret
    "mcp:enable_webhook": {"*": key("webhooks:manage")},  # PATCH /api/v1/webhooks/{id} (active: true)
    "mcp:list_unmatched_transfers": {"*": key("drafts:read")},  # GET /api/v1/transfers
    "mcp:attach_transfer": {"*": key("drafts:write")},  # POST /api/v1/transfers/{id}/attach
    "mcp:list_events": {"*": key("events:read")},  # GET /api/v1/events
    "mcp:get_event": {"*": key("events:read")},  # GET /api/v1/events/{id}
    "mcp:redeliver_event": {"*": key("webhooks:manage")},  # POST /api/v1/events/{id}/redeliver
    "mcp:create_receiving_wallet": {"*": key("wallets:write")},  # POST /api/v1/receiving-wallets
    "mcp:list_receiving_wallets": {"*": key("wallets:read")},  # GET /api/v1/receiving-wallets
    "mcp:get_receiving_wallet": {"*": key("wallets:read")},  # GET /api/v1/receiving-wallets/{id}
    "mcp-resource:payments://assets": {"*": key()},
    "mcp-resource:fees://schedule": {"*": key("fees:read")},
    "mcp-resource:draft://{id}": {"*": key("drafts:read")},
}

ROUTES: dict[str, dict[str, Rule]] = {**API, **PAGES, **MCP}
