"""The bodies of the recurring-template operations the MCP tools share with the REST views
(recurring.api.views): each takes the account and the parsed input and answers the REST body."""

from __future__ import annotations

from core.api.pagination import paginate
from drafts.idempotency import Outcome, create_once
from recurring import services
from recurring.api.serializers import CreateRecurringTemplateRequestSerializer
from recurring.presenters import recurring_template_json
from recurring.selectors import recurring_template_get, recurring_template_list


def recurring_template_page_json(*, user, query) -> dict:
    """GET /recurring-templates: one page, newest first."""
    page = paginate(recurring_template_list(user=user), query)
    return page.envelope([recurring_template_json(t) for t in page.items])


def recurring_template_create_outcome(
    *, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key"
) -> Outcome:
    """POST /recurring-templates once per Idempotency-Key."""
    return create_once(
        user=user,
        key=idempotency_key,
        operation="recurringTemplate",
        body=body,
        make=lambda: recurring_template_create_json(user=user, body=body),
        key_field=key_field,
    )


def recurring_template_create_json(*, user, body) -> dict:
    """POST /recurring-templates: the new template (its first draft is made at its first run)."""
    data = CreateRecurringTemplateRequestSerializer(data=body)
    data.is_valid(raise_exception=True)
    fields = data.validated_data
    template = services.recurring_template_create(
        user=user,
        interval=fields["interval"],
        draft=dict(fields["draft"]),
        name=fields.get("name") or "",
        first_run_at=fields.get("firstRunAt"),
        tz=fields.get("timezone") or "UTC",
    )
    return recurring_template_json(template)


def recurring_template_delete_json(*, user, template_id) -> dict:
    """DELETE /recurring-templates/{id}: the deleted template (its drafts stay)."""
    template = recurring_template_get(user=user, template_id=template_id)
    body = recurring_template_json(template)
    services.recurring_template_delete(template=template)
    return body
