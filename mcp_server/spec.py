"""What a tool is: one REST operation (method and path), what it runs, and how it is listed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types import Tool, ToolAnnotations

from accounts.authorization import Rule, key_refusal, tool_rule
from accounts.models import ApiKey, User
from drafts.selectors import draft_get
from mcp_server import schemas


class ProblemBody(Exception):
    """A problem document already rendered (an idempotent replay of a failed creation)."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body.get("detail"))
        self.body = body


def once(create: Callable[..., Any]) -> Callable[[Call], Any]:
    """A tool running a creation once per key: the REST Idempotency-Key header is the
    idempotencyKey argument; `create(user, body, idempotency_key, key_field)` gives its Outcome."""

    def run(call: Call) -> Any:
        body = dict(call.arguments)
        key = body.pop("idempotencyKey", None)
        outcome = create(user=call.user, body=body, idempotency_key=key, key_field="idempotencyKey")
        if outcome.status >= 400:
            raise ProblemBody(outcome.body)
        return outcome.body

    return run


@dataclass(frozen=True)
class Call:
    user: User
    api_key: ApiKey
    arguments: dict[str, Any]

    @property
    def draft(self):
        return draft_get(user=self.user, draft_id=self.arguments["id"])


@dataclass(frozen=True)
class ToolSpec:
    name: str
    method: str
    path: str  # the REST operation this tool is
    run: Callable[[Call], Any]
    guidance: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    descriptions: dict[str, str] | None = None
    required_too: tuple[str, ...] = ()  # REST refuses a call without them (its serializer checks them itself)
    # The result is the object another tool's output schema describes (a draft, as get_draft): its
    # schema is listed once, there, and this tool's description points at it (tools/list stays small).
    same_result_as: str | None = None
    # Only these arguments (a tool that is one use of its operation: enable_webhook is a PATCH
    # with active true); None: every parameter and body property of the operation.
    only: tuple[str, ...] | None = None
    # A list whose items are what another tool answers (list_drafts: get_draft's drafts): the items'
    # schema is that tool's, listed there once.
    items_as: str | None = None
    # Arrays in the result whose items are what another tool answers (redeliver_event's deliveries:
    # test_webhook's), by property name: the items' schema is listed once, there.
    result_items_as: dict[str, str] | None = None
    # A nested object that is another tool's arguments (a batch item's draft: create_draft's), by name.
    nested_as: dict[str, str] | None = None
    summary: str | None = None  # the title, where the REST operation's says what a tool is not

    @property
    def lists(self) -> bool:
        """A list tool: its result is {items, total, next} (core.api.pagination's pages, as MCP gives them)."""
        return self.name.startswith("list_")

    @property
    def test_only(self) -> bool:
        """Listed for test keys only (the test helpers refuse live keys)."""
        return self.path.startswith("/api/v1/test-helpers/")

    def listed_for(self, api_key: ApiKey) -> bool:
        """Whether tools/list shows this tool to the key: its scope and its mode allow the call."""
        if self.test_only and api_key.livemode:
            return False
        return key_refusal(self.rule, api_key) is None

    @property
    def rule(self) -> Rule:
        """Who may call it: the authorization table's `mcp:<name>` row (config/authorization.py)."""
        return tool_rule(self.name)

    @property
    def scope(self) -> str | None:
        return self.rule.scope

    @property
    def cost(self) -> str | None:
        return schemas.cost_class(self.method, self.path)

    @property
    def title(self) -> str:
        return self.summary or schemas.operation(self.method, self.path).get("summary", self.name)

    @property
    def description(self) -> str:
        # The title says what it is (tools/list shows it beside); the scope is _meta.requiredScope.
        same = f" Result: as {self.same_result_as}'s." if self.same_result_as else ""
        if self.items_as:
            same = f" Items: as {self.items_as}'s result."
        for name, tool in (self.result_items_as or {}).items():
            same += f" {name}: as {tool}'s result."
        return f"{self.guidance}{same}"

    @property
    def wraps_result(self) -> bool:
        return not self.lists and schemas.wraps_result(self.method, self.path)

    def output_schema(self, by_name: dict[str, ToolSpec] | None = None) -> dict[str, Any]:
        if by_name is None:
            from mcp_server.tools import BY_NAME

            by_name = BY_NAME
        if self.lists:
            page = schemas.page_schema(self.method, self.path)
            if self.items_as:
                summary = schemas.summary_schema(by_name[self.items_as].output_schema(by_name))
                page = {**page, "properties": {**page["properties"], "items": {"type": "array", "items": summary}}}
            return page
        if self.same_result_as:
            return schemas.summary_schema(by_name[self.same_result_as].output_schema(by_name))
        schema = schemas.output_schema(self.method, self.path)
        assert schema is not None, f"{self.name}: the REST operation describes no JSON result"
        assert by_name is not None
        for name, tool in (self.result_items_as or {}).items():
            summary = schemas.summary_schema(by_name[tool].output_schema(by_name))
            schema = {**schema, "properties": {**schema["properties"], name: {"type": "array", "items": summary}}}
        return schema

    def page(self, body: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        """A list's page (core.api.pagination: REST's envelope, or a plain array's items with its
        total and next) as {items, total, next}: `next` is the arguments that fetch the next page
        (REST's cursor as startingAfter), null on the last."""
        after = body["next"]
        following = {**{k: v for k, v in arguments.items() if k != "page"}, "startingAfter": after}
        return {"items": body["items"], "total": body["total"], "next": following if after else None}

    def annotations(self) -> ToolAnnotations:
        """The hints, each only where it differs from the MCP default a client assumes (not read-only,
        destructive, not idempotent, open world): tools/list stays small."""
        hints = {
            "read_only_hint": self.read_only or None,
            "destructive_hint": False if not self.read_only and not self.destructive else None,
            "idempotent_hint": self.idempotent or None,
            "open_world_hint": False if not self.open_world else None,
        }
        return ToolAnnotations.model_validate({name: value for name, value in hints.items() if value is not None})

    def as_mcp(self, by_name: dict[str, ToolSpec] | None = None) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schemas.input_schema(
                self.method,
                self.path,
                descriptions=self.descriptions,
                required_too=self.required_too,
                only=self.only,
                nested_as=self.nested_as,
            ),
            output_schema=self.output_schema(by_name),
            annotations=self.annotations(),
            _meta={"requiredScope": self.scope},
        )
