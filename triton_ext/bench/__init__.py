"""``triton_ext.bench``: benchmark specs, the CPU check CI runs, and the GPU benchmark (public API).

A benchmark spec is a ``bench.py`` beside a pass (``passes/LoopSplit/bench.py``) that defines
``SPEC = BenchSpec(...)``: the kernel variants (the unchanged kernel, the same kernel with the pass
enabled, the best hand-written version), shapes, dtypes, inputs, a float64 reference, the metric
and the targets. This module runs specs two ways::

    triton-ext bench --cpu [NAME...]            # compile every kernel with and without its pass
    triton-ext bench [NAME...] [--out DIR] [--gpus N] [--quick]

CPU mode needs no GPU and no torch: each distinct kernel/dtype/constexpr combination is compiled
through cubin for ``GPUTarget("cuda", 90, 32)`` with and without the pass, and the spec's IR
predicate must hold (by default: the pass changes the IR). GPU mode checks every variant against
the float64 reference on fresh random inputs, times it with ``triton.testing.do_bench`` (median,
in interleaved rounds, input buffers rotated when they fit in L2) and writes
``bench-<gpu>.json``, ``BENCHMARK.md`` and a chart: ``bench-<gpu>.png`` with matplotlib, else
``bench-<gpu>.svg`` drawn without it (``--from-json`` redraws from a JSON file).
``--gpus N`` runs cases in N processes, one per GPU (``CUDA_VISIBLE_DEVICES``).

NAME is a pass name, an extension name, a spec name or a path to a ``bench.py``; no NAME means
every spec found beside the registry's extensions.

The package: :mod:`.spec` (the model a ``bench.py`` declares; finding specs), :mod:`.cpu`
(compile-only check), :mod:`.gpu` (timing on GPUs), :mod:`.report` (JSON, Markdown, charts),
:mod:`.cli` (the command), :mod:`.compare` (``--compare``, the regression gate). Extension code imports from here::

    from triton_ext.bench import BenchSpec, Case, Metric, Target, Variant, import_file

    kernels = import_file(__file__, "kernels.py")   # the folder's kernels, no sys.path edit
"""

from .._modules import import_file
from .cpu import CpuCheck, check_cpu, top_level_loops
from .gemm import GEMM_TFLOPS, gemm_inputs
from .gpu import Timing, environment, gpu_slug, run_gpu
from .report import build_report, evaluate_targets, markdown_table, summary_markdown, write_json, write_markdown, write_outputs
from .spec import CPU_TARGET, ROLES, SCHEMA_VERSION, BenchSpec, Case, Metric, Target, Variant, find_specs, load_spec


def main(argv=None) -> int:  # noqa: ANN001 - thin wrapper, see cli.main
    """``triton-ext bench ARGS`` (see :mod:`triton_ext.bench.cli`)."""
    from .cli import main as _main

    return _main(argv)


__all__ = [
    "BenchSpec", "Variant", "Metric", "Target", "Case", "CpuCheck", "Timing",
    "CPU_TARGET", "ROLES", "SCHEMA_VERSION",
    "GEMM_TFLOPS", "gemm_inputs", "load_spec", "find_specs", "check_cpu", "top_level_loops", "run_gpu", "environment", "gpu_slug",
    "build_report", "evaluate_targets", "markdown_table", "summary_markdown",
    "write_json", "write_markdown", "write_outputs", "main", "import_file",
]
