"""Review-side state: workflows and each proposal's review, notification preferences, the
outbox, API tokens."""

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from core.errors import Conflict

if TYPE_CHECKING:
    from django.contrib.auth.models import User

_Row = TypeVar("_Row", bound=models.Model)


class NotificationPreference(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DAILY = "daily", "Daily digest"
    OFF = "off", "Off"


class ReviewerSettings(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer_settings"
    )
    notifications = models.CharField(
        max_length=10,
        choices=NotificationPreference.choices,
        default=NotificationPreference.IMMEDIATE,
    )

    class Meta:
        verbose_name = "reviewer's email setting"
        verbose_name_plural = "reviewers' email settings"

    def __str__(self) -> str:
        return f"{self.user} ({self.notifications})"


class NotificationKind(models.TextChoices):
    REVIEW_REQUESTED = "review_requested", "Review requested"
    DECISION = "decision", "Decision"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    NOBODY_DECIDES = "nobody_decides", "Nobody can decide"
    REVIEW_ASKED = "review_asked", "Asked by name"
    REVIEW_REMINDER = "review_reminder", "Reminder"
    REVIEW_WITHDRAWN = "review_withdrawn", "No longer waits on you"


class NotificationDelivery(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DIGEST = "digest", "In the daily digest"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    SKIPPED = "skipped", "Skipped"
    FAILED = "failed", "Failed"
    # A chat's webhook answered 4xx: its address is wrong or revoked; not tried again.
    REFUSED = "refused", "Refused"


class WebhookPostKind(models.TextChoices):
    REVIEW_REQUESTED = "review_requested", "Review requested"
    NOBODY_DECIDES = "nobody_decides", "Nobody can decide"
    REVIEW_REMINDER = "review_reminder", "Reminder"
    REVIEW_ESCALATED = "review_escalated", "Escalated to the admins"


class DeliveryChannel(models.TextChoices):
    EMAIL = "email", "Email"
    CHAT = "chat", "Chat post"


# What an email or a chat post may be about (an email's kinds, then the chat's own).
DELIVERY_KINDS = NotificationKind.choices + [
    choice for choice in WebhookPostKind.choices if choice[0] not in NotificationKind.values
]


class Delivery(models.Model):
    """Something owed outside (an email to a person, a post to a group's chat), written in the
    transaction of the change and sent at least once (reviews.delivery: the claim, the lease,
    the attempts, the one task and the one sweep). One table for every channel; the
    `Notification` and `WebhookPost` proxies below are its emails and its chat posts."""

    channel = models.CharField(max_length=5, choices=DeliveryChannel.choices)
    kind = models.CharField(max_length=20, choices=DELIVERY_KINDS)
    # Every email and chat post owed about the version.
    version = models.ForeignKey(
        "wiki.Version", on_delete=models.CASCADE, related_name="notifications"
    )
    status = models.CharField(
        max_length=10, choices=NotificationStatus.choices, default=NotificationStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    # Not sent before then: an approval's email waits out the time it can be taken back.
    not_before = models.DateTimeField(null=True, blank=True)

    # An email: to whom, when (now or in the daily digest), and the Message-ID of the email
    # that stands for this row, kept from its first try: an email sent again after a fault
    # carries it again, so the repeat is recognisable.
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="notifications",
    )
    delivery = models.CharField(
        max_length=10, choices=NotificationDelivery.choices, default=NotificationDelivery.IMMEDIATE
    )
    message_id = models.CharField(max_length=200, blank=True, default="")

    # A chat post: to which webhook (kept when the webhook is taken off, without the address:
    # what was owed is marked skipped, the record of what was posted stays), its text written
    # with the change (what was true then).
    webhook = models.ForeignKey(
        "reviews.GroupWebhook",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="posts",
    )
    text = models.TextField(blank=True, default="")
    # The id a chat post had in its own table before the two were one (migration 0020): a
    # task queued then under the old name (`reviews.tasks.deliver_webhook_post`) names it.
    legacy_id = models.PositiveIntegerField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["status", "channel", "delivery"], name="delivery_status_channel")
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(channel__in=DeliveryChannel.values), name="delivery_channel_known"
            ),
            models.CheckConstraint(
                condition=Q(channel=DeliveryChannel.CHAT)
                | Q(recipient__isnull=False, webhook__isnull=True, legacy_id__isnull=True),
                name="delivery_email_has_a_recipient",
            ),
            models.CheckConstraint(
                condition=Q(channel=DeliveryChannel.EMAIL) | Q(recipient__isnull=True),
                name="delivery_chat_post_has_no_recipient",
            ),
        ]

    def __str__(self) -> str:
        to = self.recipient_id if self.channel == DeliveryChannel.EMAIL else self.webhook_id
        return f"{self.kind} to {self.channel} {to} ({self.status})"


