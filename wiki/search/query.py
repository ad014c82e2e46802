"""A question parsed once (`parse_query`: web-search syntax, stop words, words typed without
spaces) and written as each engine's match expression."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.contrib.postgres.search import SearchQuery

from wiki.indexed_text import CJK, CJK_GAP, space_cjk

CONFIG = "english"


MAX_TERMS = 32


@dataclass
class ParsedQuery:
    """AND of groups, each an OR of phrases; `excluded` phrases must not appear."""

    groups: list[list[str]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    # How many groups are CJK character pairs that likely span two words (see `cjk_terms`):
    # a page holding most of a question's terms need not hold those.
    spanning: int = 0
    # Whether a partial hit needs a third of the terms only, not more than half (`loose`).
    loose: bool = False


CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


_TOKEN = re.compile(r'(?P<neg>-?)"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+)')


# PostgreSQL's `english` stop words (its snowball list): they need not match, on either
# database. A query made only of them keeps them (and finds nothing on PostgreSQL).
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now
    """.split()
)


# What is left of an English contraction once its apostrophe splits it: "I'm", "we've".
CONTRACTION_PARTS = frozenset({"m", "re", "ve", "ll", "d", "s", "t", "n"})


WORD_PART = re.compile(r"[^\W_]+")


def word_parts(word: str) -> list[str]:
    """The parts of `word` between punctuation that carry meaning, each once, in order.

    Stop words and the remains of contractions are left out, so "I'm" has none, "1:1" is
    ["1"] and "ssh-keygen" is ["ssh", "keygen"].
    """
    apostrophe = "'" in word or "\u2019" in word
    dropped = STOP_WORDS | CONTRACTION_PARTS if apostrophe else STOP_WORDS
    found = WORD_PART.findall(word)
    parts = dict.fromkeys(part for part in found if part.lower() not in dropped)
    return list(parts)


