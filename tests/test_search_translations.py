"""Questions in the languages a wiki holds find their page (issue 49 point 4): on the tldr
pages in every language they are translated into (966 pages in 40 folders, as
`bench/search_quality.py --corpus translations` builds), questions in 12 languages
(tests/question_sets.py's TRANSLATED_QUESTIONS) find their pages with the default (English)
model: Spanish and French words match by their stems (wiki.search.query.with_stems) and weigh
more than the English model's reading of them (FOREIGN_KEYWORD_WEIGHT), while English pages
keep the default model's cost; the other languages' figures, and what each gets, are in
docs/search.md (`for_language`: stems, Korean particles, partial hits on a third of a
question's words).

Measured (docs/search.md), hybrid MRR before / after: on PostgreSQL, Spanish 0.571 / 0.664
(the issue's 0.6 met) and French 0.603 / 0.731; on SQLite, whose bm25 ranks differently,
Spanish 0.562 / 0.617 (with wiki.search.backends.fts5_relevance) and French 0.596 / 0.692.
The bars are under what each reaches now and over what both reached before.

Like the question sets, they run on SQLite and on PostgreSQL with pgvector (CI's pgvector
step), not on a PostgreSQL without it.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from agents.models import Agent
from wiki.semantic import vector_store

from .conftest import CORPUS
from .prerequisites import PGVECTOR, require, require_corpus
from .question_sets import TLDR_TRANSLATED, TRANSLATED_QUESTIONS, Question, measure
from .test_search_question_sets import hybrid, import_and_embed, keyword_only

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

TLDR = CORPUS / "tldr-pages.tar.gz"


@pytest.fixture(autouse=True)
def _not_on_postgresql_without_pgvector(db: Any) -> None:
    if connection.vendor == "postgresql":
        require(
            PGVECTOR,
            vector_store() == "pgvector",
            "on PostgreSQL the translations run with pgvector (CI's pgvector step)",
        )


@pytest.fixture
def translations(admin_user: User, tmp_path: Path) -> tuple[Agent, str]:
    require_corpus(TLDR)
    ends = tuple(end for _, end in TLDR_TRANSLATED)
    with tarfile.open(TLDR) as archive:
        members = [
            m for m in archive.getmembers() if m.name.startswith("pages") and m.name.endswith(ends)
        ]
        archive.extractall(tmp_path / "tldr", members=members, filter="data")
    return import_and_embed(tmp_path / "tldr", admin_user)


def _asked(client: Client, corpus: tuple[Agent, str], questions: list[Question]) -> Any:
    agent, token = corpus
    answers = [(hybrid(client, token, query), expected) for query, expected in questions]
    words = [(keyword_only(agent, query), expected) for query, expected in questions]
    return {"hybrid": measure(answers), "keyword-only": measure(words)}


# The bars per language folder: (hybrid MRR, keyword-only MRR), each a little under the
# weaker database's figure (docs/search.md's table), and over what the code before the
# per-language stems, particles and partial hits reached where they raised it (German,
# Chinese, Japanese, Korean, Russian, Arabic, Persian, Hindi). Korean on PostgreSQL (0.578)
# and Hindi on SQLite (0.599) stay under the 0.6.
BARS: dict[str, tuple[float, float]] = {
    "es": (0.6, 0.55),
    "fr": (0.65, 0.63),
    "de": (0.635, 0.4),
    "pt_BR": (0.6, 0.43),
    "it": (0.62, 0.5),
    "zh": (0.66, 0.66),
    "ja": (0.7, 0.7),
    "ko": (0.55, 0.55),
    "ru": (0.64, 0.64),
    "ar": (0.6, 0.6),
    "fa": (0.68, 0.68),
    "hi": (0.58, 0.57),
}


def test_questions_in_each_language_find_their_pages_among_the_translations(
    client: Client, translations: tuple[Agent, str], settings: Any
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 100_000  # 190 questions over MCP in a few seconds
    measured = {
        folder: _asked(client, translations, questions)
        for folder, questions in TRANSLATED_QUESTIONS.items()
    }
    print(measured)  # shown with -s
    under = {
        folder: (figures["hybrid"]["mrr"], figures["keyword-only"]["mrr"], BARS[folder])
        for folder, figures in measured.items()
        if figures["hybrid"]["mrr"] < BARS[folder][0]
        or figures["keyword-only"]["mrr"] < BARS[folder][1]
    }
    assert not under, under
