from tests.formats.conftest import lnurl_server, node_key  # noqa: F401 - Lightning fixtures
