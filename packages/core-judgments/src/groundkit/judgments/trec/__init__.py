"""trec_eval semantics: qrels and run files, every measure, printed output, export, id maps."""

from typing import TYPE_CHECKING

from groundkit.judgments.lazy import lazy_exports

if TYPE_CHECKING:
    from groundkit.judgments.trec._eval import TrecEvalResult, evaluate_trec, trec_measure_names
    from groundkit.judgments.trec._export import (
        ExportLevel,
        StageExport,
        chunk_id,
        export_stage,
        parse_chunk_id,
        with_original_ids,
    )
    from groundkit.judgments.trec._file_eval import evaluate_trec_files
    from groundkit.judgments.trec._format import format_trec_eval
    from groundkit.judgments.trec._id_map import (
        ID_MAP_FILE_NAME,
        IdMap,
        id_map_beside,
        read_id_map,
        write_id_map,
    )
    from groundkit.judgments.trec._io import (
        TrecRun,
        qrels_text,
        read_qrels,
        read_trec_run,
        trec_ranking,
        trec_run_text,
        trec_tie_order,
        write_qrels,
        write_trec_run,
    )
    from groundkit.judgments.trec._prefs import evaluate_trec_prefs
    from groundkit.judgments.trec._prefs_io import read_prefs, read_qrels_jg
    from groundkit.judgments.trec._qrels_jg import evaluate_trec_qrels_jg
    from groundkit.judgments.trec._zscores import read_zscores

_EXPORTS: dict[str, str] = {
    "with_original_ids": "groundkit.judgments.trec._export",
    "read_zscores": "groundkit.judgments.trec._zscores",
    "read_qrels_jg": "groundkit.judgments.trec._prefs_io",
    "read_prefs": "groundkit.judgments.trec._prefs_io",
    "evaluate_trec_qrels_jg": "groundkit.judgments.trec._qrels_jg",
    "evaluate_trec_prefs": "groundkit.judgments.trec._prefs",
    "ID_MAP_FILE_NAME": "groundkit.judgments.trec._id_map",
    "ExportLevel": "groundkit.judgments.trec._export",
    "IdMap": "groundkit.judgments.trec._id_map",
    "StageExport": "groundkit.judgments.trec._export",
    "TrecEvalResult": "groundkit.judgments.trec._eval",
    "TrecRun": "groundkit.judgments.trec._io",
    "chunk_id": "groundkit.judgments.trec._export",
    "evaluate_trec": "groundkit.judgments.trec._eval",
    "evaluate_trec_files": "groundkit.judgments.trec._file_eval",
    "export_stage": "groundkit.judgments.trec._export",
    "format_trec_eval": "groundkit.judgments.trec._format",
    "id_map_beside": "groundkit.judgments.trec._id_map",
    "parse_chunk_id": "groundkit.judgments.trec._export",
    "qrels_text": "groundkit.judgments.trec._io",
    "read_id_map": "groundkit.judgments.trec._id_map",
    "read_qrels": "groundkit.judgments.trec._io",
    "read_trec_run": "groundkit.judgments.trec._io",
    "trec_measure_names": "groundkit.judgments.trec._eval",
    "trec_ranking": "groundkit.judgments.trec._io",
    "trec_run_text": "groundkit.judgments.trec._io",
    "trec_tie_order": "groundkit.judgments.trec._io",
    "write_id_map": "groundkit.judgments.trec._id_map",
    "write_qrels": "groundkit.judgments.trec._io",
    "write_trec_run": "groundkit.judgments.trec._io",
}

__all__ = [
    "ID_MAP_FILE_NAME",
    "ExportLevel",
    "IdMap",
    "StageExport",
    "TrecEvalResult",
    "TrecRun",
    "chunk_id",
    "evaluate_trec",
    "evaluate_trec_files",
    "evaluate_trec_prefs",
    "evaluate_trec_qrels_jg",
    "export_stage",
    "format_trec_eval",
    "id_map_beside",
    "parse_chunk_id",
    "qrels_text",
    "read_id_map",
    "read_prefs",
    "read_qrels",
    "read_qrels_jg",
    "read_trec_run",
    "read_zscores",
    "trec_measure_names",
    "trec_ranking",
    "trec_run_text",
    "trec_tie_order",
    "with_original_ids",
    "write_id_map",
    "write_qrels",
    "write_trec_run",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
