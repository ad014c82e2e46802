"""Top-level URLs: the web UI, the REST API, the MCP endpoint, health and admin."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config.health import healthz
from people.sso_views import SsoCallback, SsoStart
from reviews import editing
from wiki import urls as wiki_urls
from wiki.views import AdminLoginView, QuireLoginView

# The wiki's URLs, with its forms that propose changes (they live with the rest of the life of
# a version, in reviews/editing.py) under the same names: `wiki:new`, `wiki:edit`...
wiki_patterns = [
    *wiki_urls.urlpatterns,
    path("new/", editing.page_new, name="new"),
    path("p/<str:public_id>/new-child/", editing.page_new, name="new_child"),
    path("p/<str:public_id>/edit/", editing.page_edit, name="edit"),
    path("p/<str:public_id>/append/", editing.page_append, name="append"),
    path("p/<str:public_id>/move/propose/", editing.page_move_propose, name="propose_move"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # The admin's login goes through the same throttled view as the wiki's.
    path("admin/login/", AdminLoginView.as_view(), name="admin-login"),
    path("admin/", admin.site.urls),
    path("login/", QuireLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Sign-in through the OpenID Connect provider (docs/team.md), when one is set up.
    path("oidc/authenticate/", SsoStart.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", SsoCallback.as_view(), name="oidc_authentication_callback"),
    path("", include("people.urls")),
    path("inbox/", include("inbox.urls")),
    path("reviews/", include("reviews.urls")),
    path("agents/", include("agents.urls")),
    path("api/", include("config.api_urls")),
    path("", include("agents.mcp_urls")),
    path("", include("connect.urls")),
    path("", include((wiki_patterns, "wiki"))),
]
