"""The authorization table the tests run with: the service's own, plus the views that exist
only in tests (tests/platform/urls.py)."""

from accounts.authorization import key, public
from config.authorization import ROUTES as SERVICE_ROUTES

ROUTES = {
    **SERVICE_ROUTES,
    "test-scoped": {"GET": key("drafts:read"), "POST": key("drafts:write")},
    "test-crash": {"GET": key()},
    "test-public": {"GET": public()},
    "crash": {"GET": public()},  # tests/platform/test_error_documents.py
    "page-crash": {"GET": public()},  # tests/platform/test_error_pages.py
}
