"""State changes of pages, the tree and attachments: one transactional function each.

The life of a version (propose, approve, reject, withdraw, revert) is in reviews/actions/;
it builds on the primitives here (`lock_page`, `page_rows_create`, `page_make_live`), which
keep a page's tree position, path and search index right. Every function here that changes
something on its own validates first, locks the page row, writes its audit event in the same
transaction and queues side effects with `transaction.on_commit`.
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from core.transactions import atomic_retried
from wiki import permissions, search
from wiki.credentials import refuse_credentials
from wiki.extract import extract_text
from wiki.models import (
    CHANGE_SUMMARY_MAX,
    SIBLING_ORDER,
    Attachment,
    FormSubmission,
    Page,
    Version,
    VersionStatus,
    new_page_id,
)
from wiki.permissions import PUBLISH, move_refusal
from wiki.scope import Root, Scope
from wiki.validators import check_one_line

# --- tree helpers -------------------------------------------------------------------------


_MARKS = {"Mn", "Mc", "Me"}


def slugify(title: str) -> str:
    """Django's `slugify(allow_unicode=True)`, but keeping the combining marks (vowel signs,
    viramas) that Indic and other scripts write words with, which `\\w` leaves out: "हिन्दी
    भाषा" gives "हिन्दी-भाषा", not "हनद-भष". Latin titles give the slugs they always did."""
    value = unicodedata.normalize("NFKC", title).lower()
    kept = "".join(
        char
        for char in value
        if char.isspace()
        or char == "-"
        or re.match(r"\w", char)
        or unicodedata.category(char) in _MARKS
    )
    return re.sub(r"[-\s]+", "-", kept).strip("-_")


def _slug_for(title: str, public_id: str | None = None) -> str:
    """The slug a title gives; with `public_id`, followed by the id's own characters."""
    base = (slugify(title) or "page")[:200]
    return f"{base}-{public_id.removeprefix('pg_')}" if public_id else base


