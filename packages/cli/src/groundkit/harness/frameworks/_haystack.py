"""The ``haystack`` kind: a Haystack component or ``Pipeline`` as a stage (extra haystack).

haystack-ai is imported only here, when a stage of the kind is built. Which inputs receive the
query and which output holds the hits is worked out once, when the stage is built, so a
pipeline that cannot be fed is a configuration error before anything runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from groundkit.harness._errors import HarnessError, StageFailed
from groundkit.harness.frameworks._adapters import (
    per_query,
    require_framework,
    resolve_framework_object,
)
from groundkit.harness.frameworks._settings import HaystackRetriever
from groundkit.harness.retrievers._protocol import Query, StageContext
from groundkit.harness.run._stage_run import user_failure

__all__ = ["HaystackStage"]

_EXPECTED = "a Haystack component or Pipeline"


def _is_component(value: Any) -> bool:
    # Instances of @component classes carry their input sockets; a bare class does not.
    return (
        not inspect.isclass(value)
        and hasattr(value, "__haystack_input__")
        and callable(getattr(value, "run", None))
    )


class HaystackStage:
    """Runs a Haystack component or pipeline per query; the ``documents`` it outputs are hits.

    Args:
        settings: The haystack settings.
        context: The stage's context.

    Raises:
        HarnessError: haystack-ai is missing (naming the extra), the target is not a component
            or pipeline, no input takes the query, a required input would be left empty, or no
            output holds documents.
    """

    def __init__(self, settings: HaystackRetriever, context: StageContext) -> None:
        self.settings = settings
        self.stage = context.stage
        pipelines = require_framework(
            "haystack.core.pipeline.base",
            stage=self.stage,
            kind="haystack",
            package="haystack-ai",
            extra="haystack",
        )
        pipeline_type = pipelines.PipelineBase
        self.found = resolve_framework_object(
            settings.target,
            stage=self.stage,
            accepts=lambda value: isinstance(value, pipeline_type) or _is_component(value),
            expected=_EXPECTED,
        )
        self.is_pipeline = isinstance(self.found, pipeline_type)
        self.where = f"stage {self.stage!r}: {type(self.found).__name__}"
        self.output: str | None = None
        if self.is_pipeline:
            self._plan_pipeline()
        else:
            self._plan_component()

    def _plan_component(self) -> None:
        if self.settings.output is not None:
            raise HarnessError(f"{self.where} is a component: 'output' names a pipeline's")
        names = list(inspect.signature(self.found.run).parameters)
        query = [n for n in self.settings.query_inputs if n in names]
        if not query:
            raise HarnessError(
                f"{self.where}: run() takes none of {', '.join(self.settings.query_inputs)} "
                f"(its inputs: {', '.join(names)}); set query_inputs"
            )
        self.query_input = query[0]
        self.takes_top_k = "top_k" in names
        if self.settings.top_k is not None and not self.takes_top_k:
            raise HarnessError(f"{self.where}: run() takes no top_k")
        warm_up = getattr(self.found, "warm_up", None)
        if callable(warm_up):
            try:
                warm_up()
            except Exception as error:
                raise user_failure(self.stage, "the component's warm_up()", error) from error

    def _plan_pipeline(self) -> None:
        inputs: Mapping[str, Mapping[str, Any]] = self.found.inputs()
        self.query_sockets: list[tuple[str, str]] = []
        self.top_k_sockets: list[str] = []
        missing: list[str] = []
        for component, sockets in inputs.items():
            for name, socket in sockets.items():
                if name in self.settings.query_inputs:
                    self.query_sockets.append((component, name))
                elif name == "top_k":
                    self.top_k_sockets.append(component)
                elif isinstance(socket, Mapping) and socket.get("is_mandatory"):
                    missing.append(f"{component}.{name}")
        if not self.query_sockets:
            given = ", ".join(f"{c}.{n}" for c, s in inputs.items() for n in s) or "none"
            raise HarnessError(
                f"{self.where}: no open input called {', '.join(self.settings.query_inputs)} "
                f"takes the query (open inputs: {given}); set query_inputs"
            )
        if missing:
            raise HarnessError(
                f"{self.where}: required input {missing[0]} would be left empty (the stage "
                "gives only the query and top_k)"
            )
        if self.settings.top_k is not None and not self.top_k_sockets:
            raise HarnessError(f"{self.where}: no open input called top_k")
        self.output = self._documents_output()

    def _documents_output(self) -> str:
        final: Mapping[str, Mapping[str, Any]] = self.found.outputs()
        every: Mapping[str, Mapping[str, Any]] = self.found.outputs(True)
        wanted = self.settings.output
        if wanted is not None:
            if wanted not in every:
                raise HarnessError(
                    f"{self.where}: output {wanted!r} is not a component "
                    f"(components: {', '.join(every)})"
                )
            if "documents" not in every[wanted]:
                raise HarnessError(f"{self.where}: component {wanted!r} outputs no documents")
            return wanted
        for outputs in (final, every):
            for component, sockets in outputs.items():
                if "documents" in sockets:
                    return component
        raise HarnessError(f"{self.where}: no component outputs documents")

    def _run_pipeline(self, text: str, top_k: int) -> Any:
        data: dict[str, dict[str, Any]] = {}
        for component, name in self.query_sockets:
            data.setdefault(component, {})[name] = text
        for component in self.top_k_sockets:
            data.setdefault(component, {})["top_k"] = top_k
        result = self.found.run(data, include_outputs_from={self.output})
        return result.get(self.output, {}) if isinstance(result, Mapping) else result

    def _run_component(self, text: str, top_k: int) -> Any:
        keywords: dict[str, Any] = {self.query_input: text}
        if self.takes_top_k:
            keywords["top_k"] = top_k
        return self.found.run(**keywords)

    def search(self, queries: Sequence[Query], depth: int) -> list[Any]:
        """The Documents of each query, best first.

        Raises:
            StageFailed: Haystack raised, or returned no ``documents`` (naming the query).
        """
        top_k = self.settings.top_k or depth
        run = self._run_pipeline if self.is_pipeline else self._run_component
        what = f"the pipeline (output {self.output!r})" if self.is_pipeline else "the component"
        results = per_query(self.stage, what, queries, lambda text: run(text, top_k))
        out = []
        for query, result in zip(queries, results, strict=True):
            documents = result.get("documents") if isinstance(result, Mapping) else None
            if not isinstance(documents, list):
                raise StageFailed(
                    self.stage,
                    f"query {query.query_id!r}: {what} returned no 'documents' list "
                    f"(got {type(result).__name__})",
                )
            out.append(documents)
        return out
