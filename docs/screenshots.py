"""The pictures of docs/reviewing.md (docs/img/*.png), made again from the demo handbook.

A fresh SQLite wiki in a temporary folder: `load_demo`, then a few agent proposals of mixed
kinds under a "Customer service" section; Quire's own server on a free port; Debian's
Chromium (Playwright) at 1100 px signs in as the demo admin and takes the queue with the
low-risk rows ticked, the review page's checks and kinds of change, and a partial approval
with one refused change. Each picture is cut to 256 colours to stay under 150 KB. Run:

    .venv/bin/python docs/screenshots.py
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
WIDTH, HEIGHT = 1100, 860
CHROMIUM = "/usr/bin/chromium"

SECTION = ("Customer service", "How we answer customers.\n")
SMALL_FIXES = [
    ("Shipping", "Parcels leave the warehouse the next working day.\n", "leave", "usually leave"),
    ("Returns", "Returns are accepted within 30 days.\n", "30 days", "30 calendar days"),
    ("Support hours", "The help desk is open from 9 to 5.\n", "9 to 5", "9 to 6"),
    ("Tone of voice", "We write in a frendly, plain way.\n", "frendly", "friendly"),
]
REFUNDS = (
    "# Refunds\n\nRefunds take 5 working days.\n\nAsk support by email.\n\nGift cards are final.\n"
)
REFUNDS_PROPOSED = (
    REFUNDS.replace("5 working", "3 working")
    .replace("email.", "email or chat.")
    .replace("are final", "can be refunded within a year")
    + "\nSee [[pg_aaaaaaaa]] for the form.\n"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(env: dict[str, str], folder: Path) -> tuple[str, str]:
    """The demo wiki and the proposals; returns the admin's password and the refunds
    proposal's review path."""
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from agents.selectors import agent_by_name
    from content.management.commands import load_demo
    from reviews.actions.create import page_create
    from reviews.actions.propose import version_propose

    login = folder / "login.txt"
    call_command("migrate", verbosity=0)
    call_command("load_demo", login_file=login)
    admin, password = load_demo.ensure_admin(login)
    assert password is not None
    agent = agent_by_name(load_demo.AGENT_NAME)
    title, body = SECTION
    section = page_create(actor=admin, title=title, body=body, publish=True).page
    made = []
    for title, text, old, new in SMALL_FIXES:
        page = page_create(actor=admin, title=title, body=text, parent=section, publish=True).page
        made.append((page, text.replace(old, new)))
    refunds = page_create(
        actor=admin, title="Refunds", body=REFUNDS, parent=section, publish=True
    ).page
    for page, proposed in made:
        version_propose(actor=agent, page=page, body=proposed, change_summary="Fix.")
    proposal = version_propose(
        actor=agent,
        page=refunds,
        body=REFUNDS_PROPOSED,
        change_summary="Faster refunds, chat support, refundable gift cards.",
    )
    return password, f"/reviews/pages/{refunds.public_id}/v{proposal.number}/"


def serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=1)
            return server
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("Quire's server did not start")


def shrink(path: Path) -> None:
    """256 colours: a screen of text and flat colour stays sharp at a third of the size."""
    from PIL import Image

    with Image.open(path) as picture:
        picture.convert("RGB").quantize(colors=256).save(path, optimize=True)


def scroll_to(page: Any, selector: str, margin: int = 80) -> None:
    """`selector` near the top of the window, below the sticky bar."""
    page.evaluate(
        "([selector, margin]) => window.scrollTo(0, document.querySelector(selector)"
        ".getBoundingClientRect().top + window.scrollY - margin)",
        [selector, margin],
    )


def shoot(base: str, password: str, review_path: str) -> list[Path]:
    from playwright.sync_api import expect, sync_playwright

    taken: list[Path] = []

    def save(page: Any, name: str, target: Any = None) -> None:
        path = OUT / f"{name}.png"
        (target or page).screenshot(path=str(path))
        shrink(path)
        taken.append(path)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(f"{base}/login/")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")

        page.goto(f"{base}/reviews/")
        page.get_by_role("button", name="Select the low-risk ones").click()
        page.fill("#rv-batch-comment", "Small fixes, read in the queue.")
        scroll_to(page, ".rv-pick-low-risk", margin=110)
        save(page, "queue-batch")

        page.goto(f"{base}{review_path}")
        expect(page.locator(".rv-checks")).to_contain_text("Broken link")
        save(page, "review-checks")

        page.locator(".rv-partial > summary").click()
        page.locator("#refuse-3").check()
        page.fill("#reason-hunk-3", "Gift cards stay final.")
        scroll_to(page, ".rv-partial > summary")
        save(page, "review-partial")
        page.get_by_role("button", name="Preview what is kept").click()
        expect(page.locator("main")).to_contain_text("You keep")
        save(page, "review-partial-preview")
        browser.close()
    return taken


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        env = {
            "DATABASE_URL": f"sqlite:///{folder / 'demo.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "1",
            "SECRET_KEY": "docs-screenshots-only",
            "REDIS_URL": "",
            "QUIRE_BASE_URL": f"http://127.0.0.1:{port}",
        }
        with contextlib.redirect_stdout(io.StringIO()):  # the console's review emails
            password, review_path = prepare(env, folder)
        server = serve(env, port)
        try:
            taken = shoot(f"http://127.0.0.1:{port}", password, review_path)
        finally:
            server.terminate()
            server.wait(timeout=10)
    for path in taken:
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
