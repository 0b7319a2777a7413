"""trec_eval's printed output, byte for byte."""

from __future__ import annotations

from groundkit.judgments.trec._eval import TrecEvalResult
from groundkit.judgments.trec._select import _COUNTS

__all__ = ["format_trec_eval"]


def _line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"


def _value_text(name: str, value: float, zscores: bool) -> str:
    if name in _COUNTS and not zscores:
        return f"{int(value)}"
    return f"{value:6.4f}"


def format_trec_eval(result: TrecEvalResult, per_query: bool = False) -> str:
    r"""trec_eval's printed output for a result, byte for byte.

    Args:
        result: The evaluation.
        per_query: Print each query's block before the summary (trec_eval ``-q``).

    Returns:
        Lines ``"<measure padded to 22>\t<query or all>\t<value>"``: counts as integers,
        other values with 4 decimals, ``runid`` as text, ``relstring`` quoted. Z-scores
        (trec_eval ``-Z``) have a ``Z`` before the padded name and counts 4 decimals too.
    """
    z = "Z" if result.zscores else ""
    lines: list[str] = []
    if per_query:
        for query, values in result.per_query.items():
            strings = result.relstrings.get(query, {})
            for name in result.measures:
                if name in strings:
                    lines.append(_line(name, query, f"'{strings[name]}'"))
                elif name in values:
                    text = _value_text(name, values[name], result.zscores)
                    lines.append(z + _line(name, query, text))
    for name in result.measures:
        if name == "runid":
            lines.append(_line(name, "all", result.run_id or ""))
        elif name in result.summary:
            text = _value_text(name, result.summary[name], result.zscores)
            lines.append(z + _line(name, "all", text))
    return "".join(lines)
