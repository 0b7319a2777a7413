"""Which trec_eval measures a request names: families, nicknames, parameters, printed names.

trec_eval's measure table, in its print order, with each family's parameter kind:

* ``none``: no parameters (``map``);
* ``long``: integer cutoffs, one printed value each (``P.5,10`` -> ``P_5``, ``P_10``);
* ``float``: fractional cutoffs, one printed value each (``iprec_at_recall.0.25``);
* ``length``: relstring's length;
* ``floats``: one value computed from a list of numbers, printed under the family name
  followed by the parameters as written (``utility.2,-1,0,0`` -> ``utility_2,-1,0,0``);
* ``pairs``: one value computed from ``name=value`` pairs, printed the same way
  (``ndcg.1=3,2=9`` -> ``ndcg_1=3,2=9``): relevance level to gain, and ``p`` for rbp.

As trec_eval, the first request with parameters of a ``floats`` or ``pairs`` family wins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from groundkit.judgments._errors import JudgmentError
from groundkit.judgments.trec._measures import _RECALL_POINTS, _Measure

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_UTILITY = (1.0, -1.0, 0.0, 0.0)

# Families in trec_eval's print order, with their parameter kind and default parameters.
_FAMILIES: dict[str, tuple[str, tuple[float, ...]]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("float", _RECALL_POINTS),
    "P": ("long", _CUTOFFS),
    "relstring": ("length", (10,)),
    "recall": ("long", _CUTOFFS),
    "infAP": ("none", ()),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("float", _RPREC_MULTS),
    "utility": ("floats", _UTILITY),
    "11pt_avg": ("floats", _RECALL_POINTS),
    "binG": ("none", ()),
    "G": ("pairs", ()),
    "ndcg": ("pairs", ()),
    "ndcg_rel": ("pairs", ()),
    "Rndcg": ("pairs", ()),
    "ndcg_cut": ("long", _CUTOFFS),
    "map_cut": ("long", _CUTOFFS),
    "relative_P": ("long", _CUTOFFS),
    "success": ("long", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("none", ()),
    "num_nonrel_judged_ret": ("none", ()),
    "prefs_num_prefs_poss": ("none", ()),
    "prefs_num_prefs_ful": ("none", ()),
    "prefs_num_prefs_ful_ret": ("none", ()),
    "prefs_simp": ("none", ()),
    "prefs_pair": ("none", ()),
    "prefs_avgjg": ("none", ()),
    "prefs_avgjg_Rnonrel": ("none", ()),
    "prefs_simp_ret": ("none", ()),
    "prefs_pair_ret": ("none", ()),
    "prefs_avgjg_ret": ("none", ()),
    "prefs_avgjg_Rnonrel_ret": ("none", ()),
    "prefs_simp_imp": ("none", ()),
    "prefs_pair_imp": ("none", ()),
    "prefs_avgjg_imp": ("none", ()),
    "map_avgjg": ("none", ()),
    "P_avgjg": ("long", _CUTOFFS),
    "Rprec_mult_avgjg": ("float", _RPREC_MULTS),
    "rbp": ("pairs", ()),
    "rbp_resid": ("pairs", ()),
    "unj": ("long", (5, 10, 20)),
}
_PREFS = tuple(name for name in _FAMILIES if name.startswith("prefs_"))
_NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ),
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
    "all_trec": tuple(
        name for name in _FAMILIES if not name.startswith("prefs_") and not name.endswith("_avgjg")
    ),
    "all_prefs": ("runid", "num_q", *_PREFS),
    "prefs": ("runid", "num_q", *_PREFS[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
# Families whose value is a count: printed as integers, summed over queries.
_COUNTS = frozenset(
    {
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "num_nonrel_judged_ret",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
    }
)
# Cutoffs become 64-bit integers; 2**53 keeps every accepted value exact as a float too.
_MAX_PARAMETER = float(2**53)
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass
class _Requests:
    """Families requested so far, with their parameters."""

    cutoffs: dict[str, set[float]] = field(default_factory=dict)
    lengths: dict[str, str] = field(default_factory=dict)
    values: dict[str, tuple[str, tuple[float, ...]]] = field(default_factory=dict)
    pairs: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = field(default_factory=dict)

    def add_family(self, family: str) -> None:
        kind, defaults = _FAMILIES[family]
        self.cutoffs.setdefault(family, set()).update(defaults if kind != "floats" else ())


def trec_measure_names() -> tuple[str, ...]:
    """The measure families groundkit's trec_eval supports, in trec_eval's print order."""
    return tuple(_FAMILIES)


def _format_param(kind: str, value: float) -> str:
    return f"{int(value)}" if kind in ("long", "length") else f"{value:3.2f}"


def _number(text: str, request: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise JudgmentError(f"measure {request!r}: bad parameter {text!r}") from None
    if not math.isfinite(value):
        raise JudgmentError(f"measure {request!r}: parameter {text!r} is out of range")
    return value


def _parse_params(family: str, kind: str, text: str, request: str) -> tuple[float, ...]:
    if kind == "none":
        raise JudgmentError(f"measure {request!r}: {family} takes no parameters here")
    values: list[float] = []
    for part in text.split(","):
        try:
            # Integer cutoffs are truncated like C's atol ("23.4" -> 23).
            value = float(part) if kind == "float" else float(math.trunc(float(part)))
        except (ValueError, OverflowError):  # OverflowError: "inf" truncated to an integer
            raise JudgmentError(f"measure {request!r}: bad parameter {part!r}") from None
        if not math.isfinite(value) or abs(value) > _MAX_PARAMETER:
            raise JudgmentError(f"measure {request!r}: parameter {part!r} is out of range")
        if kind != "float" and value <= 0:
            raise JudgmentError(f"measure {request!r}: cutoffs must be positive")
        values.append(value)
    return tuple(values)


def _parse_values(family: str, text: str, request: str) -> tuple[float, ...]:
    """``floats`` parameters: utility's four coefficients, 11pt_avg's recall points."""
    values = tuple(_number(part, request) for part in text.split(","))
    if family == "utility" and len(values) != 4:
        raise JudgmentError(f"measure {request!r}: utility takes exactly 4 coefficients")
    if family == "11pt_avg" and any(b < a for a, b in pairwise(values)):
        raise JudgmentError(f"measure {request!r}: recall points must be in increasing order")
    return values


def _parse_pairs(family: str, text: str, request: str) -> tuple[tuple[str, float], ...]:
    """``pairs`` parameters: ``level=gain`` (and ``p=persistence`` for rbp, rbp_resid)."""
    pairs: list[tuple[str, float]] = []
    for part in text.split(","):
        name, equals, value = part.partition("=")
        if not equals or not name:
            raise JudgmentError(f"measure {request!r}: parameter {part!r} is not name=value")
        allowed = (name == "p" and family.startswith("rbp")) or (
            family != "rbp_resid" and _INTEGER.fullmatch(name) is not None
        )
        if not allowed:
            raise JudgmentError(f"measure {request!r}: unknown parameter name {name!r}")
        pairs.append((name, _number(value, request)))
    return tuple(pairs)


def _add_request(request: str, requested: _Requests) -> None:
    """Add one measure request's families and parameters to ``requested``."""
    if request in _NICKNAMES:
        for family in _NICKNAMES[request]:
            requested.add_family(family)
        return
    family, dot, params = request.partition(".")
    if family in _FAMILIES:
        kind = _FAMILIES[family][0]
        if not dot:
            requested.add_family(family)
        elif kind == "floats":
            requested.values.setdefault(family, (params, _parse_values(family, params, request)))
            requested.cutoffs.setdefault(family, set())
        elif kind == "pairs":
            requested.pairs.setdefault(family, (params, _parse_pairs(family, params, request)))
            requested.cutoffs.setdefault(family, set())
        else:
            values = _parse_params(family, kind, params, request)
            if kind == "length":
                requested.lengths[family] = params
            requested.cutoffs.setdefault(family, set()).update(values)
        return
    stem, _, suffix = request.rpartition("_")
    kind = _FAMILIES.get(stem, ("", ()))[0]
    if kind in ("long", "float"):
        values = _parse_params(stem, kind, suffix, request)
        requested.cutoffs.setdefault(stem, set()).update(values)
        return
    raise JudgmentError(
        f"unknown or unsupported trec_eval measure {request!r} "
        f"(supported: {', '.join(_NICKNAMES)}, {', '.join(_FAMILIES)})"
    )


