"""Team roles: what each role of an organization's member may do, as one table.

An organization is an account (`accounts.User`): the row that owns drafts, pay links, refunds,
keys, webhooks, wallets and the profile. A person signs in as themselves and works in one of the
organizations they belong to (`accounts.Membership`), with the role they have there; their own
account is an organization of which they are always the owner.

The authorization table (config/authorization.py) names, for each organization route, the work
its change needs (`Rule.role`); reading (GET, HEAD) needs only `read` unless the rule says
`role_reads`. A role may call the route when this table grants it that work.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    DEVELOPER = "developer"
    SUPPORT = "support"
    VIEWER = "viewer"


class Work(StrEnum):
    READ = "read"  # see the organization's objects; change nothing
    MONEY = "money"  # drafts, pay links, refunds (create, cancel, approve within the limit), templates
    DEVELOPER = "developer"  # API keys, webhook endpoints, notification settings, test helpers
    ADMIN = "admin"  # members and invitations, the audit log, profile, receiving wallets and addresses, fees
    OWNER = "owner"  # what only an owner may: owners themselves, the refund approval limit


# The one table of roles: what each role may do. docs/security.md shows the same table.
GRANTS: dict[Role, frozenset[Work]] = {
    Role.OWNER: frozenset(Work),
    Role.ADMIN: frozenset({Work.READ, Work.MONEY, Work.DEVELOPER, Work.ADMIN}),
    Role.DEVELOPER: frozenset({Work.READ, Work.DEVELOPER}),
    Role.SUPPORT: frozenset({Work.READ, Work.MONEY}),
    Role.VIEWER: frozenset({Work.READ}),
}

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def may(role: str | None, work: str) -> bool:
    """Whether a member with this role may do this work."""
    return role is not None and Work(work) in GRANTS.get(Role(role), frozenset())


# The work a key rule's scope stands for, when a session calls the same route: what a member's
# role needs for it (the table may name another).
SCOPE_WORK: dict[str | None, Work] = {
    None: Work.READ,
    "drafts:read": Work.READ,
    "drafts:write": Work.MONEY,
    "paylinks:read": Work.READ,
    "paylinks:write": Work.MONEY,
    "refunds:read": Work.READ,
    "refunds:write": Work.MONEY,
    "templates:manage": Work.MONEY,
    "rates:read": Work.READ,
    "fees:read": Work.READ,
    "events:read": Work.READ,
    "fees:write": Work.ADMIN,
    "webhooks:manage": Work.DEVELOPER,
    "wallets:read": Work.READ,
    "wallets:write": Work.ADMIN,
    "addressbook:manage": Work.ADMIN,
}


def scope_work(scope: str | None) -> Work:
    return SCOPE_WORK[scope]
