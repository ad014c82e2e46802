"""The wiki's domain: pages in a tree, their immutable versions, attachments, audit events."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.errors import Conflict
from wiki.scope import READABLE

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from agents.models import Agent

TITLE_MAX = 200
TAGS_MAX = 20
TAG_MAX = 50
MARKDOWN_MAX = 200_000
CHANGE_SUMMARY_MAX = 300

_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def new_page_id() -> str:
    return "pg_" + "".join(secrets.choice(_BASE32) for _ in range(8))


class PageQuerySet(models.QuerySet["Page"]):
    def readable(self) -> PageQuerySet:
        """Pages with something to read: a live version, and not archived."""
        return self.filter(READABLE)


# Siblings in tree order: by the place an editor gave them, then as the tree listed them before
# places existed (slug order).
SIBLING_ORDER = ("position", "slug", "id")


class Page(models.Model):
    """A wiki page. Its readable content is its live version; `title`/`tags`/`path` mirror it.

    For a page with no live version yet (created by a proposal in review) the mirrored
    fields hold the proposal's values so that reviewers can name it.
    """

    public_id = models.CharField(max_length=11, unique=True, default=new_page_id, editable=False)
    title = models.CharField(max_length=TITLE_MAX)
    slug = models.SlugField(max_length=220, allow_unicode=True)
    path = models.TextField(db_index=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    tags = models.JSONField(default=list, blank=True)
    instructions = models.TextField(blank=True, default="")
    live_version = models.OneToOneField(
        "Version", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Its place among its siblings: the tree lists them by (position, slug, id). An editor sets
    # it (wiki.services.page_reorder); a new or moved page goes last. Not versioned content.
    position = models.IntegerField(default=0)
    last_version_number = models.PositiveIntegerField(default=0)
    archived = models.BooleanField(default=False)
    # Archiving a page archives the pages under it with it; each of those points at the page
    # that took it along, so that restoring that page brings back exactly those.
    archived_with = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Import bookkeeping: the source file a page came from (idempotent re-import) and the
    # frontmatter keys Quire has no field for, kept so that export is lossless.
    source_path = models.CharField(max_length=1000, null=True, blank=True, unique=True)
    extra_frontmatter = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PageQuerySet.as_manager()

    class Meta:
        ordering = ["path"]
        indexes = [
            # Archived pages are few; the tree and the archive list look them up.
            models.Index(fields=["archived"], condition=Q(archived=True), name="page_archived"),
            # A parent's children in tree order (the sidebar's lists, REST's children).
            models.Index(fields=["parent", "position", "slug", "id"], name="page_sibling_order"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["parent", "slug"], name="page_unique_slug_among_siblings"
            ),
            models.UniqueConstraint(
                fields=["slug"],
                condition=Q(parent__isnull=True),
                name="page_unique_slug_at_root",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.public_id})"


class VersionKind(models.TextChoices):
    REPLACE = "replace", "Replace"
    APPEND = "append", "Append"


class VersionStatus(models.TextChoices):
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


class Version(models.Model):
    """An immutable snapshot of a page, numbered 1, 2, 3... per page.

    `proposed_body` is exactly what the author wrote (for an append: only the appended
    markdown). `body` is the page content this version stands for: for a replace it is the
    proposal; for an append it is filled at approval (live + appended). A reviewer's edit or
    a three-way merge at approval also lands in `body`, while `proposed_body` keeps the
    author's words. Once decided, a version never changes again.
    """

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=VersionKind.choices, default=VersionKind.REPLACE)
    status = models.CharField(
        max_length=12, choices=VersionStatus.choices, default=VersionStatus.IN_REVIEW
    )
    title = models.CharField(max_length=TITLE_MAX)
    body = models.TextField(blank=True, default="")
    proposed_body = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    parent = models.ForeignKey(
        Page, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    instructions = models.TextField(blank=True, default="")
    change_summary = models.CharField(max_length=CHANGE_SUMMARY_MAX, blank=True, default="")
    author_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="authored_versions",
    )
    author_agent = models.ForeignKey(
        "agents.Agent",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="authored_versions",
    )
    base_version = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reverted_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="decided_versions",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_comment = models.TextField(blank=True, default="")
    # Set when the reviewer changed the proposal before approving it, or approved a merge.
    edited_by_reviewer = models.BooleanField(default=False)
    merged = models.BooleanField(default=False)
    # A proposal approved after a newer version went live is published as a new version (so
    # the live version is always the newest number); this is that version.
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # What kind of change it is (reviews.classify), set when it was submitted, from its diff
    # alone: class names separated by spaces, and the lines it changes (null: made before).
    change_classes = models.CharField(max_length=120, blank=True, default="")
    change_lines = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["page_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["page", "number"], name="version_unique_number"),
            models.UniqueConstraint(
                fields=["page", "author_user"],
                condition=Q(status="in_review", author_user__isnull=False),
                name="version_one_pending_per_user_and_page",
            ),
            models.UniqueConstraint(
                fields=["page", "author_agent"],
                condition=Q(status="in_review", author_agent__isnull=False),
                name="version_one_pending_per_agent_and_page",
            ),
            models.CheckConstraint(
                condition=Q(author_user__isnull=False) | Q(author_agent__isnull=False),
                name="version_has_an_author",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "created_at"], name="version_status_created"),
            # Recent changes: the newest approved versions.
            models.Index(fields=["decided_at"], name="version_decided_at"),
        ]

    # Not a status: where a version goes when its row is deleted (`Version.remove`).
    REMOVED: ClassVar[str] = "removed"
    # The life of a version, stated once: a proposal waits in review until a reviewer
    # approves or rejects it, or its author takes it back; a decided version never changes,
    # but for an approval taken back within its window (reviews.actions.undo): the proposal
    # waits in review again (`reopen`), and the copy it went live as is removed (`remove`).
    TRANSITIONS: ClassVar[dict[str, frozenset[str]]] = {
        VersionStatus.IN_REVIEW: frozenset(
            {VersionStatus.APPROVED, VersionStatus.REJECTED, VersionStatus.WITHDRAWN}
        ),
        VersionStatus.APPROVED: frozenset({VersionStatus.IN_REVIEW, REMOVED}),
        VersionStatus.REJECTED: frozenset(),
        VersionStatus.WITHDRAWN: frozenset(),
    }

    # What a version says, apart from who wrote it and its review: two versions equal in these
    # read the same (reviews.merge), and a version made from another copies them (`content`).
    CONTENT_FIELDS: ClassVar[tuple[str, ...]] = (
        "title",
        "body",
        "tags",
        "parent_id",
        "instructions",
    )

    def __str__(self) -> str:
        return f"{self.page.public_id} v{self.number} ({self.status})"

    def content(self, **changes: Any) -> dict[str, Any]:
        """The fields of a new version made from this one (a copy published, a revert, a
        move): its CONTENT_FIELDS, its body also as what the new version's author wrote, and
        `changes` (`parent=` in place of the parent's id)."""
        copied = {name: getattr(self, name) for name in self.CONTENT_FIELDS}
        copied["proposed_body"] = self.body
        if "parent" in changes:
            del copied["parent_id"]
        return {**copied, **changes}

    def move_to(self, status: str, *, by: User | None = None, comment: str = "") -> None:
        """Decide or withdraw this version (the caller saves it); anything else is refused."""
        self.check_move(status)
        if status in (VersionStatus.IN_REVIEW, self.REMOVED):
            raise ValueError("a version goes back through reopen() and away through remove()")
        self.status = status
        self.decided_by = by
        self.decided_at = timezone.now()
        self.decision_comment = comment

    def reopen(self) -> None:
        """An approval taken back in time (reviews.actions.undo.version_approve_undo): the
        proposal waits again, as if undecided. The one way back from approved; the caller
        has checked that nothing else happened since."""
        self.check_move(VersionStatus.IN_REVIEW)
        self.status = VersionStatus.IN_REVIEW
        self.decided_by = None
        self.decided_at = None
        self.decision_comment = ""
        self.edited_by_reviewer = False
        self.merged = False
        self.merged_into = None

    def remove(self) -> None:
        """Delete the copy an approval taken back in time had published under a new number
        (reviews.actions.undo); the caller has checked it is the page's newest number."""
        self.check_move(self.REMOVED)
        self.delete()

    def check_move(self, status: str) -> None:
        """Refuse, saying why, a move the life of a version does not allow."""
        if status not in self.TRANSITIONS[self.status]:
            raise self._refusal(status)

    def _refusal(self, status: str) -> Conflict:
        current = self.get_status_display().lower()
        if status == VersionStatus.WITHDRAWN:
            return Conflict(
                f"v{self.number} of “{self.page.title}” is {current}, not in review; only a "
                "waiting proposal can be withdrawn.",
                detail={"status": self.status},
            )
        decider = self.decided_by.get_username() if self.decided_by is not None else None
        by = f" by {decider}" if decider and self.status != VersionStatus.WITHDRAWN else ""
        return Conflict(
            f"v{self.number} of “{self.page.title}” ({self.page.public_id}) was already "
            f"{current}{by}; there is nothing left to decide. Open the review queue for the "
            "proposals still waiting.",
            detail={"status": self.status, "decidedBy": decider},
        )

    @property
    def author_name(self) -> str:
        if self.author_agent_id is not None:
            agent: Agent = self.author_agent  # type: ignore[assignment]
            return f"{agent.name} (agent)"
        return self.author_user.get_username() if self.author_user else "unknown"


class Attachment(models.Model):
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="attachments")
    name = models.CharField(max_length=255)
    file = models.FileField(upload_to="attachments/%Y/%m/")
    content_type = models.CharField(max_length=200)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    extracted_text = models.TextField(blank=True, default="")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["page", "name"], name="attachment_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class SearchDocument(models.Model):
    """The search index row of one live page (see wiki/search/, whose indexing.py alone writes it).

    The columns hold the indexed plain text; the database derives the searchable form from
    them with triggers made by migration 0003: on PostgreSQL `vector` (weighted tsvector,
    GIN-indexed), on SQLite the FTS5 table `wiki_searchdocument_fts`. A later migration that
    rebuilds this table on SQLite must recreate those triggers.
    """

    page = models.OneToOneField(
        Page, primary_key=True, on_delete=models.CASCADE, related_name="search_document"
    )
    title = models.TextField()
    tags = models.TextField(blank=True, default="")
    body = models.TextField(blank=True, default="")
    # Always NULL on SQLite; on PostgreSQL set by a trigger from title/tags/body.
    vector = SearchVectorField(null=True, editable=False)
    # The page's language (wiki.language: "en", "fr"...), "" when undetermined. Nullable, with
    # no default, so that SQLite adds the column without rebuilding the table (and its triggers).
    language = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001
    # The SimHash of `body` (wiki.copies): near-identical pages (a page copied into every
    # language folder) have equal or near fingerprints; 0 for a page with no text. Nullable
    # with no default, as `language` is.
    fingerprint = models.BigIntegerField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["language"], name="searchdocument_language"),
            models.Index(fields=["fingerprint"], name="searchdocument_fingerprint"),
        ]

    def __str__(self) -> str:
        return f"search document of page {self.page_id}"


