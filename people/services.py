"""Every change to people and groups: invite, sign in through the provider, deactivate, end a
person's access, and group membership. Atomic, with an explicit actor and an audit row."""

from __future__ import annotations

import logging
import re
from importlib import import_module
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from connect import services as connect_services
from core.actors import SystemActor
from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidArgument
from people import mail
from people.models import SignInSession, SsoIdentity
from people.sealed import seal, unseal
from reviews import webhook_address, webhooks
from reviews.models import ApiToken, GroupWebhook

logger = logging.getLogger(__name__)

GROUP_NAME_MAX = 150
_USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")


class SignInRefused(Exception):
    """The provider signed the person in, but Quire will not: said on the login page."""


def can_manage_people(actor: Any) -> bool:
    if isinstance(actor, SystemActor):
        return True
    if actor is None or not actor.is_authenticated or not actor.is_active:
        return False
    return bool(actor.is_superuser) or bool(actor.has_perm("auth.change_user"))


def _check_admin(actor: Any) -> None:
    if not can_manage_people(actor):
        raise Forbidden("only an admin can manage people and groups.")


# --- sessions ---------------------------------------------------------------------------


def session_record(*, user: User, session_key: str) -> None:
    """A person signed in: remember the session so that ending their access can end it."""
    SignInSession.objects.get_or_create(session_key=session_key, defaults={"user": user})


def _sessions_end(user: User) -> int:
    store = import_module(settings.SESSION_ENGINE).SessionStore
    keys = list(SignInSession.objects.filter(user=user).values_list("session_key", flat=True))
    for key in keys:
        # Through the session store, so a cached session (cached_db) goes as well.
        store(session_key=key).delete()
    SignInSession.objects.filter(user=user).delete()
    return len(keys)


# --- ending a person's access -------------------------------------------------------------


def _access_end(*, person: User, actor: Any, reason: str) -> dict[str, int]:
    sessions = _sessions_end(person)
    api_keys, _ = ApiToken.objects.filter(user=person).delete()
    connect_services.connections_end_for_person(person=person, reason=reason)
    ended = {"sessions": sessions, "apiKeys": api_keys}
    audit_record(
        action="person.access_end",
        actor=actor,
        data={"person": person.get_username(), "reason": reason, **ended},
    )
    return ended


@transaction.atomic
def person_access_end(*, person: User, actor: Any, reason: str) -> dict[str, int]:
    """End every way `person` is in: browser sessions, REST API keys, and the OAuth
    connections they allowed. Their account stays; the next sign-in decides again."""
    return _access_end(person=person, actor=actor, reason=reason)


@transaction.atomic
def person_deactivate(*, actor: Any, person: User) -> dict[str, int]:
    _check_admin(actor)
    if getattr(actor, "pk", None) == person.pk:
        raise Conflict("you cannot deactivate yourself: ask another admin.")
    person = User.objects.select_for_update().get(pk=person.pk)
    if person.is_active:
        person.is_active = False
        person.save(update_fields=["is_active"])
    audit_record(action="person.deactivate", actor=actor, data={"person": person.username})
    return _access_end(person=person, actor=actor, reason="account deactivated")


@transaction.atomic
def person_reactivate(*, actor: Any, person: User) -> None:
    _check_admin(actor)
    User.objects.filter(pk=person.pk).update(is_active=True)
    person.is_active = True
    audit_record(action="person.reactivate", actor=actor, data={"person": person.username})


# --- invitations --------------------------------------------------------------------------


def _free_username(wanted: str) -> str:
    base = _USERNAME_UNSAFE.sub("", wanted)[:140] or "person"
    name, n = base, 1
    while User.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}{n}"
    return name


def _clean_email(email: str) -> str:
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidArgument(f"{email!r} is not an email address.", field="email") from None
    return email


@transaction.atomic
def person_invite(
    *, actor: Any, email: str, name: str = "", groups: list[Group] | tuple[Group, ...] = ()
) -> User:
    """A new person who sets their own password from the emailed link (or, with local
    passwords off, signs in through the provider), already in `groups`."""
    _check_admin(actor)
    email = _clean_email(email)
    if User.objects.filter(email__iexact=email).exists():
        raise Conflict(f"{email} is already a person here: find them in the list.")
    first, _, last = name.strip().partition(" ")
    person = User(
        username=_free_username(email.split("@")[0]),
        email=email,
        first_name=first[:150],
        last_name=last[:150],
    )
    # Nobody can sign in with a password until the invited person sets one.
    person.set_unusable_password()
    person.save()
    person.groups.set(groups)
    audit_record(
        action="person.invite",
        actor=actor,
        data={"person": person.username, "email": email, "groups": [g.name for g in groups]},
    )
    transaction.on_commit(lambda: mail.send_invitation.delay(person.pk))
    return person


# --- groups -------------------------------------------------------------------------------


