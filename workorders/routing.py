"""Extra ASGI routes of workorders: the MCP endpoint (streamable HTTP, bearer token)."""

from workorders.mcp_server import MCP_PATH, McpHttpApp

websocket_urlpatterns: list = []
asgi_mounts = [(MCP_PATH, McpHttpApp())]
