"""Safe files: path checks, the output guard, and outputs written as a set."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments._errors import UnsafePathError
    from groundkit.judgments.files._output_guard import (
        MAX_NAME_BYTES,
        InputPath,
        OutputGuardError,
        OutputPath,
        guard_outputs,
        is_empty_file,
        is_judgments_file,
        is_report_file,
        looks_like_jsonl,
        shown_path,
    )
    from groundkit.judgments.files._outputs import (
        OutputSet,
        OutputSetError,
        flush_tree,
        recover_folder,
        remove_stale_temporaries,
        temporary_sibling,
    )
    from groundkit.judgments.files._paths import (
        MAX_COMPONENT_BYTES,
        append_line,
        atomic_write_bytes,
        atomic_write_files,
        atomic_write_text,
        ensure_within,
        find_case_collisions,
        open_regular,
        read_regular_bytes,
        validate_path_component,
    )

_EXPORTS: dict[str, str] = {
    "MAX_COMPONENT_BYTES": "groundkit.judgments.files._paths",
    "MAX_NAME_BYTES": "groundkit.judgments.files._output_guard",
    "InputPath": "groundkit.judgments.files._output_guard",
    "OutputGuardError": "groundkit.judgments.files._output_guard",
    "OutputPath": "groundkit.judgments.files._output_guard",
    "OutputSet": "groundkit.judgments.files._outputs",
    "OutputSetError": "groundkit.judgments.files._outputs",
    "UnsafePathError": "groundkit.judgments._errors",
    "append_line": "groundkit.judgments.files._paths",
    "atomic_write_bytes": "groundkit.judgments.files._paths",
    "atomic_write_files": "groundkit.judgments.files._paths",
    "atomic_write_text": "groundkit.judgments.files._paths",
    "ensure_within": "groundkit.judgments.files._paths",
    "find_case_collisions": "groundkit.judgments.files._paths",
    "flush_tree": "groundkit.judgments.files._outputs",
    "guard_outputs": "groundkit.judgments.files._output_guard",
    "is_empty_file": "groundkit.judgments.files._output_guard",
    "is_judgments_file": "groundkit.judgments.files._output_guard",
    "is_report_file": "groundkit.judgments.files._output_guard",
    "looks_like_jsonl": "groundkit.judgments.files._output_guard",
    "open_regular": "groundkit.judgments.files._paths",
    "read_regular_bytes": "groundkit.judgments.files._paths",
    "recover_folder": "groundkit.judgments.files._outputs",
    "remove_stale_temporaries": "groundkit.judgments.files._outputs",
    "shown_path": "groundkit.judgments.files._output_guard",
    "temporary_sibling": "groundkit.judgments.files._outputs",
    "validate_path_component": "groundkit.judgments.files._paths",
}

__all__ = [
    "MAX_COMPONENT_BYTES",
    "MAX_NAME_BYTES",
    "InputPath",
    "OutputGuardError",
    "OutputPath",
    "OutputSet",
    "OutputSetError",
    "UnsafePathError",
    "append_line",
    "atomic_write_bytes",
    "atomic_write_files",
    "atomic_write_text",
    "ensure_within",
    "find_case_collisions",
    "flush_tree",
    "guard_outputs",
    "is_empty_file",
    "is_judgments_file",
    "is_report_file",
    "looks_like_jsonl",
    "open_regular",
    "read_regular_bytes",
    "recover_folder",
    "remove_stale_temporaries",
    "shown_path",
    "temporary_sibling",
    "validate_path_component",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