def _free_slug(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`... whichever is first not in `taken`."""
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    return slug


def _unique_slug(
    *, parent: Page | None, title: str, exclude_pk: int | None = None, public_id: str | None = None
) -> str:
    base = _slug_for(title, public_id)
    siblings = Page.objects.filter(parent=parent, slug__startswith=base)
    if exclude_pk is not None:
        siblings = siblings.exclude(pk=exclude_pk)
    return _free_slug(base, set(siblings.values_list("slug", flat=True)))


def _taken_slugs(bases: dict[int | None, set[str]]) -> dict[int | None, set[str]]:
    """The slugs that new children of each parent (pk, None for the root) could collide with:
    those starting with one of its `bases`. One query for them all."""
    taken: dict[int | None, set[str]] = {parent_pk: set() for parent_pk in bases}
    condition = Q()
    for parent_pk, names in bases.items():
        starts = Q()
        for base in names:
            starts |= Q(slug__startswith=base)
        where = Q(parent__isnull=True) if parent_pk is None else Q(parent_id=parent_pk)
        condition |= where & starts
    for parent_pk, slug in Page.objects.filter(condition).values_list("parent_id", "slug"):
        taken[parent_pk].add(slug)
    return taken


def _siblings_of(parent_id: int | None) -> QuerySet[Page]:
    return Page.objects.filter(
        Q(parent__isnull=True) if parent_id is None else Q(parent_id=parent_id)
    )


def _last_positions(parent_ids: Iterable[int | None]) -> dict[int | None, int]:
    """Per parent (None: the top level), the place after its last child: one query."""
    wanted = set(parent_ids)
    condition = Q(parent_id__in=[pk for pk in wanted if pk is not None])
    if None in wanted:
        condition |= Q(parent__isnull=True)
    found = (
        Page.objects.filter(condition)
        .order_by()
        .values("parent_id")
        .annotate(last=Max("position"))
        .values_list("parent_id", "last")
    )
    after = dict.fromkeys(wanted, 0)
    after.update((parent_id, last + 1) for parent_id, last in found)
    return after


def _path_for(parent: Page | None, slug: str) -> str:
    return f"{parent.path}/{slug}" if parent is not None else slug


def check_parent(page: Page | None, parent: Page | None) -> None:
    """`parent` may hold `page`: it is not archived, and it is neither `page` nor under it.

    Both must be as the database has them now, under the locks of `lock_page_under(page,
    parent)` (or `lock_pages`), which keep them so until the caller commits: the path
    says where a page is, so it says whether `parent` is under `page`.
    """
    if parent is None:
        return
    if parent.archived:
        raise InvalidArgument(
            f"the parent page {parent.public_id} is archived; choose another parent.",
            field="parent",
        )
    if page is None:
        return
    if parent.pk == page.pk or parent.path.startswith(page.path + "/"):
        raise InvalidArgument(
            "a page cannot be moved under itself or one of its descendants.", field="parent"
        )


def _refresh_descendant_paths(page: Page) -> None:
    frontier = [page]
    while frontier:
        children = list(Page.objects.filter(parent__in=frontier).select_related("parent"))
        by_pk = {p.pk: p for p in frontier}
        for child in children:
            child.path = _path_for(by_pk[child.parent_id], child.slug)  # type: ignore[index]
        Page.objects.bulk_update(children, ["path"])
        frontier = children


# Tries at locking a branch whose pages moved while it was being locked.
TREE_LOCK_TRIES = 3
_LOCK_SHARED_SQL = (
    'SELECT * FROM wiki_page WHERE path = ANY(%s) ORDER BY path COLLATE "C" FOR SHARE'
)


def _ancestor_paths(path: str) -> list[str]:
    """The paths of the pages above the page at `path`, from the top down."""
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


def lock_pages(pages: Sequence[Page], *, under: Sequence[Page | None] = ()) -> dict[int, Page]:
    """`pages` locked for the rest of the transaction, their ancestors and the pages of
    `under` (new parents) with theirs held shared; every one of them as it is now, by pk
    (on SQLite, `pages` only).

    Every writer locks pages in one order, by path, so ancestors first: two writers in one
    branch queue on the first page they share instead of each holding what the other waits
    for. Shared, an ancestor cannot be renamed, moved or archived (each locks it alone)
    until the writer commits, which `check_parent` and the pages' paths rely on.
    """
    if connection.vendor != "postgresql":
        # No row locks: SQLite's writers take the whole database in turn (IMMEDIATE).
        return {page.pk: page for page in Page.objects.filter(pk__in=[p.pk for p in pages])}
    exclusive = {page.pk: page.path for page in pages}
    shared = {page.pk: page.path for page in under if page is not None}
    for _ in range(TREE_LOCK_TRIES):
        order: dict[str, bool] = {}
        for path in [*exclusive.values(), *shared.values()]:
            for above in _ancestor_paths(path):
                order.setdefault(above, False)
        order.update(dict.fromkeys(shared.values(), False))
        order.update(dict.fromkeys(exclusive.values(), True))
        locked: dict[int, Page] = {}
        for alone, group in groupby(sorted(order.items()), key=lambda item: item[1]):
            paths = [path for path, _ in group]
            rows: Iterable[Page]
            if alone:
                rows = Page.objects.select_for_update().filter(
                    pk__in=[pk for pk, path in exclusive.items() if path in paths]
                )
            else:
                rows = Page.objects.raw(_LOCK_SHARED_SQL, [paths])
            locked.update((page.pk, page) for page in rows)
        # A page moved before its lock was granted: lock its new branch too, and check again.
        moved = {pk: page.path for pk, page in locked.items() if pk in exclusive}
        moved = {pk: path for pk, path in moved.items() if path != exclusive[pk]}
        gone = [pk for pk in shared if pk not in locked or locked[pk].path != shared[pk]]
        if not moved and not gone:
            return locked
        exclusive.update(moved)
        shared.update(Page.objects.filter(pk__in=gone).values_list("pk", "path"))
    raise Conflict("pages around this one kept moving while it was changed; try again.")


def lock_page(page: Page) -> Page:
    """The page row, locked for the rest of the transaction: who decides on a page holds it.
    Its ancestors are held shared (see `lock_pages`)."""
    return lock_page_under(page, None)[0]


def lock_page_under(page: Page, parent: Page | None) -> tuple[Page, Page | None]:
    """`lock_page` for a change that puts the page under `parent`: that parent and its
    ancestors are held shared too. Both as they are now."""
    assert page.pk is not None
    locked = lock_pages([page], under=[parent])
    if page.pk not in locked:
        raise NotFound(f"page {page.public_id} does not exist.")
    if parent is None:
        return locked[page.pk], None
    fresh = locked.get(parent.pk) or Page.objects.filter(pk=parent.pk).first()
    if fresh is None:
        raise NotFound(f"page {parent.public_id} does not exist.")
    return locked[page.pk], fresh


def allocate_version_number(page: Page) -> int:
    """The next version number of a locked page: 1, 2, 3... without gaps."""
    page.last_version_number += 1
    Page.objects.filter(pk=page.pk).update(last_version_number=page.last_version_number)
    return page.last_version_number


@dataclass(frozen=True)
class PageRow:
    """A new page's row before its first version: see `page_rows_create`."""

    title: str
    parent: Page | None
    tags: list[str]
    instructions: str
    source_path: str | None = None
    extra_frontmatter: dict[str, Any] | None = None
    # Keeps a page's id across export and import, so `[[pg_...]]` links survive.
    public_id: str | None = None
    # The slug ends with the page's id: an agent's page, whose address must not depend on
    # siblings the agent may not see (a `-2` would say that one holds the name).
    slug_with_id: bool = False


def page_rows_create(rows: Sequence[PageRow]) -> list[Page]:
    """New page rows in the tree, for the caller's transaction; their first versions follow.

    Each page has version number 1 allocated for that first version. However many rows, it
    costs one query to lock the parents, one for the ids asked for, one for the siblings'
    slugs and one INSERT (a bulk import creates a folder's pages at once).
    """
    wanted = list({row.parent.pk: row.parent for row in rows if row.parent is not None}.values())
    parents = lock_pages(wanted)
    for row in rows:
        if row.parent is not None and row.parent.pk not in parents:
            raise NotFound(f"page {row.parent.public_id} does not exist.")
    for locked in parents.values():
        check_parent(None, locked)
    asked = [row.public_id for row in rows if row.public_id is not None]
    taken_id = (
        Page.objects.filter(public_id__in=asked).values_list("public_id", flat=True).first()
        if asked
        else None
    )
    if taken_id is not None:
        raise Conflict(f"the page id {taken_id} is taken; leave it out to get a new one.")
    bases: dict[int | None, set[str]] = {}
    for row in rows:
        bases.setdefault(row.parent.pk if row.parent else None, set()).add(_slug_for(row.title))
    taken = _taken_slugs(bases)
    # A new page goes last among its siblings.
    next_position = _last_positions(bases)
    pages = []
    for row in rows:
        parent = parents[row.parent.pk] if row.parent is not None else None
        siblings = taken[parent.pk if parent is not None else None]
        public_id = row.public_id or (new_page_id() if row.slug_with_id else None)
        slug = _free_slug(_slug_for(row.title, public_id if row.slug_with_id else None), siblings)
        siblings.add(slug)
        parent_key = parent.pk if parent is not None else None
        position = next_position[parent_key]
        next_position[parent_key] += 1
        pages.append(
            Page(
                title=row.title,
                slug=slug,
                path=_path_for(parent, slug),
                parent=parent,
                position=position,
                tags=row.tags,
                instructions=row.instructions,
                source_path=row.source_path,
                extra_frontmatter=row.extra_frontmatter or {},
                last_version_number=1,
                **({"public_id": public_id} if public_id is not None else {}),
            )
        )
    try:
        with transaction.atomic():
            return Page.objects.bulk_create(pages)
    except IntegrityError:
        raise Conflict(
            "another page with this title was created under the same parent at the same "
            "moment; try again."
        ) from None


def page_make_live(page: Page, version: Version) -> None:
    """Point the page at `version` and mirror its fields; the caller holds the page lock."""
    old_parent_id, old_title = page.parent_id, page.title
    parent = version.parent
    check_parent(page, parent)
    _mirror(page, version)
    if old_parent_id != page.parent_id or old_title != page.title or not page.slug:
        page.slug = _unique_slug(
            parent=parent,
            title=version.title,
            exclude_pk=page.pk,
            # An agent's title keeps the page's id in the slug, as its new page did.
            public_id=page.public_id if version.author_agent_id is not None else None,
        )
        page.path = _path_for(parent, page.slug)
        if old_parent_id != page.parent_id:
            # Under another parent it goes last.
            page.position = _last_positions([page.parent_id])[page.parent_id]
        try:
            with transaction.atomic():
                page.save()
        except IntegrityError:
            # A sibling took the same slug in a transaction that committed after ours read
            # the siblings: the whole decision is undone, and a second try picks a free slug.
            raise Conflict(
                f"another page under the same parent was given the title {version.title!r} "
                "at the same moment, so nothing was changed. Decide again: the page will get "
                "a distinct address."
            ) from None
        _refresh_descendant_paths(page)
    else:
        page.save()
    search.index_page(page)


def _mirror(page: Page, version: Version) -> None:
    """The page's fields that mirror its live version, set to `version`."""
    page.live_version = version
    page.title = version.title
    page.tags = version.tags
    page.instructions = version.instructions
    page.parent = version.parent


def new_pages_make_live(versions: Sequence[Version]) -> None:
    """Make the first versions of pages just made by `page_rows_create` live, in one UPDATE.

    Such a version is number 1 and has its page's title and parent, so the page keeps the
    address it was given and, having no attachments yet, is indexed from the version alone.
    """
    pages = []
    for version in versions:
        page = version.page
        assert (version.number, version.title, version.parent_id) == (1, page.title, page.parent_id)
        _mirror(page, version)
        pages.append(page)
    first_version = Version.objects.filter(page=OuterRef("pk"), number=1).values("pk")
    Page.objects.filter(pk__in=[page.pk for page in pages]).update(
        live_version=Subquery(first_version)
    )
    search.index_new_pages(pages)


# --- pages -------------------------------------------------------------------------------------


def _check_can_publish(actor: User, page: Page) -> None:
    # The section's publishers, a workflow aside: archiving and the order of pages have no
    # proposal to go through (wiki.permissions.holds).
    refusal = permissions.refusal(actor, PUBLISH, page, grants_only=True)
    if refusal is not None:
        raise Forbidden(refusal)


@atomic_retried
def page_archive(*, actor: User, page: Page) -> Page:
    """Archive `page` and, with it, every page under it (those not archived already): for
    readers and agents the subtree is gone; editors can still open it to restore it."""
    _check_can_publish(actor, page)
    page = lock_page(page)
    if page.archived:
        raise Conflict(f"page {page.public_id} is already archived.")
    page.archived = True
    page.save(update_fields=["archived", "updated_at"])
    taken = _subtree(page).filter(archived=False)
    along = list(taken.values_list("pk", flat=True))
    taken.update(archived=True, archived_with=page, updated_at=timezone.now())
    search.remove_pages([page.pk, *along])
    audit_record(action="page.archive", actor=actor, page=page, data={"pagesUnder": len(along)})
    return page


@atomic_retried
def page_restore(*, actor: User, page: Page) -> Page:
    """Restore `page` and the pages archived with it (not those archived on their own)."""
    _check_can_publish(actor, page)
    page = lock_page(page)
    if not page.archived:
        raise Conflict(f"page {page.public_id} is not archived.")
    if page.parent is not None and page.parent.archived:
        raise Conflict("restore its parent page first.")
    page.archived = False
    page.archived_with = None
    page.save(update_fields=["archived", "archived_with", "updated_at"])
    brought = list(Page.objects.filter(archived_with=page).select_related("live_version"))
    Page.objects.filter(pk__in=[p.pk for p in brought]).update(
        archived=False, archived_with=None, updated_at=timezone.now()
    )
    for restored in [page, *brought]:
        restored.archived = False
        search.index_page(restored)
    audit_record(action="page.restore", actor=actor, page=page, data={"pagesUnder": len(brought)})
    return page


def _subtree(page: Page) -> QuerySet[Page]:
    """The pages under `page` (not the page itself), by the Scope's coverage rule."""
    return Page.objects.filter(Scope.of([Root(page.pk, page.path)]).q(readable=False)).exclude(
        pk=page.pk
    )


@atomic_retried
def page_move(*, actor: User, page: Page, parent: Page | None) -> Version:
    """Move a live page, and everything under it, under `parent` (None: the top level).

    The move is a new approved version, identical to the live one but for its parent, so the
    history shows it and a proposal written before it is stale and merges onto the new place
    instead of moving the page back. Paths below follow; `[[pg_...]]` links and agents' page
    set entries name the page by id, so they follow it too.
    """
    _check_can_publish(actor, page)
    # The page, and its new parent's branch shared, in the tree's one lock order (two moves
    # never wait on each other in opposite orders).
    try:
        page, parent = lock_page_under(page, parent)
    except NotFound:
        raise NotFound(
            "the page or its new parent no longer exists; reload and try again."
        ) from None
    live = page.live_version
    if page.archived or live is None:
        raise Conflict(f"page {page.public_id} is not live; only a live page can be moved.")
    if parent is not None and parent.live_version_id is None:
        raise InvalidArgument(
            f"the page {parent.public_id} is not live yet; choose a live parent.", field="parent"
        )
    check_parent(page, parent)
    if page.parent_id == (parent.pk if parent is not None else None):
        where = f"under “{parent.title}”" if parent is not None else "at the top level"
        raise InvalidArgument(f"the page is already {where}.", field="parent")
    refusal = move_refusal(actor, page, parent)
    if refusal is not None:
        raise Forbidden(refusal[0].upper() + refusal[1:])
    old_path = page.path
    summary = f"Moved under “{parent.title}”." if parent is not None else "Moved to the top level."
    version = Version.objects.create(
        page=page,
        number=allocate_version_number(page),
        **live.content(parent=parent),
        change_summary=summary[:CHANGE_SUMMARY_MAX],
        base_version=live,
        author_user=actor,
    )
    version.move_to(VersionStatus.APPROVED, by=actor, comment=summary)
    version.save()
    page_make_live(page, version)
    audit_record(
        action="page.move",
        actor=actor,
        page=page,
        version_number=version.number,
        data={"from": old_path, "to": page.path},
    )
    return version


@atomic_retried
def page_reorder(*, actor: User, page: Page, after: Page | None) -> int:
    """Place `page` right after its sibling `after` (None: first among its siblings); returns
    its new place, counting from 0.

    The order is not content, so no version is made; the audit records the change. All the
    siblings are locked, in the tree's one lock order, before their places are renumbered:
    two reorders under one parent take turns and neither loses the other's change.
    """
    _check_can_publish(actor, page)
    parent_id = page.parent_id
    siblings = list(_siblings_of(parent_id).only("pk", "path"))
    # Their ancestors come too, held shared: only the siblings are looked at.
    held = lock_pages(siblings) if siblings else {}
    locked = {sibling.pk: held[sibling.pk] for sibling in siblings if sibling.pk in held}
    page = locked.get(page.pk) or page
    moved_meanwhile = page.pk not in locked or any(
        row.parent_id != parent_id for row in locked.values()
    )
    if moved_meanwhile:
        raise Conflict("pages here were moved while you reordered them; reload and try again.")
    if page.archived or page.live_version_id is None:
        raise Conflict(f"page {page.public_id} is not live; only a live page can be reordered.")
    if after is not None and (after.pk == page.pk or after.pk not in locked):
        raise InvalidArgument(
            f"the page {after.public_id} is not beside this one; choose one of its siblings "
            "or the first place.",
            field="after",
        )
    # Siblings created meanwhile (a create holds the parent only shared) keep their places.
    current = dict(
        _siblings_of(page.parent_id).order_by(*SIBLING_ORDER).values_list("pk", "position")
    )
    order = [pk for pk in current if pk != page.pk]
    place = 0 if after is None else order.index(after.pk) + 1
    order.insert(place, page.pk)
    changed = [Page(pk=pk, position=n) for n, pk in enumerate(order) if current[pk] != n]
    Page.objects.bulk_update(changed, ["position"])
    audit_record(
        action="page.reorder",
        actor=actor,
        page=page,
        data={"after": after.public_id if after is not None else None, "place": place},
    )
    return place


@transaction.atomic
def pages_place(*, actor: User, places: dict[int, int]) -> int:
    """Put imported pages at the places among their siblings that an export wrote down
    (`quire_position`), by page id; returns how many moved. The import decided who may
    write these pages; this only puts back their order."""
    current = dict(Page.objects.filter(pk__in=places).values_list("pk", "position"))
    changed = [Page(pk=pk, position=places[pk]) for pk, at in current.items() if at != places[pk]]
    Page.objects.bulk_update(changed, ["position"], batch_size=500)
    if changed:
        audit_record(action="page.import_order", actor=actor, data={"pages": len(changed)})
    return len(changed)


@atomic_retried
def page_set_import_metadata(
    *, actor: User, page: Page, source_path: str | None, extra_frontmatter: dict[str, Any]
) -> Page:
    """Record where an imported page comes from and the frontmatter Quire has no field for.

    Bookkeeping for import and export, not content: it is not versioned or reviewed.
    """
    if not actor.is_authenticated or not actor.is_active:
        raise Forbidden("only a person running an import can change import metadata.")
    page = lock_page(page)
    page.source_path = source_path
    page.extra_frontmatter = extra_frontmatter
    page.save(update_fields=["source_path", "extra_frontmatter", "updated_at"])
    audit_record(
        action="page.import_metadata",
        actor=actor,
        page=page,
        data={"source_path": source_path},
    )
    return page


# --- forms ------------------------------------------------------------------------------------

FORM_TOKEN_MAX = 64
# How long a claimed form token is kept: long enough for back-and-save-again, then deleted.
FORM_TOKEN_KEPT = timedelta(days=1)


class AlreadySubmitted(Conflict):
    """The form was saved before with this token; `url` is what that save made."""

    def __init__(self, url: str) -> None:
        super().__init__(
            "this form was already saved; nothing was saved a second time. Open what the first "
            "save made, or reload the form to start a new one.",
            detail={"url": url},
        )
        self.url = url


@contextmanager
def submit_once(*, actor: User, token: str) -> Iterator[FormSubmission | None]:
    """One transaction around a form's save that claims the form's one-time token first.

    Saving the same form again (back, then save) raises AlreadySubmitted; two saves at once
    wait on the token's unique index and the second is refused the same way. If the save
    fails, the claim is undone with it, so the person can correct the form and save again.
    The caller sets `url` on the claim to where the result is. A form without a token (an
    old page or a script) is saved as before.
    """
    token = str(token or "").strip()[:FORM_TOKEN_MAX]
    with transaction.atomic():
        if not token:
            yield None
            return
        try:
            with transaction.atomic():
                claim = FormSubmission.objects.create(token=token, user=actor)
        except IntegrityError:
            earlier = FormSubmission.objects.filter(token=token, user=actor).first()
            raise AlreadySubmitted(earlier.url if earlier is not None else "") from None
        # Each claim clears the spent ones past their time, so the table stays small.
        FormSubmission.objects.filter(created_at__lt=timezone.now() - FORM_TOKEN_KEPT).delete()
        yield claim
        if claim.url:
            claim.save(update_fields=["url"])


# --- attachments ------------------------------------------------------------------------------


@atomic_retried
def attachment_add(*, actor: User, page: Page, upload: UploadedFile) -> Attachment:
    """Attach a file to a page, with its text extracted for agents and search."""
    if not actor.is_authenticated:
        raise Forbidden("log in to attach files.")
    refusal = permissions.refusal(actor, PUBLISH, page, grants_only=True)
    if refusal is not None:
        raise Forbidden(refusal)
    name = (upload.name or "").replace("\\", "/").rsplit("/", 1)[-1]
    # A file name is read like a title: an override could make "gpj.exe" look like ".jpg".
    name = check_one_line(name, field="file", name="the file name")
    if not name or len(name) > 255:
        raise InvalidArgument("the file needs a name of 1 to 255 characters.", field="file")
    limit = settings.QUIRE_ATTACHMENT_MAX_BYTES
    if upload.size is None or upload.size > limit:
        raise InvalidArgument(
            f"{name} is {upload.size or 0:,} bytes; attachments can be at most {limit:,} bytes.",
            field="file",
        )
    data = upload.read()
    if len(data) > limit:
        raise InvalidArgument(f"{name} is larger than {limit:,} bytes.", field="file")
    content_type = (
        upload.content_type
        if upload.content_type and upload.content_type != "application/octet-stream"
        else (mimetypes.guess_type(name)[0] or "application/octet-stream")
    )
    refuse_credentials(name, field="file", name="the file name")
    text = extract_text(name=name, content_type=content_type, data=data)
    # Agents read this text through get_page and search finds it: no credential either.
    refuse_credentials(text, field="file", name=f"the text of {name}")
    page = lock_page(page)
    if page.attachments.filter(name=name).exists():
        raise InvalidArgument(
            f"this page already has a file named {name}; rename the file or remove the old one.",
            field="file",
        )
    attachment = Attachment(
        page=page,
        name=name,
        content_type=content_type,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        extracted_text=text,
        uploaded_by=actor,
    )
    attachment.file.save(name, ContentFile(data), save=False)
    # The file is on disk before the row; if the transaction fails, remove it again.
    stored_name = attachment.file.name or ""
    try:
        attachment.save()
        audit_record(action="attachment.add", actor=actor, page=page, data={"name": name})
        search.index_page(page)
    except BaseException:
        attachment.file.storage.delete(stored_name)
        raise
    return attachment


@atomic_retried
def attachment_remove(*, actor: User, attachment: Attachment) -> None:
    refusal = permissions.refusal(actor, PUBLISH, attachment.page, grants_only=True)
    if refusal is not None:
        raise Forbidden(refusal)
    page = lock_page(attachment.page)
    name, stored = attachment.name, attachment.file.name or ""
    storage = attachment.file.storage
    attachment.delete()
    audit_record(action="attachment.remove", actor=actor, page=page, data={"name": name})
    transaction.on_commit(lambda: storage.delete(stored))
    search.index_page(page)
