"""`manage.py load_demo`: the demo handbook, an admin login and a demo agent, for `make run`.

Idempotent: a second run changes nothing but the demo agent's token, which is rotated on
every run because only its hash is stored and the banner must print one that works. It never
overwrites what people did since: a demo page whose live version load_demo did not make is
left as it is, and an existing admin's password is never reset.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from agents import services as agent_services
from agents.models import Agent
from agents.selectors import agent_by_name, curated_entries, own_newest_version
from content.importer import split_frontmatter
from core.errors import NotFound
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from wiki.models import Page, Version, VersionKind
from wiki.selectors import newest_version, pages_from_source, person_by_username

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo" / "quire-handbook"
# Namespaced so that a user's own import of a folder with the same file names never
# touches the demo pages (import_markdown's keys are a folder name, a slash and a path).
SOURCE_PREFIX = "quire-demo:"
# The change summaries of the versions load_demo publishes: a live version with another one
# was written or approved by someone since, and is theirs to keep.
LOADED_SUMMARY = "Loaded the demo handbook."
UPDATED_SUMMARY = "Updated the demo handbook."
ADMIN_USERNAME = "admin"
AGENT_NAME = "demo-agent"
AGENT_DESCRIPTION = "The demo agent that `make run` creates: it reads the Quire handbook."

ROOT_USE_WHEN = [
    "Use whenever someone asks how Quire works: reviewing, agents, tokens, page sets or "
    "writing pages.",
    "Use before proposing a change, to check how reviews and proposals work.",
]
STYLE_USE_WHEN = ["Read before you create or update any page: it is the house style."]

# Proposals from the demo agent, so the review queue has something to show.
FAQ_APPEND = """**Can an agent see who reviewed its proposal?**
Yes. `get_page_source` returns the last decision on the agent's proposal, with the
reviewer's comment, so the agent can learn why a change was rejected and try again.
"""


@dataclass
class LoadReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0
    pages: dict[str, Page] = field(default_factory=dict)


class Command(BaseCommand):
    help = (
        "Load the demo handbook (published by the user 'admin'), make sure 'admin' can log "
        "in, and (re)issue the demo agent's token. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--login-file",
            type=Path,
            default=Path(settings.BASE_DIR) / "var" / "demo-login.txt",
            help="where the admin password is kept between runs (default: var/demo-login.txt)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            admin, password = ensure_admin(options["login_file"])
            report = load_pages(admin)
            agent, token = ensure_agent(admin, report.pages)
            proposed = ensure_proposals(agent, report.pages)
        base = settings.QUIRE_BASE_URL
        self.stdout.write(
            f"Demo handbook: {report.created} created, {report.updated} updated, "
            f"{report.unchanged} unchanged, {report.kept} kept as edited; "
            f"{proposed} new proposal(s) waiting in review.\n"
        )
        login = (
            f"{ADMIN_USERNAME} / {password}   (kept in {options['login_file']})"
            if password is not None
            else f"{ADMIN_USERNAME} / the password you set   (load_demo never resets it)"
        )
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "Quire is ready.",
                    f"  Open:      {base}/",
                    f"  Log in:    {login}",
                    f"  MCP URL:   {base}/mcp",
                    f"  Agent:     {agent.name}, token {token}",
                    "             (a new token on every run; the previous one stops working)",
                    "",
                ]
            )
        )


def ensure_admin(login_file: Path) -> tuple[User, str | None]:
    """The superuser 'admin' and the demo password, or None when it no longer logs in.

    The admin is created once, with a password kept in `login_file`; after that its account
    is the operator's: a password they changed is never reset, and the file is removed.
    """
    password = _read_password(login_file)
    admin = person_by_username(ADMIN_USERNAME)
    if admin is not None:
        if password and admin.check_password(password):
            return admin, password
        # The operator changed the password: a file still holding the old one would mislead.
        login_file.unlink(missing_ok=True)
        return admin, None
    if password is None:
        password = secrets.token_urlsafe(12)
        login_file.parent.mkdir(parents=True, exist_ok=True)
        login_file.write_text(f"username: {ADMIN_USERNAME}\npassword: {password}\n")
        login_file.chmod(0o600)
    admin = User.objects.create_superuser(
        username=ADMIN_USERNAME, email=f"{ADMIN_USERNAME}@example.com", password=password
    )
    return admin, password


def _read_password(login_file: Path) -> str | None:
    if not login_file.exists():
        return None
    for line in login_file.read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "password" and value.strip():
            return value.strip()
    return None


def _parent_source(relative: str) -> str | None:
    """index.md is the root; a folder's index.md hangs under the folder above it."""
    parts = relative.split("/")
    if relative == "index.md":
        return None
    folder = parts[:-2] if parts[-1] == "index.md" else parts[:-1]
    return "/".join([*folder, "index.md"])


