"""`GET /api/v1/me/`: who the request is authenticated as; the cheapest authenticated call.

Integrations use it to check a token; the benchmark uses it as the floor (`bare_view`)
against which the MCP tools' fixed cost is measured.
"""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviews.api_tokens import HashedTokenAuthentication


class WhoAmIView(APIView):
    authentication_classes = [HashedTokenAuthentication, SessionAuthentication]

    @extend_schema(
        responses=inline_serializer("WhoAmI", {"username": serializers.CharField()}),
        summary="The user this request is authenticated as",
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username()})