@transaction.atomic
def group_create(*, actor: Any, name: str) -> Group:
    _check_admin(actor)
    name = name.strip()
    if not 1 <= len(name) <= GROUP_NAME_MAX:
        raise InvalidArgument(f"a group's name has 1 to {GROUP_NAME_MAX} characters.", field="name")
    try:
        with transaction.atomic():
            group = Group.objects.create(name=name)
    except IntegrityError:
        raise Conflict(f"there is already a group named {name!r}.") from None
    audit_record(action="group.create", actor=actor, data={"group": name})
    return group


@transaction.atomic
def group_member_add(*, actor: Any, group: Group, person: User) -> None:
    _check_admin(actor)
    group.user_set.add(person)
    audit_record(
        action="group.member_add",
        actor=actor,
        data={"group": group.name, "person": person.username},
    )


@transaction.atomic
def group_member_remove(*, actor: Any, group: Group, person: User) -> None:
    _check_admin(actor)
    group.user_set.remove(person)
    audit_record(
        action="group.member_remove",
        actor=actor,
        data={"group": group.name, "person": person.username},
    )


def _groups_set(person: User, groups: list[Group], *, actor: Any, action: str) -> None:
    """`person` is in exactly `groups`; the audit row, only when that changed, names what did."""
    before = set(person.groups.values_list("name", flat=True))
    person.groups.set(groups)
    after = {group.name for group in groups}
    if before != after:
        audit_record(
            action=action,
            actor=actor,
            data={
                "person": person.username,
                "added": sorted(after - before),
                "removed": sorted(before - after),
            },
        )


WEBHOOK_URL_MAX = 500


@transaction.atomic
def group_webhook_set(*, actor: Any, group: Group, url: str) -> GroupWebhook | None:
    """Where the group's review requests are posted (reviews.webhooks); an empty URL takes
    the webhook off."""
    _check_admin(actor)
    url = url.strip()
    if not url:
        webhooks.drop_posts(group.pk)
        deleted, _ = GroupWebhook.objects.filter(group=group).delete()
        if deleted:
            audit_record(action="group.webhook_remove", actor=actor, data={"group": group.name})
        return None
    try:
        URLValidator(schemes=["https", "http"])(url)
    except ValidationError:
        raise InvalidArgument(
            "Give the chat's webhook address, starting with https:// (a Slack or Teams "
            "incoming webhook, for example).",
            field="url",
        ) from None
    if len(url) > WEBHOOK_URL_MAX:
        raise InvalidArgument(
            f"a webhook address can be at most {WEBHOOK_URL_MAX} characters.", field="url"
        )
    refused = webhook_address.refusal(url)
    if refused is not None:
        raise InvalidArgument(f"{refused}; nothing was changed.", field="url")
    hook, _ = GroupWebhook.objects.update_or_create(group=group, defaults={"url": url})
    # The address is a secret of the chat's (it lets anyone post there): not in the audit.
    audit_record(action="group.webhook_set", actor=actor, data={"group": group.name})
    return hook


# --- single sign-on -----------------------------------------------------------------------


def _group_names_from(claims: dict[str, Any]) -> set[str] | None:
    """The Quire groups that the provider's claim puts the person in, or None when Quire
    manages groups itself (QUIRE_OIDC_GROUPS_CLAIM empty)."""
    claim = settings.QUIRE_OIDC_GROUPS_CLAIM
    if not claim:
        return None
    raw = claims.get(claim) or []
    if isinstance(raw, str):
        raw = [raw]
    renames = dict(item.split("=", 1) for item in settings.QUIRE_OIDC_GROUP_MAP if "=" in item)
    # Keycloak sends full paths ("/Legal") unless told otherwise.
    names = {str(value).strip().lstrip("/") for value in raw if isinstance(value, str)}
    return {renames.get(name, name).strip() for name in names}


def _sync_groups(person: User, claims: dict[str, Any], *, actor: Any) -> None:
    wanted = _group_names_from(claims)
    if wanted is None:
        return
    # Groups Quire does not have are ignored: an admin creates the ones that matter.
    groups = list(Group.objects.filter(name__in=wanted))
    _groups_set(person, groups, actor=actor, action="person.groups_from_provider")


def _person_for_claims(issuer: str, subject: str, claims: dict[str, Any]) -> User | None:
    identity = (
        SsoIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    )
    if identity is not None:
        return identity.user
    email = str(claims.get("email") or "")
    if not email or claims.get("email_verified") is False:
        # Linking by an address the provider has not checked would let anyone claim anyone.
        return None
    matches = list(User.objects.filter(email__iexact=email, sso_identity__isnull=True)[:2])
    if len(matches) > 1:
        raise SignInRefused(
            f"Two people in Quire have the address {email}: ask an admin to merge them."
        )
    return matches[0] if matches else None


