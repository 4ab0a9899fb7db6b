"""The merchant dashboard: server-rendered pages, each a thin caller of the same services the
API uses (drafts door, state machine, webhooks, API keys, fee settlement). A domain Problem is
shown next to the form field it names."""
