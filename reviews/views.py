"""Review screens (placeholder until the review workflow issue)."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "base.html", {})


@login_required
def history(request: HttpRequest, page_id: str) -> HttpResponse:
    return render(request, "base.html", {})


@login_required
def compare(request: HttpRequest, page_id: str) -> HttpResponse:
    return render(request, "base.html", {})


@login_required
def review(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    return render(request, "base.html", {})
