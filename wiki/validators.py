"""The rules for what a page and a version may hold, each written once.

Every door calls these through the services (and the web forms through `clean_*`), so a limit
and its message are the same for a person in a form and an agent in a tool error.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from core.errors import InvalidArgument
from wiki.credentials import refuse_credentials
from wiki.models import CHANGE_SUMMARY_MAX, MARKDOWN_MAX, TAG_MAX, TAGS_MAX, TITLE_MAX

# A question with a paragraph of context (semantic search reads it whole).
QUERY_MAX = 2000

# Neither database stores these: PostgreSQL refuses NUL in text, and a lone surrogate (half of
# a UTF-16 pair) cannot be encoded as UTF-8 at all.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")
# What a single line of visible text may not hold: control characters, bidi controls (they
# reorder what a reviewer reads) and zero-width characters (they hide differences).
_NOT_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u200b-\u200d\u2060\ufeff\u180e\ud800-\udfff]"
)
# The same in text of several lines (a reviewer's comment): line breaks and tabs are fine;
# ANSI escapes (they recolour or hide a terminal's text) and bidi controls are not.
_NOT_VISIBLE_TEXT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\u200b-\u200d\u2060\ufeff\u180e\ud800-\udfff]"
)
_CONTROL_NAMES = {
    0x00: "NULL",
    0x09: "CHARACTER TABULATION",
    0x0A: "LINE FEED",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x0D: "CARRIAGE RETURN",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
}


def character_name(char: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`: the code point and its Unicode name."""
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        name = "LONE SURROGATE"
    else:
        name = _CONTROL_NAMES.get(code, "") or unicodedata.name(char, "CONTROL CHARACTER")
    return f"U+{code:04X} {name}"


def _refuse(match: re.Match[str], *, field: str, name: str, rule: str) -> InvalidArgument:
    position = match.start() + 1
    return InvalidArgument(
        f"{name} has {character_name(match.group())} at position {position}; {rule} "
        "Remove it and try again.",
        field=field,
        detail={"field": name, "position": position, "character": f"U+{ord(match.group()):04X}"},
    )


def check_text(value: str, *, field: str, name: str = "") -> str:
    """Any text Quire stores or looks up: no NUL and no lone surrogates.

    `field` is the field the error belongs to; `name` what the message calls it (`tags[2]`).
    """
    match = _NOT_TEXT.search(value)
    if match is not None:
        rule = "text cannot hold NUL characters or lone surrogates."
        raise _refuse(match, field=field, name=name or field, rule=rule)
    return value


def check_one_line(value: str, *, field: str, name: str = "") -> str:
    """Titles, tags and agent names: one line of visible text, read the same way by everyone.

    The value comes back stripped; a position in an error counts from its first visible
    character.
    """
    value = value.strip()
    rule = (
        "titles, tags and names must be one line of visible text, without control, "
        "bidirectional or zero-width characters (a zero-width joiner only inside an emoji; "
        "joiners and non-joiners only between the letters of a script that spells with them, "
        "such as Persian or Hindi)."
    )
    return _only_visible(value, _NOT_ONE_LINE, field=field, name=name, rule=rule)


def check_visible_text(value: str, *, field: str, name: str = "", what: str = "text") -> str:
    """Comments and change summaries: visible text on one or more lines, read the same way by
    everyone (in the review screen, an email, a terminal)."""
    rule = (
        f"{what} must be visible text, without control (ANSI escape), bidirectional or "
        "zero-width characters (a zero-width joiner only inside an emoji; joiners and "
        "non-joiners only between the letters of a script that spells with them, such as "
        "Persian or Hindi)."
    )
    return _only_visible(value, _NOT_VISIBLE_TEXT, field=field, name=name, rule=rule)


def _only_visible(
    value: str, forbidden: re.Pattern[str], *, field: str, name: str, rule: str
) -> str:
    for match in forbidden.finditer(value):
        if match.group() == _ZWJ and _joins_emoji(value, match.start()):
            continue  # part of the emoji a reader sees (👩‍💻), not a hidden difference
        if match.group() in _JOINERS and joins_letters(value, match.start()):
            continue  # spelling: Persian's plural -ha, Hindi's and Bengali's conjuncts
        raise _refuse(match, field=field, name=name or field, rule=rule)
    return value