class FormSubmission(models.Model):
    """A web form's one-time token, claimed by the save it made (see wiki.services.submit_once).

    Going back and saving the same form again finds the token taken and is shown what the
    first save made, instead of making it twice.
    """

    token = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Where the first save's result is, for the "already saved" message.
    url = models.CharField(max_length=500, blank=True, default="")
    # Claims older than a day are deleted (wiki.services.submit_once): what they guard
    # against is going back and saving again soon after.
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"form {self.token[:8]}… saved by user {self.user_id}"


class PageChunk(models.Model):
    """A piece of a page's live version, cut along its headings, with its embedding.

    Written by wiki/semantic/ alone. `vector` holds the embedding as float32 bytes; on
    PostgreSQL with pgvector the column `embedding` (vector(384), HNSW index, made by
    migration 0013 when the extension is there) holds it too, for the index.
    """

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="chunks")
    # The version the chunk was cut from: a chunk of any other version is stale.
    version = models.ForeignKey(Version, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    heading = models.TextField(blank=True, default="")  # "" before the first heading
    text = models.TextField()
    # The embedding model's name; "" while the chunk has no embedding (no model).
    model = models.CharField(max_length=300, blank=True, default="")
    vector = models.BinaryField(null=True, editable=False)
    # sha256 of what the model read (wiki.semantic.embedding_text): a chunk whose text was
    # embedded before by the same model reuses that vector.
    text_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["page", "position"], name="pagechunk_unique_position")
        ]
        indexes = [models.Index(fields=["model", "text_hash"], name="pagechunk_model_text_hash")]

    def __str__(self) -> str:
        return f"chunk {self.position} of page {self.page_id}"


# The rights a group can be granted on a section (wiki.permissions says what each allows).
RIGHTS = ("read", "propose", "publish", "decide")


class PageGrant(models.Model):
    """A group's rights on a page and everything under it. For each right the nearest grant
    on the page or above wins (wiki.permissions); a page with no grant above it for a right
    keeps the default (everyone reads and proposes, Editors publish, Reviewers decide)."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="grants")
    group = models.ForeignKey("auth.Group", on_delete=models.CASCADE, related_name="page_grants")
    # One column per right, so that the scope's SQL can ask for one of them.
    read = models.BooleanField(default=False)
    propose = models.BooleanField(default=False)
    publish = models.BooleanField(default=False)
    decide = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["page_id", "group_id"]
        constraints = [
            models.UniqueConstraint(fields=["page", "group"], name="pagegrant_unique_group")
        ]

    def __str__(self) -> str:
        return f"{self.group_id} on {self.page_id}: {', '.join(self.rights)}"

    @property
    def rights(self) -> list[str]:
        return [right for right in RIGHTS if getattr(self, right)]
