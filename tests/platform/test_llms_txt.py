import pytest

from tests.platform.test_openapi import api_routes

pytestmark = pytest.mark.django_db


def test_llms_txt_lists_every_api_route_with_a_purpose(anon_client):
    response = anon_client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    lines = [line for line in text.splitlines() if line.startswith("- ") and " /api/v1/" in line]
    listed = {line.split()[2].rstrip(":") for line in lines}
    assert api_routes() <= listed
    for line in lines:
        assert line.split(": ", 1)[1].strip(), f"no purpose given: {line}"


def test_llms_txt_tells_how_to_authenticate_and_where_the_docs_are(anon_client):
    text = anon_client.get("/llms.txt").content.decode()
    assert "Authorization: Bearer" in text
    assert "http://testserver/swagger" in text
    assert "http://testserver/mcp" in text
    assert "drafts:write" in text


def test_llms_txt_lists_every_mcp_tool_with_its_scope_from_the_live_tool_list(anon_client):
    from mcp_server.tools import tool_list

    text = anon_client.get("/llms.txt").content.decode()
    assert "- Endpoint: http://testserver/mcp" in text
    for tool in tool_list():
        scope = tool.meta["requiredScope"]
        assert f"- `{tool.name}` (scope {scope}): {tool.description}" in text
