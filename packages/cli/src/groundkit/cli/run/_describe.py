"""`--describe`: the contract of a command's input files, generated from the pydantic models.

Each contract is rendered from the JSON Schema of the model that validates the input
(``model_json_schema``): every model the root refers to gets a table of its fields with their
types, whether they are required (or their default) and the description from the model's
``Attributes:`` docstring section, which pydantic copies into the schema. The example is built
from the models as well and validated, so it cannot drift from what is accepted.
"""

from __future__ import annotations

import inspect
import json
import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # pydantic loads when a contract is described, not for --help
    from pydantic import BaseModel

__all__ = ["CONTRACTS", "InputContract", "describe_option", "describe_text", "field_rows"]

Schema = dict[str, Any]

_ATTRIBUTE = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(?: \([^)]*\))?:\s*(.*)$")
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def _plain(text: str) -> str:
    return _ROLE.sub(r"\1", text).replace("``", "")


@dataclass(frozen=True)
class InputContract:
    """What one kind of input file must hold.

    Attributes:
        title: The input as commands name it (``judgments file``).
        layout: How the file is laid out, in one sentence.
        schemas: The JSON Schemas to describe, root first (built when asked).
        example: An example (a line, or a file for TOML), validated by the models.
    """

    title: str
    layout: str
    schemas: Callable[[], list[Schema]]
    example: Callable[[], str]


def _attribute_docs(description: str) -> dict[str, str]:
    """``name -> text`` from the ``Attributes:`` section of a Google docstring."""
    docs: dict[str, str] = {}
    lines = description.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes:")
    except StopIteration:
        return docs
    indent: int | None = None
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        match = _ATTRIBUTE.match(line)
        depth = len(line) - len(line.lstrip())
        if match is not None and (indent is None or depth == indent):
            indent, current = depth, match.group(2)
            docs[current] = match.group(3).strip()
        elif current is not None and indent is not None and depth > indent:
            docs[current] += " " + line.strip()
        else:
            break
    return {name: _plain(text) for name, text in docs.items()}


def _summary(description: str) -> str:
    return _plain(description.split("\n\n", 1)[0].replace("\n", " ")).strip()


def model_schema(model: type[BaseModel]) -> Schema:
    """The model's JSON Schema, its description holding the ``Attributes:`` of its bases too.

    pydantic copies only the class's own docstring; a subclass (``RunConfig`` of
    ``EvalSettings``) documents only the fields it adds.
    """
    from pydantic import BaseModel

    schema = model.model_json_schema()
    inherited = [
        inspect.getdoc(base) or ""
        for base in model.__mro__[1:]
        if isinstance(base, type) and issubclass(base, BaseModel) and "__doc__" in vars(base)
    ]
    sections = [text.split("Attributes:", 1)[1] for text in inherited if "Attributes:" in text]
    if sections:
        own = schema.get("description", "")
        if "Attributes:" not in own:
            own += "\n\nAttributes:"
        schema["description"] = own + "".join("\n" + section.strip("\n") for section in sections)
    return schema


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _bounds(prop: Schema) -> str:
    parts = []
    for key, sign in (
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
    ):
        if key in prop:
            parts.append(f"{sign} {prop[key]}")
    return f" ({', '.join(parts)})" if parts else ""


