"""People and groups for admins (the Django admin stays for operators), the invited person's
set-password screen, and the password reset by email (Django's own views, throttled like the
login). Each view parses, calls one service or selector, renders."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_POST

from core.errors import QuireError
from people import selectors, services
from people.forms import GroupForm, GroupsForm, InviteForm, MemberForm, PasswordResetByEmailForm
from wiki import login_throttle


def _admin(request: HttpRequest) -> Any:
    if not services.can_manage_people(request.user):
        raise PermissionDenied("Only an admin can manage people and groups.")
    return request.user


def _person(person_id: int) -> Any:
    person = selectors.person_by_id(person_id)
    if person is None:
        raise Http404("No such person.")
    return person


def _group(group_id: int) -> Any:
    group = selectors.group_by_id(group_id)
    if group is None:
        raise Http404("No such group.")
    return group


def _sso_groups() -> str:
    return str(settings.QUIRE_OIDC_GROUPS_CLAIM) if settings.OIDC_RP_CLIENT_ID else ""


@login_required
def people_list(request: HttpRequest) -> HttpResponse:
    _admin(request)
    query = str(request.GET.get("q", ""))[:100]
    form = InviteForm()
    return render(
        request,
        "people/list.html",
        {"people": selectors.people_list(query=query), "query": query, "form": form},
    )


@login_required
@require_POST
def person_invite(request: HttpRequest) -> HttpResponse:
    actor = _admin(request)
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            person = services.person_invite(
                actor=actor,
                email=form.cleaned_data["email"],
                name=form.cleaned_data["name"],
                groups=list(form.cleaned_data["groups"]),
            )
        except QuireError as error:
            form.add_error("email", str(error))
        else:
            messages.success(request, f"Invited {person.email}: they have an email with a link.")
            return redirect("people:person", person.pk)
    people = selectors.people_list()
    return render(request, "people/list.html", {"people": people, "form": form}, status=400)


@login_required
def person_detail(request: HttpRequest, person_id: int) -> HttpResponse:
    actor = _admin(request)
    person = _person(person_id)
    form = GroupsForm(initial={"groups": list(person.groups.all())})
    if request.method == "POST":
        form = GroupsForm(request.POST)
        if form.is_valid():
            services.person_groups_set(
                actor=actor, person=person, groups=list(form.cleaned_data["groups"])
            )
            messages.success(request, f"Saved {person.username}'s groups.")
            return redirect("people:person", person.pk)
    return render(
        request,
        "people/detail.html",
        {
            "person": person,
            "form": form,
            "ways": selectors.ways_in(person),
            "sso_groups": _sso_groups(),
            "is_self": person.pk == actor.pk,
        },
    )


@login_required
@require_POST
def person_deactivate(request: HttpRequest, person_id: int) -> HttpResponse:
    actor = _admin(request)
    person = _person(person_id)
    try:
        ended = services.person_deactivate(actor=actor, person=person)
    except QuireError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            f"Deactivated {person.username}: ended {ended['sessions']} session(s), "
            f"{ended['apiKeys']} API key(s) and every OAuth connection they allowed.",
        )
    return redirect("people:person", person.pk)


@login_required
@require_POST
def person_reactivate(request: HttpRequest, person_id: int) -> HttpResponse:
    actor = _admin(request)
    person = _person(person_id)
    services.person_reactivate(actor=actor, person=person)
    messages.success(request, f"Reactivated {person.username}.")
    return redirect("people:person", person.pk)


@login_required
def groups_list(request: HttpRequest) -> HttpResponse:
    actor = _admin(request)
    form = GroupForm()
    if request.method == "POST":
        form = GroupForm(request.POST)
        if form.is_valid():
            try:
                group = services.group_create(actor=actor, name=form.cleaned_data["name"])
            except QuireError as error:
                form.add_error("name", str(error))
            else:
                messages.success(request, f"Created the group {group.name}.")
                return redirect("people:group", group.pk)
    return render(
        request,
        "people/groups.html",
        {"groups": selectors.groups_list(), "form": form, "sso_groups": _sso_groups()},
    )


@login_required
def group_detail(request: HttpRequest, group_id: int) -> HttpResponse:
    actor = _admin(request)
    group = _group(group_id)
    form = MemberForm()
    form.fields["person"].queryset = selectors.not_members(group)  # type: ignore[attr-defined]
    if request.method == "POST":
        form = MemberForm(request.POST)
        if form.is_valid():
            person = form.cleaned_data["person"]
            services.group_member_add(actor=actor, group=group, person=person)
            messages.success(request, f"Added {person.username} to {group.name}.")
            return redirect("people:group", group.pk)
    return render(
        request,
        "people/group.html",
        {
            "group": group,
            "members": selectors.group_members(group),
            "grants": selectors.group_grants(group),
            "steps": selectors.group_steps(group),
            "form": form,
            "sso_groups": _sso_groups(),
            "webhook": selectors.group_webhook_url(group),
        },
    )


@login_required
@require_POST
def group_webhook(request: HttpRequest, group_id: int) -> HttpResponse:
    """Set or clear where the group's review requests are posted (a chat's webhook)."""
    actor = _admin(request)
    group = _group(group_id)
    try:
        hook = services.group_webhook_set(
            actor=actor, group=group, url=str(request.POST.get("url", ""))
        )
    except QuireError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request,
            f"{group.name}'s review requests go to the webhook."
            if hook
            else f"{group.name} has no webhook now.",
        )
    return redirect("people:group", group.pk)


@login_required
@require_POST
def group_member_remove(request: HttpRequest, group_id: int, person_id: int) -> HttpResponse:
    actor = _admin(request)
    group, person = _group(group_id), _person(person_id)
    services.group_member_remove(actor=actor, group=group, person=person)
    messages.success(request, f"Removed {person.username} from {group.name}.")
    return redirect("people:group", group.pk)


class SetPasswordView(auth_views.PasswordResetConfirmView):
    """The link in the invitation: the invited person chooses their password."""

    template_name = "people/set_password.html"
    success_url = reverse_lazy("login")
    post_reset_login = False

    def form_valid(self, form: Any) -> HttpResponse:
        messages.success(self.request, "Your password is set: log in with it.")
        return super().form_valid(form)


class PasswordResetView(auth_views.PasswordResetView):
    """ "Forgot your password?": an emailed link to choose a new one. Every request counts
    against the login throttle's limits (per address, per email address, per both), under
    keys of its own; over them the request is refused with 429 and no email goes out."""

    template_name = "people/password_reset.html"
    form_class = PasswordResetByEmailForm
    email_template_name = "email/password_reset.txt"
    subject_template_name = "email/password_reset_subject.txt"
    success_url = reverse_lazy("people:password_reset_sent")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.QUIRE_LOCAL_PASSWORDS:
            raise Http404("Quire has no passwords here: sign in through the provider.")
        return super().dispatch(request, *args, **kwargs)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        email = str(request.POST.get("email", ""))
        attempt = login_throttle.LoginAttempt.from_request(request, email, purpose="reset")
        if login_throttle.is_locked_out(attempt):
            context = self.get_context_data(form=self.form_class(request.POST))
            context["lockout"] = login_throttle.reset_lockout_message()
            return self.render_to_response(context, status=429)
        if email:
            login_throttle.record_failure(attempt)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        self.extra_email_context = {"base_url": settings.QUIRE_BASE_URL}
        return super().form_valid(form)


class PasswordResetSentView(auth_views.PasswordResetDoneView):
    template_name = "people/password_reset_sent.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["timeout_hours"] = settings.PASSWORD_RESET_TIMEOUT // 3600
        return context


class PasswordResetConfirmView(SetPasswordView):
    """The emailed link: the same screen as an invitation's, worded for a reset."""

    extra_context = {"reset": True}

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.QUIRE_LOCAL_PASSWORDS:
            raise Http404("Quire has no passwords here: sign in through the provider.")
        return super().dispatch(request, *args, **kwargs)
