# The end-to-end tests reuse the chain-watching and webhook fixtures (anvil, a local receiver).
from tests.chainwatch.conftest import anvil_factory, ethereum  # noqa: F401
from tests.mcp.conftest import mcp_server_with  # noqa: F401, E402
from tests.webhooks.conftest import make_receiver  # noqa: F401
