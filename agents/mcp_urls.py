"""The MCP endpoint, at /mcp (with or without a trailing slash)."""

from django.urls import URLPattern, path
from django.views.decorators.csrf import csrf_exempt

from agents.mcp_views import QuireMCPView

mcp_view = csrf_exempt(QuireMCPView.as_view())

urlpatterns: list[URLPattern] = [
    path("mcp", mcp_view, name="mcp"),
    path("mcp/", mcp_view),
]
