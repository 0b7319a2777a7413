"""Number settings that refuse text and booleans, whatever the source (flags, TOML, Python).

pydantic's lax mode reads ``depth = "100"`` as 100 and ``cutoffs = [true]`` as ``[1]``; the
flags refuse both. Every number setting of the config models is one of these types, so a
config file gets the flags' answer: a one-line error naming the key.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

__all__ = ["RealNumber", "WholeNumber"]


def _a_number(value: Any) -> Any:
    # A setting given as text ("100") or as a boolean is a mistake in a config file, however
    # pydantic's lax mode would read it: the flags and the Python API take numbers only.
    if isinstance(value, str | bool):
        raise ValueError(f"must be a number, not {type(value).__name__} {value!r}"[:200])
    return value


WholeNumber = Annotated[int, BeforeValidator(_a_number)]
"""An ``int`` setting that refuses text and booleans (``depth = "100"``, ``[true]``)."""
RealNumber = Annotated[float, BeforeValidator(_a_number)]
"""A ``float`` setting that refuses text and booleans."""