class ChannelManager(models.Manager[_Row]):
    """The rows of one channel: `Notification.objects` are the emails."""

    channel: ClassVar[str] = ""

    def get_queryset(self) -> models.QuerySet[_Row]:
        return super().get_queryset().filter(channel=self.channel)


class EmailManager(ChannelManager["Notification"]):
    channel = DeliveryChannel.EMAIL


class ChatManager(ChannelManager["WebhookPost"]):
    channel = DeliveryChannel.CHAT


class ChannelRow:
    """A delivery of one channel (a proxy of `Delivery`), made with its channel set, also in
    a bulk_create."""

    CHANNEL: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not args:
            kwargs.setdefault("channel", self.CHANNEL)
        super().__init__(*args, **kwargs)


class Notification(ChannelRow, Delivery):
    """Outbox: one email owed to one person, written in the transaction of the change.

    A broker or SMTP outage leaves the row pending; the sweep sends it later.
    """

    CHANNEL = DeliveryChannel.EMAIL
    objects: ClassVar[EmailManager] = EmailManager()

    if TYPE_CHECKING:
        # Always set on an email (the table's check constraint).
        recipient: User

    class Meta:
        proxy = True

    def __str__(self) -> str:
        return f"{self.kind} to {self.recipient_id} ({self.status})"