def _demo_files() -> list[str]:
    files = [path.relative_to(DEMO_DIR).as_posix() for path in DEMO_DIR.rglob("*.md")]
    # Parents before children: by depth in the page tree, where a folder's index.md is the
    # folder's page and the root index.md is the top of the tree.
    return sorted(files, key=lambda rel: (rel.count("/") + (not rel.endswith("index.md")), rel))


def load_pages(admin: User) -> LoadReport:
    report = LoadReport()
    existing = pages_from_source(SOURCE_PREFIX)
    for relative in _demo_files():
        # The importer's own frontmatter reader: one parser for both ways in.
        meta, content = split_frontmatter((DEMO_DIR / relative).read_text(encoding="utf-8"))
        title = str(meta.get("title") or relative)
        raw_tags = meta.get("tags") or []
        tags = [str(tag) for tag in raw_tags] if isinstance(raw_tags, list) else []
        body = content.strip("\n") + "\n"
        parent_source = _parent_source(relative)
        parent = report.pages[parent_source] if parent_source else None
        page = existing.get(SOURCE_PREFIX + relative)
        if page is None:
            version = page_create(
                actor=admin,
                title=title,
                body=body,
                parent=parent,
                tags=tags,
                change_summary=LOADED_SUMMARY,
                publish=True,
                source_path=SOURCE_PREFIX + relative,
            )
            page = version.page
            report.created += 1
        elif page.archived or _same(page.live_version, title=title, body=body, tags=tags):
            report.unchanged += 1  # an archived demo page stays archived: someone chose that
        elif not _loaded_by_demo(page.live_version, admin):
            report.kept += 1
        else:
            version_propose(
                actor=admin,
                page=page,
                title=title,
                body=body,
                tags=tags,
                change_summary=UPDATED_SUMMARY,
                publish=True,
            )
            report.updated += 1
        report.pages[relative] = page
    return report


def _loaded_by_demo(live: Version | None, admin: User) -> bool:
    """Whether the live version is one load_demo published, not someone's edit since."""
    return (
        live is not None
        and live.author_user_id == admin.pk
        and live.decided_by_id == admin.pk
        and live.change_summary in (LOADED_SUMMARY, UPDATED_SUMMARY)
        and not live.edited_by_reviewer
    )


def _same(live: Version | None, *, title: str, body: str, tags: list[str]) -> bool:
    return live is not None and (live.title, live.body, live.tags) == (title, body, tags)


def ensure_agent(admin: User, pages: dict[str, Page]) -> tuple[Agent, str]:
    """The demo agent, with a fresh token and the handbook as its page set."""
    try:
        agent: Agent | None = agent_by_name(AGENT_NAME)
    except NotFound:
        agent = None
    # No owner: nobody may decide their own agent's proposals, and the admin who logs in is
    # the demo's only reviewer, so an agent of theirs would propose what no one can approve.
    if agent is None:
        agent, token = agent_services.agent_create(
            actor=admin,
            name=AGENT_NAME,
            description=AGENT_DESCRIPTION,
            owner=None,
            can_edit_pages=True,
        )
    else:
        if agent.owner_id == admin.pk:  # made by an earlier Quire's demo
            agent = agent_services.agent_update(actor=admin, agent=agent, owner=None)
        token = agent_services.agent_token_rotate(actor=admin, agent=agent)
    in_set = {entry.page_id for entry in curated_entries(agent)}
    for relative, use_when, always in (
        ("index.md", ROOT_USE_WHEN, False),
        ("writing-good-pages.md", STYLE_USE_WHEN, True),
    ):
        page = pages.get(relative)
        if page is not None and page.pk not in in_set and not page.archived:
            agent_services.page_set_add(
                actor=admin, agent=agent, page=page, use_when=use_when, always_include=always
            )
    return agent, token


def ensure_proposals(agent: Agent, pages: dict[str, Page]) -> int:
    """Proposals from the demo agent, made once: a decided one is not proposed again."""
    made = 0
    faq = pages.get("faq.md")
    if faq is not None and not faq.archived and not _has_proposed(agent, faq):
        version_propose(
            actor=agent,
            page=faq,
            kind=VersionKind.APPEND,
            body=FAQ_APPEND,
            change_summary="Answer whether an agent can see the reviewer's comment.",
        )
        made += 1
    style = pages.get("writing-good-pages.md")
    if style is not None and not style.archived and not _has_proposed(agent, style):
        live = style.live_version or newest_version(style)
        body = live.body.replace(
            "4. **Tag sparingly.** A few tags that people actually search for beat twenty.",
            "4. **Tag sparingly.** Three to five tags that people actually search for beat "
            "twenty;\n   reuse existing tags before inventing new ones.",
        )
        version_propose(
            actor=agent,
            page=style,
            body=body,
            change_summary="Suggest how many tags to use and to reuse existing ones.",
        )
        made += 1
    return made


def _has_proposed(agent: Agent, page: Page) -> bool:
    return own_newest_version(agent, page) is not None