_ZWJ = "\u200d"
_JOINERS = ("\u200c", _ZWJ)
# The scripts whose spelling uses ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER between
# letters (Unicode's chapters on them; RFC 5892's CONTEXTJ rules name the same places): Arabic
# (Persian, Urdu, Kurdish), Syriac, N'Ko, Mongolian, the Indic scripts, Sinhala and Myanmar.
# Code point blocks by script: a joiner is accepted between two letters of one of them.
_JOINING_SCRIPTS: tuple[tuple[int, int, str], ...] = (
    (0x0600, 0x06FF, "Arabic"),
    (0x0700, 0x074F, "Syriac"),
    (0x0750, 0x077F, "Arabic"),
    (0x07C0, 0x07FF, "Nko"),
    (0x0860, 0x086F, "Syriac"),
    (0x0870, 0x08FF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0A00, 0x0A7F, "Gurmukhi"),
    (0x0A80, 0x0AFF, "Gujarati"),
    (0x0B00, 0x0B7F, "Oriya"),
    (0x0B80, 0x0BFF, "Tamil"),
    (0x0C00, 0x0C7F, "Telugu"),
    (0x0C80, 0x0CFF, "Kannada"),
    (0x0D00, 0x0D7F, "Malayalam"),
    (0x0D80, 0x0DFF, "Sinhala"),
    (0x1000, 0x109F, "Myanmar"),
    (0x1800, 0x18AF, "Mongolian"),
    (0xA8E0, 0xA8FF, "Devanagari"),
    (0xA9E0, 0xA9FF, "Myanmar"),
    (0xAA60, 0xAA7F, "Myanmar"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFC, "Arabic"),
)


def _joining_script(char: str) -> str:
    """The script of `char` when it is a letter or a mark (a vowel sign, a virama) of a script
    that uses joiners; "" otherwise (a space, a digit, a Latin letter, a joiner)."""
    if not unicodedata.category(char).startswith(("L", "M")):
        return ""
    code = ord(char)
    for low, high, script in _JOINING_SCRIPTS:
        if low <= code <= high:
            return script
    return ""


def joins_letters(value: str, at: int) -> bool:
    """Whether the joiner at `at` stands between two letters (or marks) of one cursive script
    (Persian's ZWNJ between "ketab" and the plural "ha"), or beside a virama in an Indic one
    (Hindi's half forms, Bengali's ya-phala after ra, Malayalam's visible virama before a
    space). Not at either end, not beside a space (but after a virama), another joiner or a
    letter of another script, and never in Latin, Cyrillic, Greek or CJK text, where it would
    only hide a difference ("pay\u200cpal")."""
    if not 0 < at < len(value) - 1:
        return False
    before, after = value[at - 1], value[at + 1]
    script = _joining_script(before)
    if script and unicodedata.combining(before) == _VIRAMA:
        return True  # a virama's joiner shows it or the conjunct, before a space too
    if not script or _joining_script(after) != script:
        return False
    # In a cursive script it breaks or makes a join; in the others it changes only a
    # conjunct, so a virama must follow (between two consonants it renders as nothing).
    return script in _CURSIVE or unicodedata.combining(after) == _VIRAMA


_IDLE_JOINER = re.compile(
    r"^[\u200c\u200d]+|[\u200c\u200d]+$|(?<=\s)[\u200c\u200d]+|[\u200c\u200d]+(?=\s)"
)


def without_idle_joiners(text: str) -> str:
    """`text` without the joiners that join nothing, at its ends or beside a space (but after
    a virama, where one shows it): typed by habit in Persian before a space, invisible, and
    refused by `check_one_line`. For imports, which cannot ask the writer to remove them."""
    return _IDLE_JOINER.sub(
        lambda m: m[0] if joins_letters(text, m.start()) and m.end() < len(text) else "", text
    )


# The canonical combining class of a virama (Devanagari ्, Malayalam ്).
_VIRAMA = 9
# The scripts whose letters join their neighbours (the rest of _JOINING_SCRIPTS use joiners
# beside a virama).
_CURSIVE = frozenset({"Arabic", "Syriac", "Nko", "Mongolian"})
# The blocks emoji come from (pictographs, dingbats, arrows and other symbols, skin tones).
_EMOJI = re.compile(
    "[\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2"
    "\u25aa-\u27bf\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299"
    "\U0001f000-\U0001faff]"
)
_EMOJI_PRESENTATION = "\ufe0f"


