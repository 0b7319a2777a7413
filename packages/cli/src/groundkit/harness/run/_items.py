"""Per-query scores in a small JSON Lines file, for comparing runs without their reports.

Items format (UTF-8 JSON Lines, written atomically). For every stage that produced results, in
report order, one header line followed by one line per answerable query:

* header: ``{"stage": NAME, "config": CONFIG, "config_hash": HASH, "corpus_fingerprint": C,
  "judgments_fingerprint": J}`` where ``CONFIG`` is the stage's configuration (``{"name",
  "retriever": {"kind", ...settings}, "chunker"}``, as :class:`StageConfig` dumps it), ``HASH``
  the SHA-256 (hex) of ``CONFIG`` serialised with sorted keys, no spaces and non-ASCII
  characters kept (core's ``config_hash``), and ``C`` and ``J`` the report's corpus and
  judgments fingerprints (what the scores were computed on, so that runs scored on different
  gold are not compared by mistake), and ``"cost"``: the stage's cost record as in the report
  (:class:`~groundkit.judgments.report.StageCost`; what ``grk eval compare --guardrail
  latency_p95<=1.2x`` reads) when it has one. Older files lack these keys and are still read;
* row: ``{"stage": NAME, "query_id": ID, "scores": {METRIC: VALUE, ...}, "missing": BOOL}``
  with ``missing`` true when the stage returned nothing for the query (its scores are 0).

Stages that failed are left out. A row always follows the header of its own stage.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from groundkit.harness._errors import HarnessError
from groundkit.judgments import config_hash
from groundkit.judgments.files import atomic_write_text
from groundkit.judgments.gold import format_validation_error, iter_jsonl_objects
from groundkit.judgments.report import StageCost

if TYPE_CHECKING:  # annotations only: reading an items file loads no report model
    from groundkit.judgments import EvalReport, StageReport

__all__ = [
    "ItemsFile",
    "ItemsStage",
    "items_text",
    "load_items",
    "stage_config_record",
    "write_items",
]

_HEADER_KEYS = frozenset({"stage", "config", "config_hash"})
_FINGERPRINT_KEYS = frozenset({"corpus_fingerprint", "judgments_fingerprint"})
_COST_KEY = frozenset({"cost"})
_ROW_KEYS = frozenset({"stage", "query_id", "scores", "missing"})
_HASH = re.compile(r"^[0-9a-f]{64}$")


def stage_config_record(stage: StageReport) -> dict[str, Any]:
    """A report stage's configuration, in the form :class:`StageConfig` dumps it.

    The settings as the report recorded them (:meth:`StageReport.config_record`), so the hash
    of an older report's stage is the one it had.
    """
    return stage.config_record()


def write_items(report: EvalReport, path: str | Path) -> None:
    """Write the per-query scores of every successful stage (see the module documentation).

    Raises:
        groundkit.judgments.JudgmentError: The file cannot be written (nothing is left half
            written).
    """
    atomic_write_text(Path(path), items_text(report))


def items_text(report: EvalReport) -> str:
    """The items file's text for ``report`` (what :func:`write_items` writes)."""
    lines: list[str] = []
    for stage in report.stages:
        if stage.error is not None:
            continue
        config = stage_config_record(stage)
        header = {
            "stage": stage.name,
            "config": config,
            "config_hash": config_hash(config),
            "corpus_fingerprint": report.run.corpus_fingerprint,
            "judgments_fingerprint": report.run.judgments_fingerprint,
        }
        if stage.cost is not None:
            header["cost"] = stage.cost.model_dump(mode="json")
        lines.append(json.dumps(header, ensure_ascii=False))
        for result in stage.queries:
            row = {
                "stage": stage.name,
                "query_id": result.query_id,
                "scores": result.scores,
                "missing": result.missing,
            }
            lines.append(json.dumps(row, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


@dataclass
class ItemsStage:
    """One stage of an items file.

    Attributes:
        name: Stage name.
        config: Stage configuration.
        config_hash: SHA-256 of the canonical configuration.
        corpus_fingerprint: Fingerprint of the corpus the stage was scored on (``None`` in a
            file written before items carried fingerprints).
        judgments_fingerprint: Fingerprint of the judgments it was scored on (``None`` in
            such a file).
        scores: Query id -> metric -> value.
        missing: Query ids the stage returned nothing for.
        cost: The stage's cost and latency (``None`` in a file written before items carried
            it).
    """

    name: str
    config: dict[str, Any]
    config_hash: str
    corpus_fingerprint: str | None = None
    judgments_fingerprint: str | None = None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    cost: StageCost | None = None

    @property
    def metrics(self) -> list[str]:
        """Metric names of the first row (every row has the same)."""
        for row in self.scores.values():
            return list(row)
        return []


@dataclass
class ItemsFile:
    """A parsed items file.

    Attributes:
        path: Where it was read from.
        stages: Stages in file order.
    """

    path: Path
    stages: list[ItemsStage]

    @property
    def stage_names(self) -> list[str]:
        """Stage names in file order."""
        return [s.name for s in self.stages]

    def stage(self, name: str | None = None) -> ItemsStage:
        """A stage by name; ``None`` is the only stage, or the last one of the file.

        Raises:
            HarnessError: No stage has that name.
        """
        if name is None:
            return self.stages[-1]
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise HarnessError(
            f"no stage {name!r} in the items file (stages: {', '.join(self.stage_names)})",
            path=self.path,
        )

    def scores(self, stage: str | None = None, *, metric: str) -> dict[str, float]:
        """Per-query values of one metric of one stage.

        Args:
            stage: Stage name (default: the only stage, or the last stage of the file).
            metric: Metric name.

        Returns:
            ``{query_id: value}`` in file order.

        Raises:
            HarnessError: Unknown stage or metric.
        """
        chosen = self.stage(stage)
        if chosen.scores and metric not in next(iter(chosen.scores.values())):
            raise HarnessError(
                f"stage {chosen.name!r} has no metric {metric!r} (metrics: "
                f"{', '.join(chosen.metrics)})",
                path=self.path,
            )
        return {qid: row[metric] for qid, row in chosen.scores.items()}


def _check_scores(value: Any, path: Path, line: int, query_id: str) -> dict[str, float]:
    if not isinstance(value, dict) or not value:
        raise HarnessError(
            "'scores' must be a non-empty object", path=path, line=line, item_id=query_id
        )
    # The common case in one pass: JSON floats within [0, 1] (no bool, int, nan or inf).
    if all(type(number) is float and 0.0 <= number <= 1.0 for number in value.values()):
        return dict(value)
    out: dict[str, float] = {}
    for metric, number in value.items():
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise HarnessError(
                f"score {metric!r} must be a finite number", path=path, line=line, item_id=query_id
            )
        if not 0.0 <= number <= 1.0:
            # Every groundkit metric is a share in [0, 1]; a value such as 1e308 would only
            # overflow the statistics later.
            raise HarnessError(
                f"score {metric!r} is {number!r}, outside [0, 1] where every groundkit metric lies",
                path=path,
                line=line,
                item_id=query_id,
            )
        out[metric] = float(number)
    return out


def _header(data: dict[str, Any], file: Path, line: int) -> ItemsStage:
    name, config, digest = data["stage"], data["config"], data["config_hash"]
    if not isinstance(name, str) or not isinstance(config, dict):
        raise HarnessError(
            "a header needs a string 'stage' and an object 'config'", path=file, line=line
        )
    if not isinstance(digest, str) or _HASH.match(digest) is None:
        raise HarnessError("'config_hash' must be 64 lowercase hex digits", path=file, line=line)
    if config_hash(config) != digest:
        raise HarnessError(
            f"stage {name!r}: config_hash does not match config", path=file, line=line
        )
    fingerprints: dict[str, str] = {}
    for key in sorted(_FINGERPRINT_KEYS & set(data)):
        value = data[key]
        if not isinstance(value, str) or _HASH.match(value) is None:
            raise HarnessError(f"{key!r} must be 64 lowercase hex digits", path=file, line=line)
        fingerprints[key] = value
    return ItemsStage(
        name=name,
        config=config,
        config_hash=digest,
        corpus_fingerprint=fingerprints.get("corpus_fingerprint"),
        judgments_fingerprint=fingerprints.get("judgments_fingerprint"),
        cost=_cost(data.get("cost"), name, file, line),
    )


def _cost(value: Any, name: str, file: Path, line: int) -> StageCost | None:
    if value is None:
        return None
    try:
        return StageCost.model_validate(value)
    except ValidationError as error:
        raise HarnessError(
            f"stage {name!r}: invalid 'cost': {format_validation_error(error)}",
            path=file,
            line=line,
        ) from None


def _add_row(current: ItemsStage | None, data: dict[str, Any], file: Path, line: int) -> None:
    """Check one row and add it to the stage whose header it follows."""
    query_id = data["query_id"]
    if not isinstance(query_id, str):
        raise HarnessError("'query_id' must be a string", path=file, line=line)
    if current is None or data["stage"] != current.name:
        raise HarnessError(
            f"row of stage {data['stage']!r} does not follow that stage's header",
            path=file,
            line=line,
            item_id=query_id,
        )
    if query_id in current.scores:
        raise HarnessError(
            f"query repeated in stage {current.name!r}",
            path=file,
            line=line,
            item_id=query_id,
        )
    if not isinstance(data["missing"], bool):
        raise HarnessError(
            "'missing' must be true or false", path=file, line=line, item_id=query_id
        )
    current.scores[query_id] = _check_scores(data["scores"], file, line, query_id)
    if data["missing"]:
        current.missing.add(query_id)


def load_items(path: str | Path) -> ItemsFile:
    """Read an items file written by :func:`write_items`.

    Raises:
        HarnessError: Unreadable file or a malformed line (naming the file and line).
    """
    file = Path(path)
    stages: list[ItemsStage] = []
    current: ItemsStage | None = None
    try:
        entries = list(iter_jsonl_objects(file))
    except HarnessError:
        raise
    except ValueError as error:
        raise HarnessError(
            getattr(error, "message", str(error)), path=file, line=getattr(error, "line", None)
        ) from None
    for line, data in entries:
        keys = set(data)
        if keys - _COST_KEY in (_HEADER_KEYS, _HEADER_KEYS | _FINGERPRINT_KEYS):
            current = _header(data, file, line)
            if any(s.name == current.name for s in stages):
                raise HarnessError(f"stage {current.name!r} appears twice", path=file, line=line)
            stages.append(current)
        elif keys == _ROW_KEYS:
            _add_row(current, data, file, line)
        else:
            raise HarnessError(
                "not an items line: expected a header {stage, config, config_hash, "
                "corpus_fingerprint, judgments_fingerprint} or a row "
                "{stage, query_id, scores, missing}",
                path=file,
                line=line,
            )
    if not stages:
        raise HarnessError("no stage in the items file", path=file)
    return ItemsFile(path=file, stages=stages)
