"""Which preferences of a query's judgment groups a ranking fulfils (trec_eval's counts).

The judged documents of a query are numbered: the retrieved ones by rank (``0..R-1``, ``R``
judged and retrieved), then the others by document id. A ranking fulfils a preference for
``a`` over ``b`` when ``a`` is ranked above ``b``. A judgment group with one sub-group is a
list of equivalence classes (documents of equal level), each preferred to every lower one;
a group with several sub-groups is a preference matrix closed by transitivity. Each group
counts its preferences as fulfilled or possible among the retrieved documents (``ret``),
with exactly one retrieved (``imp``, the retrieved one fulfilling it), or with neither
retrieved; and its relevant (level above 0) and non-relevant (level 0 or below) documents.
A matrix of all groups' preferences (how many groups prefer ``i`` to ``j``) is kept for the
pairwise measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._prefs_io import Preference

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass
class _Group:
    """The counts of one judgment group, and its preferences for the recalculations."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    classes: list[IntArray] | None = None  # equivalence classes, highest level first
    matrix: BoolArray | None = None  # matrix[i, j]: i preferred to j
    levels: FloatArray | None = None  # each document's level in the matrix (-1: none)


@dataclass
class _QueryPrefs:
    """Everything the preference measures of one query need."""

    groups: list[_Group]
    counts: IntArray  # counts[i, j]: how many groups prefer document i to document j
    judged_ret: int
    judged: int


def _ranking(docs: Mapping[str, float] | None, max_per_query: int | None) -> list[str]:
    """Score descending, ties by document id ascending (trec_eval's order for preferences)."""
    if not docs:
        return []
    ranked = [doc for doc, _ in sorted(docs.items(), key=lambda item: (-item[1], item[0]))]
    return ranked if max_per_query is None else ranked[:max_per_query]


def _numbers(prefs: Sequence[Preference], ranking: Sequence[str]) -> tuple[dict[str, int], int]:
    judged = {p.doc for p in prefs}
    retrieved = [doc for doc in ranking if doc in judged]
    number = {doc: index for index, doc in enumerate(retrieved)}
    for doc in sorted(judged - number.keys()):
        number[doc] = len(number)
    return number, len(retrieved)


def _classes_counts(
    group: _Group, classes: list[tuple[float, IntArray]], ret: int, counts: IntArray
) -> None:
    for index, (level, ranks) in enumerate(classes):
        retrieved = int((ranks < ret).sum())
        if level > 0.0:
            group.num_rel += len(ranks)
            group.num_rel_ret += retrieved
        else:
            group.num_nonrel += len(ranks)
            group.num_nonrel_ret += retrieved
        for _, lower in classes[index + 1 :]:
            a, b = ranks[:, None], lower[None, :]
            counts[np.ix_(ranks, lower)] += 1
            above = a < b
            a_ret = a < ret
            b_ret = b < ret
            group.ful_ret += int((above & b_ret).sum())
            group.ful_imp += int((above & ~b_ret & a_ret).sum())
            group.poss_ret += int((~above & a_ret).sum())
            group.poss_imp += int((~above & ~a_ret & b_ret).sum())
            group.notoccur += int((~a_ret & ~b_ret).sum())
    group.classes = [ranks for _, ranks in classes]


def _closure(matrix: BoolArray) -> BoolArray:
    """The transitive closure of a preference matrix (reflexive while it is computed)."""
    closed = matrix | np.eye(len(matrix), dtype=bool)
    while True:
        weights = closed.astype(np.float32)
        step = (weights @ weights) > 0
        if np.array_equal(step, closed):
            break
        closed = step
    np.fill_diagonal(closed, False)
    return closed


def _matrix_counts(
    group: _Group,
    prefs: Sequence[Preference],
    numbers: Mapping[str, int],
    size: int,
    ret: int,
    where: tuple[Path | str, str, str],
) -> BoolArray:
    path, query, name = where
    matrix = np.zeros((size, size), dtype=bool)
    levels = np.full(size, -1.0)
    for _, members in groupby(prefs, key=lambda p: p.sub_group):
        items = list(members)
        ranks = np.array([numbers[p.doc] for p in items], dtype=np.int64)
        for p, rank in zip(items, ranks.tolist(), strict=True):
            old = levels[rank]
            if (old > 0.0 and p.level == 0.0) or (old == 0.0 and p.level > 0.0):
                raise JudgmentError(
                    f"document {p.doc!r} is non-relevant (level 0) and relevant in judgment "
                    f"group {name!r}",
                    path=path,
                    line=p.line,
                    item_id=query,
                )
            levels[rank] = p.level
        values = np.array([p.level for p in items])
        matrix[np.ix_(ranks, ranks)] |= values[:, None] > values[None, :]
    matrix = _closure(matrix)
    if (matrix & matrix.T).any():
        i, j = (int(k) for k in np.argwhere(matrix & matrix.T)[0])
        docs = {rank: doc for doc, rank in numbers.items()}
        raise JudgmentError(
            f"judgment group {name!r} prefers {docs[i]!r} to {docs[j]!r} and the reverse",
            path=path,
            item_id=query,
        )
    top = matrix[:ret, :ret]
    group.ful_ret = int(np.triu(top, 1).sum())
    group.poss_ret = int(np.tril(top, -1).sum())
    group.ful_imp = int(matrix[:ret, ret:].sum())
    group.poss_imp = int(matrix[ret:, :ret].sum())
    group.notoccur = int(matrix[ret:, ret:].sum())
    group.num_rel_ret = int((levels[:ret] > 0.0).sum())
    group.num_nonrel_ret = int((levels[:ret] == 0.0).sum())
    group.num_rel = int((levels > 0.0).sum())
    group.num_nonrel = int((levels == 0.0).sum())
    group.matrix, group.levels = matrix, levels
    return matrix


def _query_prefs(
    prefs: Sequence[Preference],
    docs: Mapping[str, float] | None,
    max_per_query: int | None,
    where: tuple[Path | str, str],
) -> _QueryPrefs:
    """The preference counts of one query's judgment groups against its ranking."""
    numbers, ret = _numbers(prefs, _ranking(docs, max_per_query))
    size = len(numbers)
    counts = np.zeros((size, size), dtype=np.int64)
    ordered = sorted(prefs, key=lambda p: (p.group, p.sub_group, -p.level, numbers[p.doc]))
    groups: list[_Group] = []
    for name, members in groupby(ordered, key=lambda p: p.group):
        items = list(members)
        group = _Group()
        if len({p.sub_group for p in items}) > 1:
            counts += _matrix_counts(group, items, numbers, size, ret, (*where, name))
        else:
            classes = [
                (level, np.array([numbers[p.doc] for p in same], dtype=np.int64))
                for level, same in groupby(items, key=lambda p: p.level)
            ]
            _classes_counts(group, classes, ret, counts)
        group.poss_ret += group.ful_ret
        group.poss_imp += group.ful_imp
        groups.append(group)
    return _QueryPrefs(groups, counts, ret, size)