def _measure(family: str, kind: str, requested: _Requests) -> list[_Measure]:
    if kind == "none":
        return [_Measure(family, family)]
    if kind == "length":
        (length,) = sorted(requested.cutoffs[family])[-1:]
        name = f"relstring_{requested.lengths[family]}" if family in requested.lengths else family
        return [_Measure(family, name, length)]
    if kind == "floats":
        text, values = requested.values.get(family, ("", _FAMILIES[family][1]))
        return [_Measure(family, f"{family}_{text}" if text else family, values=values)]
    if kind == "pairs":
        text, pairs = requested.pairs.get(family, ("", ()))
        return [_Measure(family, f"{family}_{text}" if text else family, pairs=pairs)]
    return [
        _Measure(family, f"{family}_{_format_param(kind, value)}", value)
        for value in sorted(requested.cutoffs[family])
    ]


def _select(measures: Sequence[str] | None, default: str = "official") -> list[_Measure]:
    """The measures a list of requests names, in trec_eval's print order."""
    requested = _Requests()
    for request in measures if measures is not None else [default]:
        _add_request(request, requested)
    selected: list[_Measure] = []
    for family, (kind, _) in _FAMILIES.items():
        if family in requested.cutoffs:
            selected.extend(_measure(family, kind, requested))
    return selected
