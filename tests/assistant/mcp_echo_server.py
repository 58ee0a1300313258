"""A tiny stdio MCP server for the bridge tests (official SDK)."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
def add(a: float, b: float) -> dict:
    """Add two numbers."""
    return {"sum": a + b}


if __name__ == "__main__":
    server.run("stdio")