def type_text(prop: Schema) -> str:
    """A schema's type in words: ``list of GoldQuote``, ``string or null``, ``integer (≥ 1)``."""
    if "$ref" in prop:
        return _ref_name(prop["$ref"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(dict.fromkeys(type_text(p) for p in prop[key]))
    if "const" in prop:
        return json.dumps(prop["const"])
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    kind = prop.get("type")
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(type_text(p) for p in prop["prefixItems"]) + "]"
        return "list of " + type_text(prop.get("items", {}))
    if kind == "object":
        values = prop.get("additionalProperties")
        if isinstance(values, dict) and values:
            return "object of " + type_text(values)
        return "object"
    if kind == "string" and prop.get("format") == "path":
        return "path"
    if isinstance(kind, str):
        return kind + _bounds(prop)
    return "any JSON value"


def _refs(prop: Any) -> Iterator[str]:
    if isinstance(prop, dict):
        if "$ref" in prop:
            yield _ref_name(prop["$ref"])
        for value in prop.values():
            yield from _refs(value)
    elif isinstance(prop, list):
        for value in prop:
            yield from _refs(value)


def _models(schema: Schema) -> list[tuple[str, Schema]]:
    """The root model and every model it refers to, each once, in order of first reference."""
    defs: dict[str, Schema] = schema.get("$defs", {})
    order: list[tuple[str, Schema]] = [(schema.get("title", "root"), schema)]
    seen = {order[0][0]}
    index = 0
    while index < len(order):
        for name in _refs(order[index][1].get("properties", {})):
            if name not in seen and name in defs:
                seen.add(name)
                order.append((name, defs[name]))
        index += 1
    return order


def field_rows(model: Schema) -> list[tuple[str, str, str, str]]:
    """``(field, type, required or default, description)`` of each field of one model."""
    docs = _attribute_docs(model.get("description", ""))
    required = set(model.get("required", []))
    rows = []
    for name, prop in model.get("properties", {}).items():
        if name in required:
            need = "required"
        elif "default" in prop:
            need = "default " + json.dumps(prop["default"], ensure_ascii=False)
        else:
            need = "optional"
        rows.append((name, type_text(prop), need, docs.get(name, "")))
    return rows


def _model_text(name: str, model: Schema) -> list[str]:
    lines = [f"{name}: {_summary(model.get('description', ''))}".rstrip(": ")]
    rows = field_rows(model)
    width = max((len(row[0]) for row in rows), default=0)
    for field, kind, need, doc in rows:
        lines.append(f"  {field:<{width}}  {kind}; {need}")
        if doc:
            lines.append(f"  {'':<{width}}    {doc}")
    return lines


def describe_text(names: Sequence[str]) -> str:
    """The contracts of the given inputs (keys of :data:`CONTRACTS`), as plain text."""
    blocks: list[str] = []
    for name in names:
        contract = CONTRACTS[name]
        lines = [f"== {contract.title}: {contract.layout}", ""]
        seen: set[str] = set()
        for schema in contract.schemas():
            for model_name, model in _models(schema):
                if model_name in seen:
                    continue
                seen.add(model_name)
                lines.extend([*_model_text(model_name, model), ""])
        lines.append("example:")
        lines.extend("  " + line for line in contract.example().splitlines())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


# The models are imported where a description is asked for: ``--describe`` is an option of
# commands (an items comparison) that load no report model otherwise.


def _judgment_example() -> str:
    from groundkit.judgments import GoldQuote, Judgment

    judgment = Judgment(
        query_id="leave-days",
        query="How many days of paid leave do I get?",
        gold=(GoldQuote(doc="policies/leave.md", quote="Employees receive 25 days of paid leave"),),
    )
    data = judgment.model_dump(mode="json", exclude_defaults=True)
    return json.dumps(Judgment.model_validate(data).model_dump(mode="json", exclude_defaults=True))


def _report_example() -> str:
    from groundkit.judgments import EvalReport, QueryResult, StageReport
    from groundkit.judgments.report import GoldEvidence, QueryInfo, RunInfo, parse_report

    run = RunInfo(
        created_at="2026-01-01T00:00:00+00:00",
        package_versions={"groundkit-cli": "0.1.0"},
        corpus_fingerprint="0" * 64,
        judgments_fingerprint="1" * 64,
        headline_metrics=["mrr"],
    )
    gold = GoldEvidence(doc="policies/leave.md", quote="25 days of paid leave", spans=[(10, 31)])
    report = EvalReport(
        run=run,
        queries=[QueryInfo(query_id="leave-days", query="How many days?", gold=[gold])],
        stages=[
            StageReport(
                name="bm25",
                kind="bm25",
                baseline=True,
                queries=[QueryResult(query_id="leave-days", scores={"mrr": 1.0})],
            )
        ],
    )
    # The version is written out (exclude_defaults would drop it): every report carries it.
    data = {
        "schema_version": report.schema_version,
        **report.model_dump(mode="json", exclude_defaults=True),
    }
    parse_report(data)  # the example must be a valid report
    return json.dumps(data)


_CONFIG_EXAMPLE = """\
corpus = "corpus/"
judgments = "judgments.jsonl"
chunker = "chars:1000:200"

[[stages]]
name = "dense"
retriever = { kind = "dense" }

[[stages]]
name = "hybrid"
retriever = { kind = "hybrid", stages = ["bm25", "dense"] }
"""


def _config_example() -> str:
    from groundkit.harness import run_config_from_dict  # the config models: only when asked

    run_config_from_dict(tomllib.loads(_CONFIG_EXAMPLE))  # the example must be valid
    return _CONFIG_EXAMPLE


def _config_schemas() -> list[Schema]:
    # A stage's retriever is validated by its kind's registered settings model: one table each.
    from groundkit.harness import RunConfig
    from groundkit.harness.retrievers import retriever_kind, retriever_kinds

    kinds = [retriever_kind(name).settings.model_json_schema() for name in retriever_kinds()]
    return [model_schema(RunConfig), *kinds]


def _model(name: str) -> type[BaseModel]:
    import groundkit.judgments

    model: type[BaseModel] = getattr(groundkit.judgments, name)
    return model


CONTRACTS: dict[str, InputContract] = {
    "judgments": InputContract(
        "judgments file",
        "JSON Lines (UTF-8), one Judgment object per line; unknown keys are refused",
        lambda: [_model("Judgment").model_json_schema()],
        _judgment_example,
    ),
    "report": InputContract(
        "report",
        "one JSON object (UTF-8), an EvalReport, as grk eval run writes it; a later minor "
        "schema_version is read, a later major one refused",
        lambda: [_model("EvalReport").model_json_schema()],
        _report_example,
    ),
    "config": InputContract(
        "config file",
        "TOML (--config), a RunConfig; relative paths are read from the file's folder, unknown "
        "keys are refused; a stage's retriever takes the settings of its kind (below)",
        _config_schemas,
        _config_example,
    ),
}
"""Every input with a model, by name."""


def describe_option(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--describe`` flag: print the contracts of ``names`` and exit 0, reading nothing."""
    unknown = [name for name in names if name not in CONTRACTS]
    if unknown:
        raise ValueError(f"no input contract named {', '.join(unknown)}")

    def show(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        click.echo(describe_text(names), nl=False)
        ctx.exit(0)

    titles = " and ".join(CONTRACTS[name].title for name in names)
    return click.option(
        "--describe",
        is_flag=True,
        is_eager=True,
        expose_value=False,
        callback=show,
        help=f"Print what the {titles} must hold (fields, types, an example) and exit.",
    )
