"""The REST door of a partial approval: approve every changed block of a version but the ones
refused, each with its reason (reviews.partial)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from reviews.api import CONFLICT, NUMBER, PAGE_ID, QuireAPIView, _input, _step, _version
from reviews.partial import version_approve_partial
from reviews.serializers import ApprovePartialInputSerializer, VersionDetailSerializer


class ApprovePartialView(QuireAPIView):
    parser_classes = [JSONParser]  # a list of objects: JSON only

    @extend_schema(
        summary="Approve a version in review but the changed blocks (hunks) you refuse",
        description="The hunks are numbered as the version's `hunks` lists them, against the "
        "live version (`expectedLiveVersion`). What is kept is approved as a reviewer's edit: "
        "in a workflow it is what the next step reviews (earlier approvals still count, since "
        "refusing only leaves changes out). The refused hunks and their reasons are in the "
        "version's `refusedHunks`, and the agent reads them in get_page_source's "
        "lastDecision. An addition, a new page and a stale proposal are decided whole (409); "
        "refusing no hunk, every hunk or one it does not have is a 409 that says what to do "
        "instead (approve it whole, reject it, or reload its hunks).",
        parameters=[PAGE_ID, NUMBER],
        request=ApprovePartialInputSerializer,
        responses={200: VersionDetailSerializer, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(ApprovePartialInputSerializer, request)
        user = self.user()
        version = _version(user, page_id, number)
        refused: dict[int, str] = {}
        for row in data["refused"]:
            refused[row["hunk"]] = row.get("reason", "")
        version = version_approve_partial(
            actor=user,
            version=version,
            refused=refused,
            expected_live_number=data["expectedLiveVersion"],
            comment=data.get("comment", ""),
            step=_step(data, version),
        )
        return Response(VersionDetailSerializer(_version(user, page_id, version.number)).data)
