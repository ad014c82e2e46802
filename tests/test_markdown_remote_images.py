"""Images from other hosts are never fetched: rendered markdown shows a link naming the host."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from reviews.actions.propose import version_propose
from wiki.markdown import render_markdown
from wiki.models import Page

REMOTE = [
    ("![Build status](https://ci.tracker.example/badge.svg)", "ci.tracker.example"),
    ('![chart](http://stats.example.org/c.png "Monthly")', "stats.example.org"),
    ("![](//cdn.example.net/pixel.gif)", "cdn.example.net"),
    ('<img src="https://pixel.example.com/open.gif?u=rita" alt="">', "pixel.example.com"),
    ('<img src="HTTPS://Upper.Example.COM/a.png" alt="x">', "upper.example.com"),
    ('<img src="/\\evil.example/b.png">', "evil.example"),
    ('<img src=" //spaced.example/c.png">', "spaced.example"),
    ('<p>text <img alt="a>b" src="https://quoted.example/d.png"> more</p>', "quoted.example"),
]


def images(html: str) -> list[str]:
    return re.findall(r"<img\b[^>]*>", html)


@pytest.mark.parametrize(("markdown", "host"), REMOTE)
def test_it_shows_a_remote_image_as_a_link_naming_its_host(markdown: str, host: str) -> None:
    html = render_markdown(f"Before.\n\n{markdown}\n\nAfter.\n")

    assert images(html) == []
    link = re.search(r'<a href="[^"]*" class="remote-image"[^>]*>([^<]*)</a>', html)
    assert link is not None, html
    assert f"from {host}" in link.group(1)
    assert "Before." in html and "After." in html


def test_it_keeps_images_served_by_quire_itself() -> None:
    html = render_markdown("![diagram](/media/attachments/diagram.png)\n\n![b](local.png)\n")

    assert images(html) == [
        '<img alt="diagram" src="/media/attachments/diagram.png">',
        '<img alt="b" src="local.png">',
    ]


def test_it_names_the_alt_text_and_keeps_the_address_to_open_on_purpose() -> None:
    html = render_markdown("![Org chart](https://intranet.example/org.png)\n")

    assert html == (
        '<p dir="auto"><a href="https://intranet.example/org.png" class="remote-image" '
        'rel="noopener noreferrer nofollow" title="Open the image from intranet.example">'
        "Image: Org chart (from intranet.example, not loaded)</a></p>"
    )


def test_an_image_in_code_stays_code() -> None:
    html = render_markdown('```html\n<img src="https://x.example/a.png">\n```\n')

    assert "remote-image" not in html and "&lt;img" in html


@pytest.mark.django_db
def test_page_review_and_api_show_the_link_not_the_image(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    page = make_page("Status", "![badge](https://badge.tracker.example/ok.svg)\n")
    proposal = version_propose(
        actor=reader,
        page=page,
        body="<img src='https://pixel.tracker.example/seen.gif'>\n",
        change_summary="Track opens.",
    )
    client = client_as(reviewer)

    for url in (
        reverse("wiki:page", args=[page.public_id]),
        reverse("reviews:review", args=[page.public_id, proposal.number]),
        f"/api/v1/pages/{page.public_id}/",
    ):
        body = client.get(url).content.decode()
        assert "tracker.example" in body, url
        assert not re.search(r"<img[^>]+tracker\.example", body.replace('\\"', '"')), url