class ApiToken(models.Model):
    """A REST API key: only its SHA-256 is stored (like agent tokens); the key is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    prefix = models.CharField(
        max_length=12, help_text="The key's first characters, to tell keys apart."
    )
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


# --- review workflows ---------------------------------------------------------------------

DEFAULT_WORKFLOW_NAME = "Default"
DEFAULT_STEPS: list[dict[str, Any]] = [{"name": "Review", "group": "Reviewers", "approvals": 1}]
WORKFLOW_NAME_MAX = 100
STEP_NAME_MAX = 100


class Workflow(models.Model):
    """An ordered list of steps a proposal goes through before it is published."""

    name = models.CharField(max_length=WORKFLOW_NAME_MAX, unique=True)
    # Kinds of change (reviews.classify) never approved in a batch on this workflow's pages:
    # each is decided on its own (reviews.batch).
    never_in_batch = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class WorkflowStep(models.Model):
    """One step: `approvals` members of `group` must approve before the proposal moves on."""

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=STEP_NAME_MAX)
    group = models.ForeignKey(Group, on_delete=models.PROTECT, related_name="workflow_steps")
    approvals = models.PositiveSmallIntegerField(default=1)
    # Hours a proposal may wait at this step before its deciders are reminded; null: the
    # global QUIRE_REVIEW_DUE_HOURS.
    due_hours = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["workflow_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "position"], name="workflow_step_unique_position"
            ),
            models.CheckConstraint(
                condition=Q(approvals__gte=1), name="workflow_step_needs_an_approval"
            ),
            models.CheckConstraint(
                condition=Q(due_hours__isnull=True) | Q(due_hours__gte=1),
                name="workflow_step_due_at_least_an_hour",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.workflow.name} #{self.position + 1}: {self.name}"


class WorkflowAssignment(models.Model):
    """A workflow applies to this page and everything under it (the nearest one wins)."""

    page = models.OneToOneField(
        "wiki.Page", on_delete=models.CASCADE, related_name="workflow_assignment"
    )
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="assignments")
    assigned_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.workflow.name} on {self.page_id}"


class ReviewStatus(models.TextChoices):
    OPEN = "open", "Waiting for reviewers"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


class Review(models.Model):
    """A proposal's way through its workflow, kept across its author's revisions.

    `steps` is the workflow as it stood when the proposal started ([{name, group,
    approvals, due_hours?}]): an admin changing the workflow later does not change a proposal
    in flight.
    `version` is the revision under review now; earlier ones are in ReviewRevision.
    """

    page = models.ForeignKey("wiki.Page", on_delete=models.CASCADE, related_name="reviews")
    version = models.OneToOneField("wiki.Version", on_delete=models.CASCADE, related_name="review")
    workflow = models.ForeignKey(
        Workflow, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews"
    )
    workflow_name = models.CharField(max_length=WORKFLOW_NAME_MAX)
    # The page whose assignment gave the workflow (null: the default).
    workflow_page = models.ForeignKey(
        "wiki.Page", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    steps = models.JSONField()
    step = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(
        max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.OPEN
    )
    revision = models.PositiveSmallIntegerField(default=1)
    # The person whose OAuth connection carried the agent's revision under review: they may
    # not decide it, as the agent's owner may not.
    connected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["started_at", "id"]
        indexes = [models.Index(fields=["status", "workflow"], name="review_status_workflow")]

    def __str__(self) -> str:
        return f"review of {self.version_id} ({self.status}, step {self.step + 1})"

    # The life of a review, stated once: each transition, the statuses it may start from and
    # the status it leads to. reviews.actions has one function per transition; each asks
    # `check_move` first, so a move this table does not allow is refused before anything changes.
    TRANSITIONS: ClassVar[dict[str, tuple[frozenset[str], str]]] = {
        "approve": (frozenset({ReviewStatus.OPEN}), ReviewStatus.OPEN),  # a step, or all
        "merge": (frozenset({ReviewStatus.OPEN}), ReviewStatus.APPROVED),
        "publish": (frozenset({ReviewStatus.OPEN}), ReviewStatus.APPROVED),
        "reject": (
            frozenset({ReviewStatus.OPEN, ReviewStatus.CHANGES_REQUESTED}),
            ReviewStatus.REJECTED,
        ),
        "request_changes": (frozenset({ReviewStatus.OPEN}), ReviewStatus.CHANGES_REQUESTED),
        "revise": (
            frozenset({ReviewStatus.OPEN, ReviewStatus.CHANGES_REQUESTED}),
            ReviewStatus.OPEN,
        ),
        "withdraw": (
            frozenset({ReviewStatus.OPEN, ReviewStatus.CHANGES_REQUESTED}),
            ReviewStatus.WITHDRAWN,
        ),
        "undo": (frozenset({ReviewStatus.APPROVED}), ReviewStatus.OPEN),
        # A step's approval taken back with the batch that gave it (reviews.batch).
        "take_back": (frozenset({ReviewStatus.OPEN}), ReviewStatus.OPEN),
    }
    # The transitions a reviewer takes at a step: they name the step they were given for.
    STEP_DECISIONS: ClassVar[frozenset[str]] = frozenset(
        {"approve", "merge", "publish", "reject", "request_changes"}
    )

    def check_move(self, transition: str, *, step: int | None = None) -> None:
        """Refuse, saying why and what to do, a transition the table does not allow from
        where the review is, or a decision given for a step the review has left (`step`
        counts from 1, as every screen shows it)."""
        allowed, _ = self.TRANSITIONS[transition]
        if self.status not in allowed:
            raise self._refusal(transition)
        if step is not None and transition in self.STEP_DECISIONS and step != self.step + 1:
            given = self.steps[step - 1]["name"] if 0 < step <= len(self.steps) else "?"
            now = self.current_step
            raise Conflict(
                f"you decided step {step} ({given}), but this proposal is at step "
                f"{self.step + 1} of {len(self.steps)} ({now['name']}, decided by "
                f"{now['group']}) now: it moved on since you opened it. Nothing was recorded; "
                "reload the proposal and decide again if the step is yours.",
                detail={"step": self.step + 1, "givenFor": step, "review": self.status},
            )

    def move_to(self, transition: str, *, step: int | None = None) -> None:
        """Take `transition` (the caller saves): checked against the table first."""
        self.check_move(transition, step=step)
        self.status = self.TRANSITIONS[transition][1]

    def _refusal(self, transition: str) -> Conflict:
        where = self.get_status_display().lower()
        if self.status == ReviewStatus.CHANGES_REQUESTED:
            return Conflict(
                "changes were requested on this proposal; it waits for its author's "
                "revision. Reject it, or wait for the revision to decide again.",
                detail={"review": self.status},
            )
        return Conflict(
            f"this review is {where}, so it cannot be {transition.replace('_', ' ')}d "
            "now; open the review queue for the proposals still waiting.",
            detail={"review": self.status},
        )

    @property
    def current_step(self) -> dict[str, Any]:
        step: dict[str, Any] = self.steps[min(self.step, len(self.steps) - 1)]
        return step

    @property
    def is_last_step(self) -> bool:
        return self.step >= len(self.steps) - 1


class ReviewRevision(models.Model):
    """Each version its author sent in one review, in order."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="revisions")
    version = models.OneToOneField(
        "wiki.Version", on_delete=models.CASCADE, related_name="review_revision"
    )
    number = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["review_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["review", "number"], name="review_revision_unique")
        ]

    def __str__(self) -> str:
        return f"revision {self.number} of review {self.review_id}"


