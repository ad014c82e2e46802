"""The reviewer's diff: word-level marks, escaping, invisible characters made visible."""

from __future__ import annotations

from reviews.diff import diff_text, invisible_characters, show, unified_diff


def test_it_marks_only_the_changed_words() -> None:
    diff = diff_text("We refund within 30 days.\n", "We refund within 60 days.\n")
    changed = [row for row in diff.rows if row.kind == "changed"]
    assert len(changed) == 1
    assert changed[0].old_html == "We refund within <del>30</del> days."
    assert changed[0].new_html == "We refund within <ins>60</ins> days."
    assert diff.inline[0].html == "We refund within <del>30</del><ins>60</ins> days."


def test_it_shows_added_and_removed_lines_whole() -> None:
    diff = diff_text("keep\ngone\n", "keep\nnew line\n")
    kinds = [row.kind for row in diff.rows]
    assert "deleted" in kinds and "inserted" in kinds
    assert (diff.added, diff.removed) == (1, 1)


def test_it_escapes_html_in_every_side() -> None:
    diff = diff_text("<b>old</b>\n", '<script>alert("x")</script>\n')
    html = "".join(str(row.old_html) + str(row.new_html) for row in diff.rows)
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;" in html and "alert(&quot;x&quot;)" in html


def test_it_makes_bidi_overrides_and_zero_width_spaces_visible() -> None:
    text = "pay to\u202eevil\u202c and\u200bthen\ufeff soft\u00adhyphen \u2066iso\u2069"
    html = show(text)
    for code in ("U+202E", "U+202C", "U+200B", "U+FEFF", "U+00AD", "U+2066", "U+2069"):
        assert f"\u27e6{code}\u27e7" in html
    assert "\u202e" not in html and "\u200b" not in html
    labels = invisible_characters(text)
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in labels
    assert len(labels) == 7


def test_it_flags_other_format_characters() -> None:
    # U+2060 WORD JOINER and U+061C ARABIC LETTER MARK are Cf characters outside the ranges.
    assert len(invisible_characters("a\u2060b\u061cc")) == 2
    assert invisible_characters("plain text, tabs\tand\nnewlines") == []


def test_it_folds_long_unchanged_stretches() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 50\n", "line fifty\n")
    diff = diff_text(old, new)
    skips = [row for row in diff.rows if row.kind == "skip"]
    assert [row.skipped for row in skips] == [47, 46]
    assert len(diff_text(old, new, context=None).rows) == 100


def test_it_writes_a_unified_diff() -> None:
    text = unified_diff("a\nb\n", "a\nc", old_name="v1", new_name="v2")
    assert text.splitlines() == ["--- v1", "+++ v2", "@@ -1,2 +1,2 @@", " a", "-b", "+c"]
