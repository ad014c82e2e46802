"""Top-level URLs: the web UI, the REST API, the MCP endpoint, health and admin."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config.health import healthz
from wiki.views import AdminLoginView, QuireLoginView

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # The admin's login goes through the same throttled view as the wiki's.
    path("admin/login/", AdminLoginView.as_view(), name="admin-login"),
    path("admin/", admin.site.urls),
    path("login/", QuireLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("reviews/", include("reviews.urls")),
    path("agents/", include("agents.urls")),
    path("api/", include("config.api_urls")),
    path("", include("agents.mcp_urls")),
    path("", include("wiki.urls")),
]