def parse_query(query: str) -> ParsedQuery:
    """Parse web-search syntax; terms without a letter or digit are dropped.

    `OR` joins the two terms either side of it when neither is an exclusion, and is
    ignored otherwise; it binds tighter than the implicit AND: `a b OR c d` means
    a AND (b OR c) AND d.
    """
    parsed = ParsedQuery()
    stop_words: list[str] = []
    last_was_positive = or_pending = False
    terms = 0
    # A NUL ends an FTS5 string early and PostgreSQL refuses it in text.
    for match in _TOKEN.finditer(CONTROL_CHARS.sub(" ", query)):
        negated = bool(match["neg"])
        text = match["phrase"]
        if text is None:
            text = match["word"]
            if text.lower() == "or":
                or_pending = last_was_positive
                continue
            if text.startswith("-") and len(text) > 1:
                negated, text = True, text[1:]
        if not any(ch.isalnum() for ch in text) or terms >= MAX_TERMS:
            continue
        terms += 1
        phrase = space_cjk(" ".join(text.split()))
        parts = word_parts(text) if match["word"] is not None else [text]
        if match["word"] is not None and not negated and not parts:
            stop_words.append(phrase)
            last_was_positive, or_pending = False, False
            continue
        bare = match["word"] is not None and not negated and not or_pending
        split = cjk_terms(parts) if bare else None
        if split:
            # A question typed without spaces (Japanese, Chinese): its words, each needed.
            pieces, spanning = split
            pieces = pieces[: max(1, MAX_TERMS - len(parsed.groups))]
            parsed.groups.extend([space_cjk(piece)] for piece in pieces)
            parsed.spanning += min(spanning, len(pieces) // 2)
            # An OR beside it would join one of its pieces only: it is ignored.
            last_was_positive, or_pending = False, False
            continue
        if negated:
            parsed.excluded.append(phrase)
        elif or_pending or len(parts) == 1:
            alternatives = [phrase]
            if match["word"] is not None and parts[0] != "".join(WORD_PART.findall(text)):
                alternatives.append(space_cjk(parts[0]))
            if or_pending:
                parsed.groups[-1].extend(alternatives)
            else:
                parsed.groups.append(alternatives)
        else:
            # "1:1" or "ssh-keygen": each part must appear, or the word as the engine's
            # tokenizer keeps it whole ("archive.tar.gz" is one token on PostgreSQL).
            parsed.groups.extend([space_cjk(part), phrase] for part in parts)
        last_was_positive, or_pending = not negated, False
    if not parsed.groups:
        parsed.groups = [[word] for word in stop_words]
    return parsed


# A run of CJK characters up to this long is searched as one word (the phrase of its
# characters); a longer one is taken for a question typed without spaces and split.
CJK_WORD_MAX = 4


_CJK_RUN = re.compile(f"[{CJK}]+")


_HANGUL = re.compile("[\uac00-\ud7af]+")


# Chinese question words and sentence-final particles, left out of a question as English stop
# words are ("如何删除文件" needs 删除 and 文件, not 如何): only those that are never part of
# another word a question would ask for.
_CJK_STOP_WORDS = re.compile(
    "为什么|怎么样|如何|怎么|怎样|什么|哪些|哪个|哪里|是否|能否|可以|请问|我想|我要|[吗呢吧]"
)


# Scripts a CJK run is split between: hiragana (with its marks), katakana (with the
# prolonged sound mark), Hangul, and Han (with the iteration mark).
_CJK_SCRIPTS = re.compile(
    "(?P<hiragana>[\u3041-\u309f]+)|(?P<katakana>[\u30a0-\u30ff]+)"
    "|(?P<hangul>[\uac00-\ud7af]+)|(?P<han>[^\u3041-\u30ff\uac00-\ud7af]+)"
)


def cjk_terms(parts: Sequence[str]) -> tuple[list[str], int] | None:
    """The terms of a word holding a run of more than CJK_WORD_MAX CJK characters, or CJK
    characters and others (a question typed without spaces, "ファイルを圧縮する方法", "如何压缩
    文件", "如何使用tar命令"), and how many of them likely span two words; None for any other
    word, searched as today.

    No dictionary: the run is cut where its script changes (katakana words, Han words,
    Hangul), hiragana left out as particles and endings (を, する, には), unless the run has
    nothing else, and Chinese question words (如何, 怎么, 吗: `_CJK_STOP_WORDS`); a Han
    stretch longer than two characters becomes its overlapping pairs (Chinese words are
    mostly two characters: 删除文件 is 删除 除文 文件), of which about every other one spans
    two words. Text between the runs (Latin letters, digits) stays, and every run of the
    word is cut so ("如何使用tar命令": 使用 tar 命令).
    """
    runs = [run for part in parts for run in _CJK_RUN.findall(part)]
    mixed = any(_CJK_RUN.sub("", part) for part in parts if _CJK_RUN.search(part))
    if not any(_HANGUL.sub("", run) for run in runs):
        return None  # Korean, written with spaces, keeps its words whole ("tar로")
    if not (mixed or any(len(run) > CJK_WORD_MAX for run in runs)):
        return None
    terms: list[str] = []
    spanning = 0
    for part in parts:
        start = 0
        for run in _CJK_RUN.finditer(part):
            terms += WORD_PART.findall(part[start : run.start()])
            start = run.end()
            pieces = [m for m in _CJK_SCRIPTS.finditer(run[0]) if m.lastgroup != "hiragana"]
            if not pieces:
                terms.append(run[0])
            for piece in pieces:
                if piece.lastgroup != "han":
                    terms.append(piece[0])
                    continue
                if len(piece[0]) == 1 and _okurigana_after(run[0], piece.end()):
                    # A Japanese verb's or adjective's stem ("探す", "大きい"), written with
                    # other endings in the pages: a page need not hold it.
                    spanning += 1
                for text in _CJK_STOP_WORDS.split(piece[0]):
                    if len(text) <= 2:
                        terms += [text] if text else []
                        continue
                    pairs = [text[n : n + 2] for n in range(len(text) - 1)]
                    terms += pairs
                    spanning += len(pairs) // 2
        terms += WORD_PART.findall(part[start:])
    unique = list(dict.fromkeys(term for term in terms if term.lower() not in STOP_WORDS))
    if not unique:
        return None  # only question words: searched as they are
    return unique, min(spanning, len(unique) // 2)


def _okurigana_after(run: str, end: int) -> bool:
    return end < len(run) and "\u3041" <= run[end] <= "\u309f"


def _fts5_string(phrase: str) -> str:
    quoted = '"' + phrase.replace('"', '""') + '"'
    return quoted + " *" if isinstance(phrase, Prefix) else quoted


class Prefix(str):
    """A term matched as the start of a word (`with_stems`), not as a whole word."""

    __slots__ = ()


# Languages written in Latin letters whose words change their endings and that the index
# does not stem (it stems English only): a word of a question in one of them also matches
# the words starting with its stem, its ending cut (`with_stems`), so "buscar" finds
# "busca" and "archivos" finds "archivo". (SQLite also ranks their pages by how often the
# body holds the words: wiki.search.backends.fts5_relevance.)
INFLECTED = frozenset({"es", "fr", "pt", "it", "ca"})


def _longest_first(endings: str) -> tuple[str, ...]:
    return tuple(sorted(endings.split(), key=len, reverse=True))


# The endings cut, longest first: plurals, the verbs' infinitives and participles, the
# commonest noun and adjective endings.
_ENDINGS = _longest_first(
    """
    aciones iciones amientos imientos amiento imiento ación ición ations ation ements ement
    mente ables ibles able ible ando iendo ante antes ados adas idos idas ado ada ido ida ées
    ée és er ar ir re as os es is us a e o s
    """
)


# A stem keeps at least this many letters: shorter ones start too many words.
STEM_MIN = 4


@dataclass(frozen=True)
class Inflection:
    """How a language's words change: the `endings` (longest first) and `articles` (words
    written onto the next one, Arabic's "ال" and "وال") cut from a word, the fewest letters
    its stem keeps (`least`), and the words a page may write onto any word (`onto`)."""

    endings: tuple[str, ...]
    least: int = STEM_MIN
    articles: tuple[str, ...] = ()
    onto: tuple[str, ...] = ()


# Every language a question's words are stemmed in (`with_stems`), the index stemming English
# only. Issue 49 point 4, measured on the tldr translations (docs/search.md).
INFLECTIONS: dict[str, Inflection] = {
    **{language: Inflection(_ENDINGS) for language in INFLECTED},
    # Russian and Ukrainian: the cases of nouns and adjectives, the verbs' persons and
    # infinitives ("свободного" finds "свободном", "папки" "папку").
    **{
        language: Inflection(
            _longest_first(
                "ого ему ими ыми ая яя ое ее ой ей ий ый ую юю их ых ом ем ами ями ах ях ов ев "  # noqa: RUF001
                "ам ям ать ять ить еть уть ться ются ется ает яет ают яют ует уют ешь ишь ет "
                "ит ут ют ал ял ил ла ли ло ась ось ись ся сь а я о е ы и у ю ь і ї"  # noqa: RUF001
            )
        )
        for language in ("ru", "uk")
    },
    # Arabic: the article and the conjunction or preposition written onto it ("الملفات" is
    # "ملف" with the article and the plural), and the plural and feminine endings; a page
    # writes the article, "and", "with" or "for" onto a word ("لملف": for a file).
    "ar": Inflection(
        _longest_first("ات ون ين ان ها ية ة ه ي"),  # noqa: RUF001
        least=3,
        articles=_longest_first("وال بال كال فال لل ال"),
        onto=("ال", "ل", "ب", "و"),
    ),
    # Persian: the plural and the ezafe ("کانتینرهای" finds "کانتینر", "فضای" "فضا").
    "fa": Inflection(_longest_first("هایی های ها ان ات یی ای ی"), least=3),  # noqa: RUF001
    # Hindi: the verbs' infinitives and tenses, the plurals ("बनाना" finds "बनाता" and "बनाएँ",
    # "कंटेनरों" "कंटेनर"), counted in code points (a vowel sign is one).
    "hi": Inflection(_longest_first("ाएं ाएँ ियों ियां ों ें ना नी ने ता ती ते ा ी े ं ँ"), least=3),
}


def stem(word: str, language: str = "es") -> str | None:
    """`word` without its inflected ending (and article), or None when it has none to cut
    (or is not made of letters only)."""
    inflection = INFLECTIONS.get(language)
    lower = word.lower()
    if inflection is None or not _letters(lower):
        return None
    cut = lower
    for article in inflection.articles:
        if cut.startswith(article) and len(cut) - len(article) >= inflection.least:
            cut = cut[len(article) :]
            break
    for ending in inflection.endings:
        if cut.endswith(ending) and len(cut) - len(ending) >= inflection.least:
            cut = cut[: -len(ending)]
            break
    return cut if cut != lower else None


def _letters(word: str) -> bool:
    """Whether `word` is letters only, with their marks (Devanagari's vowel signs)."""
    return bool(word) and all(unicodedata.category(ch)[0] in "LM" for ch in word)


# Korean particles and verb endings written onto a word ("파일을", "검색하기", "차지하는지"):
# a Korean word of a question also matches without them, twice over at most ("파일들을"),
# keeping two syllables at least.
_KOREAN_ENDINGS = _longest_first(
    """
    하는지 하는 하기 하게 하고 해서 하여 합니다 하면 되는 되어 에서 에게 으로 부터 까지 보다 처럼
    는지 로 을 를 이 가 은 는 의 에 도 와 과 기 들
    """
)


def korean_stem(word: str) -> str | None:
    """`word` (Hangul) without the particles and endings written onto it, or None."""
    if not word or not _HANGUL.fullmatch(word):
        return None
    cut = word
    for _ in range(2):
        ending = next((e for e in _KOREAN_ENDINGS if cut.endswith(e)), None)
        if ending is None or len(cut) - len(ending) < 2:
            break
        cut = cut[: -len(ending)]
    return cut if cut != word else None


def for_language(parsed: ParsedQuery, language: str) -> ParsedQuery:
    """`parsed` as a question in `language` is searched: its words with their stems
    (`with_stems`), and for a language neither English nor INFLECTED, partial hits holding a
    third of its terms (`loose`).

    Such a question is found by its words alone, the English model reading little of it, and
    holds words no stop-word list leaves out ("на", "در", "की"): a page holding more than half
    of them was too rare, and Korean, Japanese, Russian, Persian, German and Chinese questions
    found nothing (issue 49 point 4, docs/search.md). Spanish, French, Portuguese, Italian
    and Catalan keep more than half: their stems match most words, and a third put
    Portuguese pages lower (hybrid MRR 0.639 to 0.597 on SQLite)."""
    stemmed = with_stems(without_function_words(parsed, language), language)
    loose = language not in INFLECTED and language not in ("en", "")
    return replace(stemmed, loose=loose) if loose else stemmed


# The commonest function words of Russian and Persian, left out of a question as English stop
# words are: a question in either needs a third of its terms only (`for_language`), and a page
# holding "на" and "в" held a third of a Russian one. (Measured on the tldr translations: not
# German, Arabic or Hindi, whose function words, held by the pages in that language only,
# helped more than they hurt: docs/search.md.)
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "ru": frozenset("в во на по из с со и к о об у за для от до как какие что это".split()),  # noqa: RUF001
    "fa": frozenset("در از به را یک که و با این آن است چطور چگونه".split()),
}


def without_function_words(parsed: ParsedQuery, language: str) -> ParsedQuery:
    """`parsed` without the terms that are FUNCTION_WORDS of `language` (all of them when
    nothing else is left)."""
    words = FUNCTION_WORDS.get(language)
    if not words:
        return parsed
    kept = [g for g in parsed.groups if not (len(g) == 1 and g[0].lower() in words)]
    return replace(parsed, groups=kept) if kept else parsed


def with_stems(parsed: ParsedQuery, language: str) -> ParsedQuery:
    """`parsed` with each single word of a question in a language of INFLECTIONS also
    matched by its stem as a prefix (`Prefix`), or by the stems the language's articles
    start; a Korean word also without its particles (the phrase of its first syllables);
    any other question as it is."""
    if language == "ko":
        return _with_korean_stems(parsed)
    inflection = INFLECTIONS.get(language)
    if inflection is None:
        return parsed
    groups = []
    for group in parsed.groups:
        words = [phrase for phrase in group if " " not in phrase]
        stems = [stem(word, language) for word in words]
        found = [s for s in dict.fromkeys(stems) if s]
        if inflection.onto:
            # Its stem, or the word itself, alone or with a word written onto it.
            bare = [
                s or w.lower()
                for s, w in zip(stems, words, strict=True)
                if _letters(s or w) and len(s or w) >= inflection.least
            ]
            found = list(dict.fromkeys(bare + [a + b for b in bare for a in inflection.onto]))
        groups.append(group + [Prefix(s) for s in found])
    return replace(parsed, groups=groups)


def _with_korean_stems(parsed: ParsedQuery) -> ParsedQuery:
    groups = []
    for group in parsed.groups:
        stems = [korean_stem(phrase.replace(CJK_GAP, "")) for phrase in group]
        found = [space_cjk(s) for s in dict.fromkeys(stems) if s]
        groups.append(group + found)
    return replace(parsed, groups=groups)


def fts5_match(parsed: ParsedQuery) -> str:
    """The FTS5 MATCH expression; every term is a quoted string, so it always parses."""
    groups = ["(" + " OR ".join(_fts5_string(p) for p in group) + ")" for group in parsed.groups]
    expression = "(" + " AND ".join(groups) + ")"
    for phrase in parsed.excluded:
        expression += " NOT " + _fts5_string(phrase)
    return expression


def pg_search_queries(parsed: ParsedQuery) -> tuple[SearchQuery, SearchQuery | None]:
    """The tsqueries to match and to exclude: `phraseto_tsquery` per term, joined by && and ||.

    Exclusions are a separate query (used as NOT @@) so that a term reduced to nothing by
    the stop-word list never turns "the -foo" into "everything without foo".
    """

    def term(phrase: str) -> SearchQuery:
        return SearchQuery(phrase, config=CONFIG, search_type="phrase")

    def any_of(phrases: list[str]) -> SearchQuery:
        query = term(phrases[0])
        for phrase in phrases[1:]:
            query = query | term(phrase)  # type: ignore[assignment]
        return query

    matched = any_of(parsed.groups[0])
    for group in parsed.groups[1:]:
        matched = matched & any_of(group)  # type: ignore[assignment]
    return matched, any_of(parsed.excluded) if parsed.excluded else None