class Approval(models.Model):
    """One reviewer's approval of one revision at one step; nobody counts twice in a review.

    `reset`: a reviewer edited the text after this approval; it stays in the history but
    counts for nothing. `edited`: this approval came with its reviewer's edit of the text.
    """

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="approvals")
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="approvals")
    step = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals"
    )
    comment = models.TextField(blank=True, default="")
    edited = models.BooleanField(default=False)
    reset = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # One person counts once per revision, across steps: two racing requests of the
            # same reviewer, or one at step 1 and again at step 2, cannot both count.
            models.UniqueConstraint(
                fields=["version", "user"],
                condition=Q(reset=False),
                name="approval_once_per_review",
            )
        ]

    def __str__(self) -> str:
        return f"approval of {self.version_id} at step {self.step + 1} by {self.user_id}"


class CommentKind(models.TextChoices):
    COMMENT = "comment", "Comment"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"
    REJECTED = "rejected", "Rejected"


class ReviewComment(models.Model):
    """A note in a review's conversation; with `line`, on one line of the proposed text.

    `line_text` keeps the line's words, so the note finds its line again in a later revision.
    """

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="comments")
    version = models.ForeignKey(
        "wiki.Version", on_delete=models.CASCADE, related_name="review_comments"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_comments"
    )
    kind = models.CharField(max_length=20, choices=CommentKind.choices, default=CommentKind.COMMENT)
    body = models.TextField()
    line = models.PositiveIntegerField(null=True, blank=True)
    line_text = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} on {self.version_id} by {self.author_id}"


class ReviewVisit(models.Model):
    """The revision a person last looked at, and when: "what changed since" and presence."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="visits")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_visits"
    )
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="+")
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["review", "user"], name="review_visit_once_per_user")
        ]
        indexes = [models.Index(fields=["review", "seen_at"], name="review_visit_recent")]

    def __str__(self) -> str:
        return f"{self.user_id} saw {self.version_id} at {self.seen_at}"


class ReviewAsk(models.Model):
    """A person asked by name to review (the author or a reviewer asks "alice")."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="asks")
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_asks"
    )
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["review", "person"], name="review_ask_once")]

    def __str__(self) -> str:
        return f"{self.person_id} asked on {self.review_id}"


