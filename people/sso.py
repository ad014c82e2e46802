"""Sign-in through the company's OpenID Connect provider: mozilla-django-oidc's backend, with
people found by the provider's subject (then by a verified email, for invited people), created
at their first sign-in, and their groups taken from a claim (people/services.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from people import services


def sso_enabled() -> bool:
    return bool(settings.OIDC_RP_CLIENT_ID)


class QuireOIDCBackend(OIDCAuthenticationBackend):  # type: ignore[misc]
    def get_token(self, payload: dict[str, Any]) -> dict[str, Any]:
        token_info: dict[str, Any] = super().get_token(payload)
        # Kept for get_or_create_user: the refresh token lets the worker ask again later.
        self._token_info = token_info
        return token_info

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super().verify_token(token, **kwargs)
        self._id_claims = payload
        return payload

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        userinfo = self.get_userinfo(access_token, id_token, payload)
        # Okta and Azure put groups in the ID token, Keycloak in both: read them together.
        claims = {**payload, **userinfo}
        if userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("the userinfo subject is not the ID token's")
        try:
            return services.sso_sign_in(
                issuer=str(payload.get("iss", "")),
                claims=claims,
                refresh_token=str(getattr(self, "_token_info", {}).get("refresh_token") or ""),
            )
        except services.SignInRefused as refused:
            # The callback view sends the person back to the login page, which says why.
            messages.error(self.request, str(refused))
            return None

    def get_user(self, user_id: Any) -> Any:
        # The library's own get_user skips the check that Django's ModelBackend makes.
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None
