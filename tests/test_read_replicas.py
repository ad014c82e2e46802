"""Reads from a real PostgreSQL streaming replica (config/replicas.py), over HTTP.

The tests start their own primary and replica (tests/replica_cluster.py) and gunicorn over
them. Pausing the replica's replay makes it hold the world before the primary's latest
writes, so each answer shows which server it was read from.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures_mcp import MCP
from tests.fixtures_servers import QuireServer, start_server
from tests.prerequisites import POSTGRES, require
from tests.replica_cluster import ReplicaCluster, missing
from tests.waits import HTTP_TIMEOUT

pytestmark = [pytest.mark.postgres]

# What the primary holds before the tests: a published page, an admin who reviews with an API
# key, an agent that may propose and one that only reads, both over every page.
SEED = """
import json
from django.contrib.auth.models import User
from agents.services import agent_create
from core.actors import SystemActor
from reviews.api_tokens import api_token_create
from reviews.actions.create import page_create

admin = User.objects.create_superuser("ada", "ada@example.com", "correct-horse-battery")
version = page_create(
    actor=admin, title="Deploy runbook", body="Build, then ship.", publish=True
)
_, editor = agent_create(
    actor=SystemActor("tests"), name="docs-bot", can_edit_pages=True, all_pages=True
)
_, reader = agent_create(actor=SystemActor("tests"), name="support-bot", all_pages=True)
print(json.dumps({
    "page": version.page.public_id,
    "editor": editor,
    "reader": reader,
    "api_key": api_token_create(actor=admin, user=admin),
    "quiet_api_key": api_token_create(actor=admin, user=admin),
}))
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[ReplicaCluster]:
    require(POSTGRES, not missing(), missing())
    built = ReplicaCluster()
    try:
        built.start()
        yield built
    finally:
        built.destroy()


@pytest.fixture(scope="module")
def seeded(cluster: ReplicaCluster) -> dict[str, str]:
    output = cluster.manage(code=SEED)
    data: dict[str, str] = json.loads(output.strip().splitlines()[-1])
    return data


def _server(cluster: ReplicaCluster, directory: Path, max_lag: int) -> QuireServer:
    return start_server(
        directory,
        env={
            "DATABASE_URL": cluster.primary.url,
            "DATABASE_REPLICA_URL": cluster.replica.url,
            "QUIRE_REPLICA_MAX_LAG_SECONDS": str(max_lag),
            "QUIRE_EMBEDDING_MODEL": "none",
            "REDIS_URL": "",
        },
    )


@pytest.fixture(scope="module")
def server(cluster: ReplicaCluster, seeded: dict[str, str]) -> Iterator[QuireServer]:
    """Quire over the cluster, with a lag bound no test reaches."""
    started = _server(cluster, cluster.root, max_lag=600)
    yield started
    started.stop()


@pytest.fixture
def replay_paused(cluster: ReplicaCluster) -> Iterator[None]:
    cluster.wait_caught_up()
    cluster.pause_replay()
    yield
    cluster.resume_replay()
    cluster.wait_caught_up()


def _rename(cluster: ReplicaCluster, page_id: str, title: str) -> None:
    """Retitle the page and its live version on the primary alone (the tests' own values)."""
    cluster.primary.sql(
        f"UPDATE wiki_page SET title = '{title}' WHERE public_id = '{page_id}';"  # noqa: S608
        f"UPDATE wiki_version v SET title = '{title}' FROM wiki_page p "
        f"WHERE v.id = p.live_version_id AND p.public_id = '{page_id}'"
    )


def _api(server: QuireServer, key: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {key}"}, timeout=HTTP_TIMEOUT
    )


def test_it_reads_an_agents_calls_from_the_replica_and_writes_their_rows_to_the_primary(
    cluster: ReplicaCluster, server: QuireServer, seeded: dict[str, str], replay_paused: None
) -> None:
    _rename(cluster, seeded["page"], "Renamed on the primary")
    mcp = MCP(server.url)
    audited = int(cluster.primary.sql("SELECT count(*) FROM wiki_auditevent"))

    for token in (seeded["reader"], seeded["editor"]):
        assert mcp.ok(token, "get_page", pageId=seeded["page"])["title"] == "Deploy runbook"
        assert [page["title"] for page in mcp.ok(token, "browse")["pages"]] == ["Deploy runbook"]

    # The replica is read-only: the calls' audit rows and the editor's read record could
    # only have been written to the primary.
    assert int(cluster.primary.sql("SELECT count(*) FROM wiki_auditevent")) == audited + 4
    assert cluster.primary.sql("SELECT version_number FROM agents_pageread") == "1"
    assert cluster.replica.sql("SELECT count(*) FROM agents_pageread") == "0"


