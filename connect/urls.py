"""OAuth for MCP clients. The names are django-oauth-toolkit's (its metadata view builds the
endpoint URLs from them); the discovery documents live at the root, the rest under /oauth/."""

from django.urls import URLPattern, path
from oauth2_provider import views as oauth_views

from connect import views

app_name = "oauth2_provider"
urlpatterns: list[URLPattern] = [
    path(
        ".well-known/oauth-authorization-server",
        oauth_views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        views.ResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/mcp",
        views.ResourceMetadataView.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("oauth/authorize/", views.AuthorizeView.as_view(), name="authorize"),
    path("oauth/token/", views.open_to_browsers(oauth_views.TokenView.as_view()), name="token"),
    path(
        "oauth/revoke/",
        views.open_to_browsers(oauth_views.RevokeTokenView.as_view()),
        name="revoke-token",
    ),
    path("oauth/register/", views.register, name="dcr-register"),
    path("oauth/connections/", views.my_connections, name="connections"),
    path(
        "oauth/connections/<int:connection_id>/disconnect/",
        views.disconnect,
        name="disconnect",
    ),
    path("oauth/agents/<int:agent_id>/rename/", views.my_agent_rename, name="my-agent-rename"),
    path("oauth/agents/<int:agent_id>/revoke/", views.my_agent_revoke, name="my-agent-revoke"),
]
