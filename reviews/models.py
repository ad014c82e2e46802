"""Review-side state: workflows and each proposal's review, notification preferences, the
outbox, API tokens."""

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q


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


class NotificationDelivery(models.TextChoices):
    IMMEDIATE = "immediate", "Immediately"
    DIGEST = "digest", "In the daily digest"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    SKIPPED = "skipped", "Skipped"
    FAILED = "failed", "Failed"


class Notification(models.Model):
    """Outbox: one email owed to one person, written in the transaction of the change.

    A broker or SMTP outage leaves the row pending; the sweep task sends it later.
    """

    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    delivery = models.CharField(
        max_length=10, choices=NotificationDelivery.choices, default=NotificationDelivery.IMMEDIATE
    )
    version = models.ForeignKey(
        "wiki.Version", on_delete=models.CASCADE, related_name="notifications"
    )
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
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
    # The Message-ID of the email that stands for this row, kept from its first try: an
    # email sent again after a fault carries it again, so the repeat is recognisable.
    message_id = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "delivery"], name="notification_status_delivery")]

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

    class Meta:
        ordering = ["workflow_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "position"], name="workflow_step_unique_position"
            ),
            models.CheckConstraint(
                condition=Q(approvals__gte=1), name="workflow_step_needs_an_approval"
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
    approvals}]): an admin changing the workflow later does not change a proposal in flight.
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
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["started_at", "id"]
        indexes = [models.Index(fields=["status", "workflow"], name="review_status_workflow")]

    def __str__(self) -> str:
        return f"review of {self.version_id} ({self.status}, step {self.step + 1})"

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
    """One reviewer's approval of one revision at one step; nobody counts twice."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="approvals")
    version = models.ForeignKey("wiki.Version", on_delete=models.CASCADE, related_name="approvals")
    step = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals"
    )
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "step", "user"], name="approval_once_per_step"
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
