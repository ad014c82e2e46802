"""REST API (/api/v1/) and its OpenAPI schema and docs (served locally)."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.whoami import WhoAmIView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("v1/me/", WhoAmIView.as_view(), name="api-me"),
    path("v1/", include("reviews.api_urls")),
]
