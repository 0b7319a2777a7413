"""trec_eval's z-score file (``-Z``) and the conversion of per-query values to z-scores.

One line per query and measure: ``query measure mean standard_deviation`` (whitespace
separated, blank lines skipped). Each per-query value ``v`` of a measure becomes
``(v - mean) / standard_deviation``; a standard deviation of 0 gives 0 when ``v`` equals the
mean. Where the file has no line for the query, or for the measure (its printed name:
``P_10``, ``gm_map`` whose per-query value is a logarithm), or the deviation is 0 and ``v``
is not the mean, the z-score is -1000000, as trec_eval prints it. The summary is then taken
over the z-scores with each measure's usual rule (mean, sum for counts, geometric mean).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.files._paths import open_regular

__all__ = ["ZScores", "read_zscores"]

FloatArray = npt.NDArray[np.float64]
ZScores = Mapping[str, Mapping[str, tuple[float, float]]]

MISSING_ZSCORE = -1000000.0


def _number(text: str, where: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise JudgmentError(f"{where}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise JudgmentError(f"{where}: {what} {text!r} is not a finite number")
    return value


def read_zscores(path: str | Path) -> dict[str, dict[str, tuple[float, float]]]:
    """Read a z-score file: ``{query: {measure: (mean, standard deviation)}}``.

    Args:
        path: The file (trec_eval ``-Z``).

    Returns:
        The means and standard deviations by query and printed measure name.

    Raises:
        JudgmentError: An unreadable file, or a line without exactly four fields, with a
            mean or deviation that is not a finite number, or repeating a query and measure
            (one line naming the file and line).
    """
    name = Path(path).name
    out: dict[str, dict[str, tuple[float, float]]] = {}
    with open_regular(path) as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JudgmentError(f"{name}: not UTF-8 text ({error.reason})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{name}:{number}"
        if len(fields) != 4:
            raise JudgmentError(
                f"{where}: expected 4 fields (query measure mean deviation), got {len(fields)}"
            )
        query, measure, mean, deviation = fields
        stats = (_number(mean, where, "mean"), _number(deviation, where, "deviation"))
        if measure in out.setdefault(query, {}):
            raise JudgmentError(f"{where}: query {query!r}, measure {measure!r} given twice")
        out[query][measure] = stats
    return out


def _zscore(value: float, stats: tuple[float, float] | None) -> float:
    if stats is None:
        return MISSING_ZSCORE
    mean, deviation = stats
    if deviation:
        return (value - mean) / deviation
    return 0.0 if value == mean else MISSING_ZSCORE


def _to_zscores(
    zscores: ZScores, query_ids: Sequence[str], values: Mapping[str, FloatArray]
) -> dict[str, FloatArray]:
    """Each measure's per-query values as z-scores (see the module documentation)."""
    out: dict[str, FloatArray] = {}
    for name, column in values.items():
        converted = np.empty(len(query_ids))
        for row, query in enumerate(query_ids):
            stats = zscores.get(query)
            converted[row] = _zscore(float(column[row]), stats.get(name) if stats else None)
        out[name] = converted
    return out
