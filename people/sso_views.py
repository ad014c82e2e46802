"""The two steps of signing in through the provider, answered with 404 when it is not set up."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from people.sso import sso_enabled


class SsoStart(OIDCAuthenticationRequestView):  # type: ignore[misc]
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not sso_enabled():
            raise Http404("single sign-on is not set up")
        response: HttpResponse = super().get(request)
        return response


class SsoCallback(OIDCAuthenticationCallbackView):  # type: ignore[misc]
    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not sso_enabled():
            raise Http404("single sign-on is not set up")
        response: HttpResponse = super().get(request)
        return response
