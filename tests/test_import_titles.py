"""A real handbook imports whole: a title too long for a title is shortened (its full text stays
in the page), and an emoji made with a zero-width joiner is an emoji, not a spoof; a joiner
between letters is still refused, in imports and at every other door."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from core.errors import InvalidArgument
from wiki.models import TITLE_MAX, Page
from wiki.validators import validate_tags, validate_title

pytestmark = pytest.mark.django_db

LONG = (
    "How to request, approve, track and close out a working-capital advance for a cross-agency "
    "interagency agreement when the partner agency's fiscal year ends before the period of "
    "performance, including the forms, the approvers and the deadlines for each step"
)
CODER = "\U0001f469\u200d\U0001f4bb"  # woman technologist: woman, ZWJ, laptop
RAINBOW_FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"  # white flag, VS16, ZWJ, rainbow
FAMILY = "\U0001f468\U0001f3fd\u200d\U0001f469\u200d\U0001f467"  # skin tone before the ZWJ


def import_folder(tmp_path: Path, files: dict[str, str]) -> tuple[str, str]:
    folder = tmp_path / "handbook"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_markdown", str(folder), "--publish", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def page(name: str) -> tuple[Page, str]:
    """The imported page and its live body."""
    found = Page.objects.select_related("live_version").get(source_path=f"handbook/{name}")
    assert found.live_version is not None
    return found, found.live_version.body


def test_it_shortens_a_heading_too_long_for_a_title_and_keeps_it_in_the_page(
    admin_user: User, tmp_path: Path
) -> None:
    assert len(LONG) > TITLE_MAX
    body = f"# {LONG}\n\nThe steps.\n"

    _out, err = import_folder(tmp_path, {"advances.md": body})

    assert err == ""
    imported, stored = page("advances.md")
    title = imported.title
    assert len(title) <= TITLE_MAX and title.endswith("…")
    assert LONG.startswith(title.removesuffix("…"))
    assert LONG[len(title) - 1] == " "  # cut between words
    assert stored == body  # verbatim: the full heading is still there


def test_it_shortens_a_frontmatter_title_and_puts_the_full_one_at_the_top_of_the_page(
    admin_user: User, tmp_path: Path
) -> None:
    _out, err = import_folder(tmp_path, {"advances.md": f"---\ntitle: {LONG}\n---\nThe steps.\n"})

    assert err == ""
    imported, stored = page("advances.md")
    assert len(imported.title) <= TITLE_MAX
    assert stored == f"# {LONG}\n\nThe steps.\n"


@pytest.mark.parametrize("emoji", [CODER, RAINBOW_FLAG, FAMILY])
def test_it_imports_a_title_holding_an_emoji_made_with_a_joiner(
    admin_user: User, tmp_path: Path, emoji: str
) -> None:
    _out, err = import_folder(tmp_path, {"team.md": f"# {emoji} Engineering team\n\nWho we are.\n"})

    assert err == ""
    assert page("team.md")[0].title == f"{emoji} Engineering team"


@pytest.mark.parametrize(
    "title",
    ["pay\u200dpal login", "\u200d\U0001f4bb laptop", f"{CODER}\u200d", "team \u200d\U0001f4bb"],
)
def test_it_still_refuses_a_joiner_outside_an_emoji_sequence(title: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        validate_title(title)
    assert "U+200D ZERO WIDTH JOINER" in refused.value.message


def test_titles_and_tags_take_emoji_made_with_a_joiner_at_every_door() -> None:
    assert validate_title(f"{CODER} Engineering") == f"{CODER} Engineering"
    assert validate_tags([f"{RAINBOW_FLAG} pride"]) == [f"{RAINBOW_FLAG} pride"]


# --- HTML entities in titles (issue 37, point 1) ------------------------------------------


def test_it_imports_a_title_with_html_entities_as_a_reader_sees_it(
    admin_user: User, tmp_path: Path
) -> None:
    _out, err = import_folder(
        tmp_path,
        {
            "vacaciones.md": "# C&oacute;mo pedir vacaciones\n\nEl formulario.\n",
            "faq.md": "---\ntitle: Q&amp;A &#8211; caf&eacute;\n---\nAnswers.\n",
        },
    )

    assert err == ""
    vacaciones, body = page("vacaciones.md")
    assert vacaciones.title == "Cómo pedir vacaciones"
    assert vacaciones.slug == "cómo-pedir-vacaciones"
    assert body.startswith("# C&oacute;mo pedir vacaciones")  # the page keeps its markdown
    faq, _ = page("faq.md")
    assert (faq.title, faq.slug) == ("Q&A \u2013 café", "qa-café")


def test_the_migration_repairs_titles_addresses_and_search_rows_imported_before(
    make_page: Callable[..., Page],
) -> None:
    import importlib

    from django.apps import apps

    from wiki.models import SearchDocument, Version
    from wiki.search import search_pages

    migration = importlib.import_module("wiki.migrations.0020_decode_title_entities")
    guide = make_page("C&oacute;mo pedir vacaciones", "El formulario.\n")
    child = make_page("Paso 1", "Primero.\n", parent=guide)
    grandchild = make_page("Detalle", "Luego.\n", parent=child)
    plain = make_page("Fish &amp; chips", "Fried.\n")
    same = make_page("Fish & chips", "Also fried.\n")
    assert guide.slug == "coacutemo-pedir-vacaciones"

    migration.decode_title_entities(apps, None)

    for row in (guide, child, grandchild, plain, same):
        row.refresh_from_db()
    assert (guide.title, guide.slug, guide.path) == (
        "Cómo pedir vacaciones",
        "cómo-pedir-vacaciones",
        "cómo-pedir-vacaciones",
    )
    assert child.path == "cómo-pedir-vacaciones/paso-1"
    assert grandchild.path == "cómo-pedir-vacaciones/paso-1/detalle"
    assert guide.live_version is not None
    assert Version.objects.get(pk=guide.live_version.pk).title == "Cómo pedir vacaciones"
    assert SearchDocument.objects.get(page=guide).title == "Cómo pedir vacaciones"
    # Two siblings whose titles now read the same keep distinct addresses.
    assert plain.title == same.title == "Fish & chips"
    assert plain.slug != same.slug
    hits = search_pages("cómo pedir vacaciones", semantic=False)
    assert hits and hits[0].public_id == guide.public_id


def test_headings_sections_and_excerpts_read_entities_as_a_reader_sees_them(
    make_page: Callable[..., Page],
) -> None:
    """An imported page keeps its markdown (`## Pol&iacute;tica`), but what an agent is shown
    of it (the outline's headings, a search hit's excerpt) reads as the rendered page does:
    `Política`; asking for the section by either spelling finds it."""
    from wiki.outline import find_section, headings
    from wiki.search import search_pages

    body = "Intro.\n\n## Pol&iacute;tica de vacaciones\n\nD&iacute;as libres: veinte.\n"
    make_page("Vacaciones", body)

    assert [h.text for h in headings(body)] == ["Política de vacaciones"]
    for wanted in ("Política de vacaciones", "Pol&iacute;tica de vacaciones"):
        [section] = find_section(body, wanted)
        assert body[section.start :].startswith("## Pol&iacute;tica")
    [hit] = search_pages("veinte", semantic=False)
    assert "&iacute;" not in hit.excerpt and "Días libres" in hit.excerpt.replace("[", "").replace(
        "]", ""
    )


def test_the_migration_decodes_entities_in_bodies_indexed_before(
    make_page: Callable[..., Page],
) -> None:
    """A document indexed before plain_text decoded entities keeps `D&iacute;as` in its text
    and excerpts until its page changes; migration 0022 decodes it, and the words are found
    as written by a reader."""
    import importlib

    from django.apps import apps

    from wiki.models import SearchDocument
    from wiki.search import search_pages

    page = make_page("Vacaciones", "D&iacute;as libres: veinte.\n")
    # As an older Quire indexed it: the entity as written.
    SearchDocument.objects.filter(page=page).update(
        body="Días libres: veinte.".replace("í", "&iacute;")
    )
    assert not search_pages("días veinte", semantic=False)

    importlib.import_module("wiki.migrations.0022_decode_body_entities").decode_body_entities(
        apps, None
    )

    assert SearchDocument.objects.get(page=page).body == "Días libres: veinte."
    [after] = search_pages("días veinte", semantic=False)
    assert after.public_id == page.public_id and "&iacute;" not in after.excerpt