class ReminderStage(models.TextChoices):
    DECIDERS = "deciders", "The step's deciders"
    ADMINS = "admins", "The admins"


class ReviewReminder(models.Model):
    """A reminder sent about a review waiting past its due time: once per step (and revision)
    to the deciders, then once to the admins. The row makes "once" hold."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="reminders")
    step = models.PositiveSmallIntegerField()
    revision = models.PositiveSmallIntegerField()
    stage = models.CharField(max_length=10, choices=ReminderStage.choices)
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["review", "step", "revision", "stage"], name="review_reminder_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.stage} reminded on {self.review_id} step {self.step}"


class GroupWebhook(models.Model):
    """Where to post a group's review requests: a chat's incoming webhook (Slack, Teams,
    Mattermost...), sent {"text": ...} when a proposal starts waiting on a step of the group."""

    group = models.OneToOneField(Group, on_delete=models.CASCADE, related_name="review_webhook")
    url = models.URLField(max_length=500, help_text="The chat's incoming webhook URL.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"webhook of {self.group.name}"


class WebhookPost(ChannelRow, Delivery):
    """One post owed to a group's chat webhook, its text written with the change (what was
    true then); kept like an email (reviews.webhooks), so a chat outage loses nothing. Posts
    owed to one webhook within its gathering window go out as one message."""

    CHANNEL = DeliveryChannel.CHAT
    objects: ClassVar[ChatManager] = ChatManager()

    class Meta:
        proxy = True

    def __str__(self) -> str:
        return f"{self.kind} to {self.webhook_id} ({self.status})"


class DiffShown(models.Model):
    """A person was shown a proposal's whole change against one live version (in a queue row,
    on its review page, or over REST): what a batch decision asks before it decides anything.

    `digest` names exactly what was shown (reviews.shown.shown_digest): another live version,
    a revision or a reviewer's edit is another digest, so it counts as not shown.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="diffs_shown"
    )
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)
    where = models.CharField(max_length=10)  # "queue", "page" or "api"
    shown_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "version", "digest"], name="diff_shown_once_per_text"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} was shown {self.version_id} ({self.where})"


class BatchDecision(models.TextChoices):
    APPROVE = "approve", "Approved"
    REJECT = "reject", "Rejected"


class DecisionBatch(models.Model):
    """Proposals decided together by one person in one action, with one comment; an
    approval batch is taken back whole (reviews.batch)."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="decision_batches"
    )
    decision = models.CharField(max_length=10, choices=BatchDecision.choices)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.decision} batch {self.pk} by {self.actor_id}"


class DecisionBatchItem(models.Model):
    """One proposal of a batch: the step it was decided at (from 1) and whether that
    decision published it."""

    batch = models.ForeignKey(DecisionBatch, on_delete=models.CASCADE, related_name="items")
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="+")
    step = models.PositiveSmallIntegerField()
    published = models.BooleanField(default=False)

    class Meta:
        ordering = ["batch_id", "id"]
        constraints = [models.UniqueConstraint(fields=["batch", "version"], name="batch_item_once")]

    def __str__(self) -> str:
        return f"{self.version_id} in batch {self.batch_id}"


class RefusedHunk(models.Model):
    """A changed block a reviewer refused while approving the rest (reviews.partial): the
    author reads which and why, and may propose it again."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="refused_hunks")
    version = models.ForeignKey(
        "wiki.Version", on_delete=models.CASCADE, related_name="refused_hunks"
    )
    step = models.PositiveSmallIntegerField()  # from 0, as Review.step
    number = models.PositiveSmallIntegerField()  # in the diff the reviewer was shown, from 1
    line = models.PositiveIntegerField()  # where it started in the text it was shown against
    replaced = models.TextField(blank=True, default="")
    proposed = models.TextField(blank=True, default="")
    reason = models.TextField(blank=True, default="")
    refused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"hunk {self.number} of {self.version_id} refused at step {self.step + 1}"