def _joins_emoji(value: str, at: int) -> bool:
    """Whether the joiner at `at` joins two emoji into one (👩 + 💻, 🏳️ + 🌈): an emoji,
    perhaps with its presentation selector, before it, and an emoji after it."""
    before = value[:at].removesuffix(_EMOJI_PRESENTATION)
    after = value[at + 1 : at + 2]
    return bool(before) and bool(_EMOJI.fullmatch(before[-1])) and bool(_EMOJI.fullmatch(after))


def validate_title(title: Any) -> str:
    if not isinstance(title, str):
        raise InvalidArgument("title must be a string of 1 to 200 characters.", field="title")
    title = check_one_line(title, field="title")
    if not 1 <= len(title) <= TITLE_MAX:
        raise InvalidArgument(
            f"title must be 1 to {TITLE_MAX} characters; it has {len(title)}. "
            "Shorten it and try again.",
            field="title",
        )
    refuse_credentials(title, field="title")
    return title


def validate_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise InvalidArgument("tags must be a list of strings.", field="tags")
    cleaned: list[str] = []
    for index, tag in enumerate(tags):
        tag = check_one_line(tag, field="tags", name=f"tags[{index}]")
        if not tag:
            continue
        refuse_credentials(tag, field="tags", name=f"tags[{index}]")
        if len(tag) > TAG_MAX:
            raise InvalidArgument(
                f"each tag must be 1 to {TAG_MAX} characters; {tag[:20]!r}... has {len(tag)}.",
                field="tags",
            )
        if tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > TAGS_MAX:
        raise InvalidArgument(
            f"a page can have at most {TAGS_MAX} tags; you gave {len(cleaned)}. "
            "Keep the most useful ones.",
            field="tags",
        )
    return cleaned


def validate_markdown(text: Any, *, field: str = "markdown", required: bool = False) -> str:
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise InvalidArgument(f"{field} must be a string of markdown.", field=field)
    text = check_text(text, field=field).replace("\r\n", "\n")
    if len(text) > MARKDOWN_MAX:
        raise InvalidArgument(
            f"{field} can be at most {MARKDOWN_MAX:,} characters; it has {len(text):,}. "
            "Split the content over several pages.",
            field=field,
        )
    if required and not text.strip():
        raise InvalidArgument(f"{field} must not be empty.", field=field)
    # Every door's markdown passes here (proposals, direct publishes, imports, a reviewer's
    # edit): a credential is refused before anything is stored.
    refuse_credentials(text, field=field)
    return text


_CONFLICT_MARKER = re.compile(r"^(<<<<<<<|=======|>>>>>>>)( |$)", re.MULTILINE)


def validate_resolved_markdown(text: Any) -> str:
    """Markdown that came out of a three-way merge, with every conflict resolved."""
    text = validate_markdown(text)
    if _CONFLICT_MARKER.search(text):
        raise InvalidArgument(
            "the text still has conflict markers (<<<<<<<, =======, >>>>>>>). Keep the lines "
            "you want, delete the markers, then save.",
            field="markdown",
        )
    return text


def validate_change_summary(summary: Any, *, required: bool = False) -> str:
    if summary is None:
        summary = ""
    if not isinstance(summary, str):
        raise InvalidArgument("changeSummary must be a string.", field="change_summary")
    summary = " ".join(check_text(summary, field="change_summary", name="changeSummary").split())
    if len(summary) > CHANGE_SUMMARY_MAX:
        raise InvalidArgument(
            f"the change summary can be at most {CHANGE_SUMMARY_MAX} characters; "
            f"it has {len(summary)}. Say it in one sentence.",
            field="change_summary",
        )
    if required and not summary:
        raise InvalidArgument(
            "a change summary is required: say in one sentence what you changed and why.",
            field="change_summary",
        )
    refuse_credentials(summary, field="change_summary", name="changeSummary")
    return check_visible_text(
        summary, field="change_summary", name="changeSummary", what="a change summary"
    )


def validate_query(query: Any, *, required: bool = True) -> str:
    """A search query: its words, with runs of white space folded, 1 to QUERY_MAX characters."""
    if query is None:
        query = ""
    if not isinstance(query, str):
        raise InvalidArgument("query must be a string of words.", field="query")
    query = " ".join(check_text(query, field="query").split())
    if len(query) > QUERY_MAX or (required and not query):
        raise InvalidArgument(
            f"query must be 1 to {QUERY_MAX} characters; it has {len(query)}. "
            "Use a few distinctive words.",
            field="query",
        )
    return query
