"""Quire as an OAuth authorization server for MCP clients: the consent screen, client
registration (RFC 7591), the protected-resource metadata (RFC 9728) and disconnecting.

The code and token machinery is django-oauth-toolkit's (its views and QuireOAuth2Validator);
these views add what a person decides and what the MCP endpoint is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, cast
from urllib.parse import urlsplit

from csp.decorators import csp_update
from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import Application
from oauth2_provider.views import AuthorizationView
from oauth2_provider.views.metadata import OAuthProtectedResourceMetadataView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from agents import services as agent_services
from agents.models import Agent
from agents.services import can_manage_agents
from connect import selectors, services
from core.errors import QuireError, RateLimited
from core.json_input import MAX_DEPTH, nesting_depth
from wiki.forms import sentence
from wiki.login_throttle import client_address

REGISTRATION_MAX_BYTES = 16 * 1024
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, Authorization, MCP-Protocol-Version",
    "Access-Control-Max-Age": "3600",
}


def open_to_browsers(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """For endpoints a client running in a browser calls (an MCP inspector): any origin may
    read the answer, since they take no cookie and answer only what the request proves."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "OPTIONS":
            response = HttpResponse(status=204)
        else:
            response = view(request, *args, **kwargs)
        for header, value in CORS_HEADERS.items():
            response[header] = value
        return response

    return csrf_exempt(wrapped)


# The consent screen's choice that makes a new agent of the person's own (issue 49).
NEW_AGENT = "new"


class ConsentForm(AllowForm):
    agent = forms.CharField(required=False)
    # A new agent of the person's own: its name, what it reads ("all": every page they may
    # read, now and later; "picked": the `new_pages` they tick), whether it proposes edits.
    new_name = forms.CharField(required=False)
    new_reads = forms.ChoiceField(
        required=False, choices=[("all", "all"), ("picked", "picked")], initial="all"
    )
    new_can_edit = forms.BooleanField(required=False)


