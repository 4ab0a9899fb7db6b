"""What a tool is: one REST operation (method and path), what it runs, and how it is listed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types import Tool, ToolAnnotations

from accounts.authorization import Rule, tool_rule
from accounts.models import ApiKey, User
from drafts.selectors import draft_get
from mcp_server import schemas


class ProblemBody(Exception):
    """A problem document already rendered (an idempotent replay of a failed creation)."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body.get("detail"))
        self.body = body


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
        return schemas.operation(self.method, self.path).get("summary", self.name)

    @property
    def description(self) -> str:
        scope = f" Needs the API key scope `{self.scope}`." if self.scope else ""
        same = f" Answers what {self.same_result_as} answers (its output schema)." if self.same_result_as else ""
        return f"{self.title}. {self.guidance}{same}{scope}"

    @property
    def wraps_result(self) -> bool:
        return schemas.wraps_result(self.method, self.path)

    def as_mcp(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=schemas.input_schema(
                self.method, self.path, descriptions=self.descriptions, required_too=self.required_too
            ),
            output_schema=None if self.same_result_as else schemas.output_schema(self.method, self.path),
            annotations=ToolAnnotations(
                read_only_hint=self.read_only,
                destructive_hint=self.destructive,
                idempotent_hint=self.idempotent,
                open_world_hint=self.open_world,
            ),
            _meta={"requiredScope": self.scope},
        )
