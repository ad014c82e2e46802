"""The REST door of batch decisions: one call decides a list of proposals, all or none
(reviews.batch), and one call takes an approval batch back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from core.errors import NotFound
from reviews import batch as batches
from reviews import selectors
from reviews.actions.rules import approval_undo_seconds
from reviews.api import CONFLICT, QuireAPIView, _input
from reviews.models import BatchDecision, DecisionBatch
from reviews.serializers import ErrorSerializer, decision_comment_field
from wiki.selectors import page_for_person


class BatchItemInputSerializer(serializers.Serializer):
    pageId = serializers.RegexField(r"^pg_[a-z2-7]{8}$", help_text="Public page id, pg_…")
    versionNumber = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    step = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=99,
        help_text="The workflow step (from 1) you decide it at, as its review.step showed it; "
        "left out: the step it is at when the call arrives.",
    )
    shown = serializers.RegexField(
        r"^[0-9a-f]{64}$",
        required=False,
        help_text="The `shown` that GET .../versions/{number}/ answered: the item counts as "
        "shown when it still names the change as it stands against what is live now. Left "
        "out: only a change shown in the queue or on its review page counts; otherwise the "
        "item is refused, saying to read the version first and pass its `shown`.",
    )


class BatchInputSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=BatchDecision.values)
    comment = decision_comment_field(
        "One comment for every item (at most 5,000 characters); required to reject."
    )
    items = serializers.ListField(
        child=BatchItemInputSerializer(),
        min_length=1,
        max_length=batches.BATCH_MAX,
        help_text=f"The proposals to decide, at most {batches.BATCH_MAX}.",
    )


class BatchItemSerializer(serializers.Serializer):
    pageId = serializers.CharField()
    versionNumber = serializers.IntegerField()
    step = serializers.IntegerField()
    status = serializers.CharField(help_text="in_review (approved at a step), approved, rejected")
    published = serializers.BooleanField()


class BatchSerializer(serializers.Serializer):
    batch = serializers.IntegerField(help_text="Give it to .../batches/{batch}/undo to undo it.")
    decision = serializers.CharField()
    comment = serializers.CharField()
    decidedAt = serializers.DateTimeField()
    undoUntil = serializers.DateTimeField(
        allow_null=True, help_text="An approval batch can be taken back whole until then."
    )
    undone = serializers.BooleanField()
    items = BatchItemSerializer(many=True)


class RefusedItemSerializer(serializers.Serializer):
    pageId = serializers.CharField()
    versionNumber = serializers.IntegerField()
    code = serializers.CharField()
    reason = serializers.CharField()


def _answer(batch: DecisionBatch) -> dict[str, Any]:
    items = list(batch.items.select_related("version__page"))
    undoable = batch.decision == BatchDecision.APPROVE and batch.undone_at is None
    return {
        "batch": batch.pk,
        "decision": batch.decision,
        "comment": batch.comment,
        "decidedAt": batch.created_at,
        "undoUntil": batch.created_at + timedelta(seconds=approval_undo_seconds())
        if undoable
        else None,
        "undone": batch.undone_at is not None,
        "items": [
            {
                "pageId": item.version.page.public_id,
                "versionNumber": item.version.number,
                "step": item.step,
                "status": item.version.status,
                "published": item.published,
            }
            for item in items
        ],
    }


def _items(user: User, rows: list[dict[str, Any]]) -> list[batches.BatchItem]:
    """Each listed proposal as `user` may read it (one they may not is not found)."""
    items = []
    for index, row in enumerate(rows):
        try:
            page = page_for_person(user, row["pageId"])
            version = selectors.version_of(page, row["versionNumber"], reader=user)
        except NotFound as error:
            raise NotFound(
                f"items[{index}]: {error.message} Nothing was decided.",
                detail={"item": index},
            ) from None
        items.append(batches.BatchItem(version, row.get("step"), row.get("shown")))
    return items


BATCH_CONFLICT = {
    **CONFLICT,
    409: OpenApiResponse(
        ErrorSerializer,
        description="At least one item was refused, so nothing was decided: `detail.refused` "
        "lists each ({pageId, versionNumber, code, reason}).",
    ),
}


class BatchDecideView(QuireAPIView):
    parser_classes = [JSONParser]  # a list of objects: JSON only

    @extend_schema(
        summary="Approve or reject many versions in review at once, all or none",
        description="Each item is checked as a single approval or rejection is (still in "
        "review at that step, you may decide it, you count once), and a batch asks more: you "
        "were shown its whole change against what is live now (the item's `shown`, as GET "
        ".../versions/{number}/ answered it; without one, in a queue row or on its review "
        "page), it is not stale, and its workflow lets its kind of change be approved in a "
        "batch. If any item is refused nothing is decided "
        "(409, `detail.refused`). Emails, inbox items and chat posts are sent only once the "
        "whole batch is decided.",
        request=BatchInputSerializer,
        responses={200: BatchSerializer, **BATCH_CONFLICT},
    )
    def post(self, request: Request) -> Response:
        data = _input(BatchInputSerializer, request)
        user = self.user()
        batch = batches.versions_decide_batch(
            actor=user,
            items=_items(user, data["items"]),
            decision=data["decision"],
            comment=data.get("comment", ""),
        )
        return Response(BatchSerializer(_answer(batch)).data)


BATCH_ID = OpenApiParameter(
    "batch_id",
    {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
    OpenApiParameter.PATH,
    description="The batch's number, as its decision answered it",
)


class BatchUndoView(QuireAPIView):
    @extend_schema(
        summary="Take back a whole approval batch within the undo window",
        description="Every proposal it published shows what it showed before and waits "
        "again; every approval that moved a proposal to its next step is removed. All or "
        "none: 409 with `detail.refused` when one cannot be taken back.",
        parameters=[BATCH_ID],
        request=None,
        responses={200: BatchSerializer, **BATCH_CONFLICT},
    )
    def post(self, request: Request, batch_id: int) -> Response:
        user = self.user()
        batch = batches.versions_decide_batch_undo(
            actor=user, batch=batches.batch_of(user, batch_id)
        )
        return Response(BatchSerializer(_answer(batch)).data)
