"""django-oauth-toolkit's validator with Quire's rules on its extension points.

A code carries the agent the person picked; exchanging it opens a connection whose id is the
token family of every refresh token after it. A code for an agent the person may no longer
connect is invalid; a refresh token of an ended connection is refused, and one that comes
back after it was used ends its connection (the library revokes the chain).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from oauth2_provider.models import AbstractAccessToken, RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.common import Request
from oauthlib.oauth2.rfc6749 import errors

from connect import client_documents, selectors, services
from connect.models import Grant


def pkce_s256_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 S256 (the only method Quire accepts): BASE64URL(SHA256(verifier)) == challenge."""
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    computed = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return hmac.compare_digest(computed, challenge)


class QuireOAuth2Validator(OAuth2Validator):
    def validate_client_id(
        self, client_id: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if super().validate_client_id(client_id, request, *args, **kwargs):
            return True
        why = client_documents.refusal(client_id, request)
        if why is None:
            return False
        # The authorize step shows it to the signed-in person (no redirect: RFC 6749 4.1.2.1).
        raise errors.InvalidClientIdError(description=why, request=request)

    def authenticate_client(self, request: Request, *args: Any, **kwargs: Any) -> bool:
        # An unknown client at the token endpoint comes here (oauthlib's default asks for
        # authentication when no client was found), not to authenticate_client_id.
        if super().authenticate_client(request, *args, **kwargs):
            return True
        why = client_documents.refusal(getattr(request, "client_id", None) or "", request)
        if why is None:
            return False
        raise errors.InvalidClientError(description=why, request=request)

    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if services.redirect_uri_problem(redirect_uri) is not None:
            return False
        return bool(
            super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)
        )

    def _create_authorization_code(
        self, request: Request, code: dict[str, str], expires: Any = None
    ) -> Grant:
        grant: Grant = super()._create_authorization_code(request, code, expires)
        # The authorize view passes the agent the person picked as a credential.
        services.grant_agent_set(grant=grant, agent_id=getattr(request, "quire_agent_id", None))
        return grant

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            if not selectors.code_is_live(code, client):
                services.connection_end_for_replayed_code(code=code, application=client)
            return False
        grant = selectors.grant_by_code(code, client)
        if grant.code_challenge and not pkce_s256_matches(
            getattr(request, "code_verifier", None) or "", grant.code_challenge
        ):
            # oauthlib would refuse it after this and leave the code usable for another try.
            services.code_burn(grant=grant)
            return False
        return grant.agent is not None and services.can_connect(grant.user, grant.agent)

    def _save_bearer_token(
        self, token: dict[str, Any], request: Request, *args: Any, **kwargs: Any
    ) -> Any:
        if request.grant_type == "authorization_code":
            grant = selectors.grant_by_code(request.code, request.client)
            request.quire_family = services.connection_open(grant=grant).family
        return super()._save_bearer_token(token, request, *args, **kwargs)

    def _create_refresh_token(
        self,
        request: Request,
        refresh_token_code: str,
        access_token: AbstractAccessToken,
        previous_refresh_token: RefreshToken | None,
    ) -> RefreshToken:
        # The family is the connection's: every token of the chain leads back to it.
        family = (
            previous_refresh_token.token_family
            if previous_refresh_token is not None
            else request.quire_family
        )
        refresh_token = RefreshToken(
            user=request.user,
            application=request.client,
            access_token=access_token,
            token_family=family,
            resource=getattr(request, "resource", []),
        )
        self._set_token_value(refresh_token, refresh_token_code)
        refresh_token.save()
        return refresh_token

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Request, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            family = selectors.revoked_refresh_family(refresh_token)
            if family is not None:
                services.connection_end_chain(family=family, reason="reused")
            return False
        return selectors.connection_is_live(request.refresh_token_instance.token_family)

    def revoke_token(
        self, token: str, token_type_hint: str | None, request: Request, *args: Any, **kwargs: Any
    ) -> None:
        # Revoking either token of a chain revokes the chain (RFC 7009 allows it; the library
        # does it): its connection ends too, and leaves the agent's screen.
        family = selectors.live_refresh_family(token, getattr(request, "client", None))
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)
        if family is not None:
            services.connection_end_chain(family=family, reason="revoked by the app")