def _redirect_target(uri: str) -> tuple[str, str]:
    """(what the person is told the client sends them back to, the CSP source for it)."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https") and parts.hostname:
        host = parts.hostname
        if services.is_loopback(host):
            host = f"{parts.netloc} (an app on your own computer)"
        return host, f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}: (an app on your computer)", f"{parts.scheme}:"


@method_decorator(never_cache, name="dispatch")
class AuthorizeView(AuthorizationView):
    """The authorize step: who asks, where it goes back to, which agent it acts as."""

    template_name = "connect/authorize.html"
    form_class = ConsentForm
    chosen_agent: Agent | None = None

    def _invalid_target(
        self, request: HttpRequest, credentials: dict[str, Any]
    ) -> OAuthToolkitError:
        return OAuthToolkitError(
            error=CustomOAuth2Error(
                error="invalid_target",
                description=f"This server issues tokens only for {selectors.mcp_resource()}.",
                state=credentials.get("state"),
            ),
            redirect_uri=credentials.get("redirect_uri"),
        )

    def _check_resources(
        self, request: HttpRequest, resources: list[str], credentials: dict[str, Any]
    ) -> None:
        ours = selectors.mcp_resource()
        if any(not selectors.same_resource(resource, ours) for resource in resources):
            raise self._invalid_target(request, credentials)

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        if credentials.get("code_challenge_method") != "S256":
            # The library refuses "plain" only once the person allowed; say it before.
            raise OAuthToolkitError(
                error=CustomOAuth2Error(
                    error="invalid_request",
                    description='Send a PKCE code_challenge with code_challenge_method "S256".',
                    state=credentials.get("state"),
                ),
                redirect_uri=credentials.get("redirect_uri"),
            )
        self._check_resources(request, request.GET.getlist("resource"), credentials)
        return scopes, credentials

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> Any:
        # The token's audience is always this server's /mcp, asked for or not (RFC 8707).
        self._check_resources(request, credentials.get("resource") or [], credentials)
        credentials = {**credentials, "resource": [selectors.mcp_resource()]}
        if self.chosen_agent is None:
            allow = False  # nothing is granted without a person picking an agent
        else:
            credentials["quire_agent_id"] = self.chosen_agent.pk
        return super().create_authorization_response(request, scopes, credentials, allow)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        data = form.data if form is not None and form.is_bound else {}
        client_id = kwargs.get("client_id") or data.get("client_id")
        redirect_uri = kwargs.get("redirect_uri") or data.get("redirect_uri")
        application = selectors.application_by_client_id(client_id)
        if application is None or not redirect_uri:
            return context
        shown_host, csp_source = _redirect_target(redirect_uri)
        self.csp_source = csp_source
        context.update(
            application=application,
            client_name=application.name or urlsplit(application.client_id).hostname,
            verified_by=urlsplit(application.client_id).hostname
            if application.registration_source == Application.RegistrationSource.CIMD
            else None,
            redirect_host=shown_host,
            choices=selectors.connectable_agents(self.request.user),  # type: ignore[arg-type]
            picked=str(data.get("agent", "")),
        )
        if agent_services.can_make_own_agent(self.request.user):  # type: ignore[arg-type]
            context.update(
                new_agent=NEW_AGENT,
                pickable=selectors.pickable_pages(self.request.user),  # type: ignore[arg-type]
                new_name=data.get("new_name")
                or f"{context['client_name']} for {self.request.user.get_username()}"[:100],
                new_reads=data.get("new_reads") or "all",
                new_pages={str(pk) for pk in form.data.getlist("new_pages")} if data else set(),
                new_can_edit=bool(data.get("new_can_edit")),
            )
        return context

    def render_to_response(self, context: dict[str, Any], **response_kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **response_kwargs)
        source = getattr(self, "csp_source", None)
        if source:
            # The browser follows Allow's redirect to the client only if the form may go there.
            # django-csp's public decorator, applied to this one response.
            allowing = csp_update({"form-action": [source]})(lambda request: response)
            return cast(HttpResponse, allowing(self.request))
        return response

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        application = selectors.application_by_client_id(form.cleaned_data["client_id"])
        if application is None:
            raise Http404("This client is not registered any more. Start connecting again from it.")
        allow = bool(form.cleaned_data.get("allow"))
        agent = None
        if allow and form.cleaned_data.get("agent") == NEW_AGENT:
            agent = self._own_agent(form)
            if agent is None:
                return self.form_invalid(form)
        elif allow:
            agent_id = str(form.cleaned_data.get("agent") or "")
            agent = selectors.agent_by_id(int(agent_id)) if agent_id.isdigit() else None
            if agent is None or not services.can_connect(self.request.user, agent):
                form.add_error(None, "Pick the agent this client will act as.")
                return self.form_invalid(form)
        services.consent_record(
            actor=self.request.user,  # type: ignore[arg-type]
            application=application,
            agent=agent,
            allowed=allow,
        )
        self.chosen_agent = agent
        return super().form_valid(form)

    def _own_agent(self, form: ConsentForm) -> Agent | None:
        """The agent the person makes for this client on the consent screen, or None with
        the form's error saying why not."""
        person = self.request.user
        try:
            return agent_services.agent_create_own(
                actor=person,  # type: ignore[arg-type]
                name=form.cleaned_data.get("new_name") or "",
                all_pages=form.cleaned_data.get("new_reads") != "picked",
                pages=selectors.pages_picked(
                    person,  # type: ignore[arg-type]
                    self.request.POST.getlist("new_pages"),
                ),
                can_edit_pages=bool(form.cleaned_data.get("new_can_edit")),
            )
        except QuireError as error:
            form.add_error(None, sentence(error.message))
            return None


class ResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata for /mcp, at the path form and at the root form alike."""

    def get_resource(self, request: HttpRequest) -> str:
        return selectors.mcp_resource()


def _registration_error(error: str, description: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


@open_to_browsers
@require_POST
def register(request: HttpRequest) -> HttpResponse:
    """Dynamic client registration (RFC 7591) for clients without a metadata document."""
    if int(request.META.get("CONTENT_LENGTH") or 0) > REGISTRATION_MAX_BYTES:
        return _registration_error(
            "invalid_client_metadata",
            f"The registration is larger than {REGISTRATION_MAX_BYTES:,} bytes.",
            413,
        )
    try:
        metadata = json.loads(request.body)
    except (ValueError, RecursionError):
        metadata = None
    if metadata is None or nesting_depth(metadata) > MAX_DEPTH:
        return _registration_error(
            "invalid_client_metadata", "Send the client's metadata as one flat JSON object."
        )
    try:
        application = services.client_register(metadata=metadata, address=client_address(request))
    except RateLimited as error:
        response = _registration_error("slow_down", error.message, 429)
        response["Retry-After"] = str(error.detail.get("retryAfter", 3600))
        return response
    except services.InvalidClientMetadata as error:
        code = (
            "invalid_redirect_uri" if error.field == "redirect_uri" else "invalid_client_metadata"
        )
        return _registration_error(code, error.message)
    return JsonResponse(
        {
            "client_id": application.client_id,
            "client_id_issued_at": int(application.created.timestamp()),
            "client_name": application.name,
            "redirect_uris": application.redirect_uris.split(),
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": "mcp",
        },
        status=201,
    )


@login_required
def my_connections(request: HttpRequest) -> HttpResponse:
    """The apps the signed-in person connected, each with Disconnect."""
    connections = selectors.connections_allowed_by(request.user)  # type: ignore[arg-type]
    agents = selectors.own_agents(request.user)  # type: ignore[arg-type]
    return render(
        request, "connect/connections.html", {"connections": connections, "agents": agents}
    )


def _own_agent_or_404(request: HttpRequest, agent_id: int) -> Agent:
    """An agent the signed-in person owns (admins: any); 404 for any other, as for none."""
    agent = selectors.agent_by_id(agent_id)
    owns = agent is not None and agent.owner_id == request.user.pk
    if agent is None or not (owns or can_manage_agents(request.user)):  # type: ignore[arg-type]
        raise Http404("There is no such agent of yours.")
    return agent


@login_required
@require_POST
def my_agent_rename(request: HttpRequest, agent_id: int) -> HttpResponse:
    agent = _own_agent_or_404(request, agent_id)
    try:
        agent_services.agent_update(
            actor=request.user,  # type: ignore[arg-type]
            agent=agent,
            name=request.POST.get("name", ""),
        )
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, "Renamed your agent.")
    return HttpResponseRedirect(reverse("oauth2_provider:connections"))


@login_required
@require_POST
def my_agent_revoke(request: HttpRequest, agent_id: int) -> HttpResponse:
    agent = _own_agent_or_404(request, agent_id)
    try:
        agent_services.agent_revoke(actor=request.user, agent=agent)  # type: ignore[arg-type]
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Revoked {agent.name}: its connections ended at once.")
    return HttpResponseRedirect(reverse("oauth2_provider:connections"))


@login_required
@require_POST
def disconnect(request: HttpRequest, connection_id: int) -> HttpResponse:
    connection = selectors.connection_by_id(connection_id)
    if connection is None:
        raise Http404("There is no such connection. It may have ended already.")
    try:
        services.connection_disconnect(actor=request.user, connection=connection)  # type: ignore[arg-type]
    except QuireError as error:
        raise PermissionDenied(error.message) from None
    messages.success(
        request,
        f"Disconnected {connection.application.name or 'the client'} from "
        f"{connection.agent.name}: its tokens no longer work.",
    )
    if request.POST.get("back") == "mine" or not can_manage_agents(request.user):  # type: ignore[arg-type]
        return HttpResponseRedirect(reverse("oauth2_provider:connections"))
    return redirect(reverse("agents:detail", args=[connection.agent_id]) + "#connections")
