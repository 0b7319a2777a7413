"""`grk eval trec -R prefs` and `-Z`: a malformed file is one line naming the file and line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from groundkit.cli import cli

RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 1.0 r\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_prefs_file_is_one_line_exit_two(tmp_path: Path) -> None:
    prefs = _write(tmp_path, "prefs.test", "q1 g s a\n")
    run = _write(tmp_path, "run", RUN)
    result = CliRunner().invoke(cli, ["eval", "trec", "-R", "prefs", str(prefs), str(run)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "prefs.test:1" in lines[0]


def test_bad_zscores_file_is_one_line_exit_two(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels", "q1 0 a 1\n")
    run = _write(tmp_path, "run", RUN)
    zscores = _write(tmp_path, "zscores", "q1 map x 1\n")
    result = CliRunner().invoke(cli, ["eval", "trec", "-Z", str(zscores), str(qrels), str(run)])
    assert result.exit_code == 2
    assert "zscores:1" in result.output.strip()
    assert len(result.output.strip().splitlines()) == 1