@transaction.atomic
def sso_sign_in(*, issuer: str, claims: dict[str, Any], refresh_token: str) -> User:
    """The provider vouched for `claims`: the person they describe, found or created."""
    subject = str(claims.get("sub") or "")
    email = str(claims.get("email") or "")
    if not subject or not email:
        raise SignInRefused("The identity provider sent no subject or email address.")
    actor = SystemActor("single sign-on")
    person = _person_for_claims(issuer, subject, claims)
    if person is None:
        wanted = str(claims.get("preferred_username") or email.split("@")[0])
        person = User(
            username=_free_username(wanted),
            email=email,
            first_name=str(claims.get("given_name") or "")[:150],
            last_name=str(claims.get("family_name") or "")[:150],
        )
        person.set_unusable_password()
        person.save()
        audit_record(
            action="person.create",
            actor=actor,
            data={"person": person.username, "email": email, "issuer": issuer},
        )
    if not person.is_active:
        raise SignInRefused("Your account in Quire is deactivated: ask an admin.")
    if person.email != email:
        person.email = email
        person.save(update_fields=["email"])
    _sync_groups(person, claims, actor=actor)
    SsoIdentity.objects.update_or_create(
        user=person,
        defaults={
            "issuer": issuer,
            "subject": subject,
            "refresh_token": seal(refresh_token),
            "signed_in_at": timezone.now(),
            "checked_at": timezone.now(),
            "refused_at": None,
        },
    )
    audit_record(action="person.sso_sign_in", actor=person, data={"issuer": issuer})
    return person


def sso_recheck(identity: SsoIdentity) -> str:
    """Ask the provider, with the person's refresh token, whether they may still sign in.

    Returns "ok", "refused" (their access is ended), "skipped" (no token) or "error" (the
    provider could not be asked; nothing changes, the next round asks again).
    """
    token = unseal(identity.refresh_token)
    if not token or not settings.OIDC_OP_TOKEN_ENDPOINT:
        return "skipped"
    try:
        response = requests.post(
            settings.OIDC_OP_TOKEN_ENDPOINT,
            data={"grant_type": "refresh_token", "refresh_token": token},
            # HTTP Basic: the client authentication every provider must accept (RFC 6749 2.3.1).
            auth=(settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET),
            timeout=settings.OIDC_TIMEOUT,
        )
    except requests.RequestException as exc:
        logger.warning("could not ask the identity provider about %s: %s", identity.user_id, exc)
        return "error"
    body: dict[str, Any] = {}
    try:
        body = response.json()
    except ValueError:
        pass
    if response.status_code == 400 and body.get("error") in (
        "invalid_grant",
        "unauthorized_client",
    ):
        with transaction.atomic():
            SsoIdentity.objects.filter(pk=identity.pk).update(
                refresh_token="", refused_at=timezone.now(), checked_at=timezone.now()
            )
            _access_end(
                person=identity.user,
                actor=SystemActor("identity provider"),
                reason="the identity provider refused the sign-in",
            )
        return "refused"
    if response.status_code != 200:
        logger.warning(
            "the identity provider answered %s for %s", response.status_code, identity.user_id
        )
        return "error"
    claims = _userinfo(str(body.get("access_token") or ""))
    with transaction.atomic():
        SsoIdentity.objects.filter(pk=identity.pk).update(
            # Providers that rotate refresh tokens send a new one; others keep the old.
            refresh_token=seal(str(body.get("refresh_token") or token)),
            checked_at=timezone.now(),
        )
        # Only a claim the answer carries: providers that put groups in the ID token alone
        # would otherwise take everyone out of every group at each check.
        if (
            claims is not None
            and claims.get("sub") == identity.subject
            and settings.QUIRE_OIDC_GROUPS_CLAIM in claims
        ):
            _sync_groups(identity.user, claims, actor=SystemActor("identity provider"))
    return "ok"


def _userinfo(access_token: str) -> dict[str, Any] | None:
    if not access_token:
        return None
    try:
        response = requests.get(
            settings.OIDC_OP_USER_ENDPOINT,
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=settings.OIDC_TIMEOUT,
        )
        if response.status_code != 200:
            return None
        claims: dict[str, Any] = response.json()
        return claims
    except (requests.RequestException, ValueError):
        return None


def sso_recheck_all() -> dict[str, int]:
    """Every person who signed in through the provider and still holds a refresh token."""
    counts: dict[str, int] = {}
    identities = SsoIdentity.objects.select_related("user").exclude(refresh_token="")
    for identity in identities.filter(user__is_active=True).iterator():
        outcome = sso_recheck(identity)
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


@transaction.atomic
def person_groups_set(*, actor: Any, person: User, groups: list[Group]) -> None:
    """`person` is in exactly `groups` now (the person's screen, all at once)."""
    _check_admin(actor)
    _groups_set(person, groups, actor=actor, action="person.groups_set")
