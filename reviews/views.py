"""Review screens (placeholder until the review workflow issue)."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {})