def test_an_agent_reads_its_own_proposal_at_once(
    cluster: ReplicaCluster, server: QuireServer, seeded: dict[str, str], replay_paused: None
) -> None:
    mcp = MCP(server.url)
    proposed = mcp.ok(
        seeded["editor"],
        "append_to_page",
        pageId=seeded["page"],
        markdown="Then watch the dashboards.",
        changeSummary="Say what to do after shipping.",
    )

    source = mcp.ok(seeded["editor"], "get_page_source", pageId=seeded["page"])

    assert "Then watch the dashboards." in source["markdown"], source
    assert proposed["versionNumber"] == 2
    # The replica has not seen it: another agent reads the world before it.
    assert cluster.replica.sql("SELECT count(*) FROM wiki_version") == "1"
    assert mcp.ok(seeded["reader"], "get_page", pageId=seeded["page"])["versionNumber"] == 1


def test_a_reviewer_who_approves_reads_the_page_after_the_approval(
    cluster: ReplicaCluster, server: QuireServer, seeded: dict[str, str], replay_paused: None
) -> None:
    page = seeded["page"]
    with _api(server, seeded["api_key"]) as api:
        approved = api.post(f"/api/v1/pages/{page}/versions/2/approve", json={})
        assert approved.status_code == 200, approved.text

        live = api.get(f"/api/v1/pages/{page}/")
        waiting = api.get("/api/v1/reviews/")

    assert live.status_code == 200, live.text
    assert live.json()["versionNumber"] == 2
    assert waiting.json()["results"] == []
    # Without the pin, the answers would have come from the replica, which still shows v1.
    assert (
        cluster.replica.sql(
            "SELECT v.number FROM wiki_page p JOIN wiki_version v ON v.id = p.live_version_id"
        )
        == "1"
    )


def test_a_replica_that_lags_past_the_bound_is_skipped_with_a_log_line(
    cluster: ReplicaCluster, seeded: dict[str, str], replay_paused: None, tmp_path: Path
) -> None:
    strict = _server(cluster, tmp_path, max_lag=1)
    try:
        _rename(cluster, seeded["page"], "Renamed while the replica lags")
        time.sleep(4)  # past the bound and the check interval

        answer = MCP(strict.url).ok(seeded["reader"], "get_page", pageId=seeded["page"])
    finally:
        strict.stop()

    assert answer["title"] == "Renamed while the replica lags"
    assert "Database replica replica_1 skipped: it lags" in strict.output()


def _hidden(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


def test_a_reviewer_who_approves_on_the_web_is_sent_on_to_a_queue_without_it(
    cluster: ReplicaCluster, server: QuireServer, seeded: dict[str, str]
) -> None:
    page = seeded["page"]
    number = MCP(server.url).ok(
        seeded["editor"],
        "append_to_page",
        pageId=page,
        markdown="And tell the channel.",
        changeSummary="Say who to tell.",
    )["versionNumber"]
    review = f"/reviews/pages/{page}/v{number}/"
    cluster.wait_caught_up()
    cluster.pause_replay()
    try:
        with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
            login = browser.get("/login/")
            signed_in = browser.post(
                "/login/",
                data={
                    "username": "ada",
                    "password": "correct-horse-battery",
                    **_hidden(login.text),
                },
            )
            assert signed_in.status_code == 302, signed_in.text
            # Forget the sign-in's pin: the review page is read from the replica.
            browser.cookies.delete("quire_primary_until")
            form = browser.get(review)
            assert form.status_code == 200
            assert "Nothing is waiting for review." not in browser.get("/reviews/").text

            decided = browser.post(
                review, data={**_hidden(form.text), "action": "approve"}, follow_redirects=True
            )
        still_waiting = cluster.replica.sql(
            "SELECT v.status FROM wiki_version v JOIN wiki_page p ON p.id = v.page_id "  # noqa: S608
            f"WHERE p.public_id = '{page}' AND v.number = {number}"
        )
    finally:
        cluster.resume_replay()
        cluster.wait_caught_up()

    assert decided.status_code == 200, decided.text
    assert "quire_primary_until" in decided.history[0].headers.get("set-cookie", "")
    # Sent on to the queue, read on the primary: the replica still has it waiting.
    assert "Nothing is waiting for review." in decided.text
    assert still_waiting == "in_review"


def test_a_replica_that_is_down_is_skipped_with_a_log_line_never_an_error(
    cluster: ReplicaCluster, server: QuireServer, seeded: dict[str, str]
) -> None:
    mcp = MCP(server.url)
    mcp.ok(seeded["reader"], "get_page", pageId=seeded["page"])  # a connection to the replica
    with _api(server, seeded["quiet_api_key"]) as api:
        api.get(f"/api/v1/pages/{seeded['page']}/")
    cluster.replica.stop()
    try:
        _rename(cluster, seeded["page"], "Renamed while the replica is down")
        answer = mcp.ok(seeded["reader"], "get_page", pageId=seeded["page"])
        # A key that never wrote: its GET goes to the replica, fails there, is read again.
        with _api(server, seeded["quiet_api_key"]) as api:
            live = api.get(f"/api/v1/pages/{seeded['page']}/")
    finally:
        cluster.replica.start()

    assert answer["title"] == "Renamed while the replica is down"
    assert live.status_code == 200, live.text
    assert live.json()["title"] == "Renamed while the replica is down"
    assert "Database replica replica_1 skipped: unreachable" in server.output()
