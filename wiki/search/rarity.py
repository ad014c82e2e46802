"""Which of a question's terms the GIN index should look up for a partial hit (PostgreSQL).

A partial hit holds at least `most_of(n)` of the question's n terms, so it misses at most
n - most_of(n) of them: of any n - most_of(n) + 1 terms it holds one at least. The partial
statement therefore asks the index for the pages holding any of the n - most_of(n) + 1 rarest
terms, not any of all n, and counts every term on those pages only: the same hits, however
the terms are picked, but a common word ("new", "file") no longer makes the index return most
of the wiki (the 2,000-character question over 1,007,760 pages: bench/REPORT.md).

How rare a term is comes from PostgreSQL's own statistics of the indexed column
(`pg_stats.most_common_elems` and their frequencies for wiki_searchdocument.vector, which
ANALYZE keeps), read in the same small query that turns the terms into lexemes; a term whose
lexemes are not among the common ones is rarer than the least common listed. Without
statistics every term counts as common and the first ones are taken: slower, never wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from wiki.search.query import CONFIG, Prefix
from wiki.search_limits import search_rows

# Each phrase's frequency: the least frequent of its lexemes (a phrase needs all of them),
# each the share of index rows holding it, or the least listed share when it is not listed.
_FREQUENCIES = f"""
    WITH s AS (
        SELECT most_common_elems::text::text[] AS lexemes, most_common_elem_freqs AS shares,
               most_common_elem_freqs[array_length(most_common_elems, 1) + 1] AS least
        FROM pg_stats
        WHERE schemaname = current_schema() AND tablename = 'wiki_searchdocument'
          AND attname = 'vector' AND most_common_elems IS NOT NULL
    )
    SELECT t.n, (
        SELECT min(coalesce(s.shares[array_position(s.lexemes, x)], s.least))
        FROM unnest(tsvector_to_array(to_tsvector('{CONFIG}', t.phrase))) AS x
    )
    FROM unnest(%s::text[]) WITH ORDINALITY AS t(phrase, n) CROSS JOIN s
"""  # noqa: S608 - only constants are interpolated


def rarest(groups: Sequence[Sequence[str]], wanted: int) -> tuple[int, ...]:
    """The indexes of the `wanted` rarest of `groups` (each an OR of phrases), in order."""
    if wanted >= len(groups):
        return tuple(range(len(groups)))
    phrases = [(n, phrase) for n, group in enumerate(groups) for phrase in group]
    rows = search_rows(_FREQUENCIES, [[str(phrase) for _, phrase in phrases]])
    shares = {int(n) - 1: float(share) for n, share in rows if share is not None}
    frequency = [0.0] * len(groups)
    for position, (n, phrase) in enumerate(phrases):
        # A prefix matches many lexemes; a phrase of no lexeme, or without statistics: common.
        share = 1.0 if isinstance(phrase, Prefix) else shares.get(position, 1.0)
        # A group holds any of its phrases: at most the sum of their shares.
        frequency[n] += share
    ranked = sorted(range(len(groups)), key=lambda n: (frequency[n], n))
    return tuple(sorted(ranked[:wanted]))
