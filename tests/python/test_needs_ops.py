"""The registry's ``needs_ops``: a pass that declares them is not compiled, as a transparent-mode
variant, for a kernel whose TTIR has none of them (``triton_ext._variants.may_change``).

A wrong declaration would only cost a speedup, never a result, but it would cost it silently: so
every declaration is held here to the corpus. For each pass that declares ``needs_ops`` and each
corpus kernel whose no-pass TTIR has none of them, the pass's variant, compiled as the mode
compiles it, must be the no-pass kernel.
"""

from __future__ import annotations

import pytest

from tests.corpus.corpus_kernels import CORPUS, CorpusKernel
from tests.python.test_manifest import VALID
from triton_ext._errors import ManifestError
from triton_ext._manifest import load_manifest, parse_registry
from triton_ext._selection import Selection, build
from triton_ext._variants import may_change
from triton_ext.testing import compile_through_cubin, compile_unless_stock, require_built

DECLARED = [p for p in load_manifest().passes if p.needs_ops]


def test_the_registry_declares_the_operations_its_loop_and_dot_passes_need() -> None:
    declared = {p.name: p.needs_ops for p in DECLARED}
    assert declared["loop_split"] == ("scf.for",)
    assert declared["grid_swizzle"] == declared["nvidia_pipeline_deeper"] == ("tt.dot", "tt.dot_scaled")


@pytest.mark.parametrize("kernel", [k for k in CORPUS if not k.gluon], ids=lambda k: k.name)
def test_a_pass_leaves_every_corpus_kernel_without_its_operations_as_it_was(kernel: CorpusKernel) -> None:
    manifest = load_manifest()
    require_built(*sorted({manifest.extension_of(p).name for p in DECLARED}))
    stock = compile_through_cubin(kernel.fn, kernel.signature, kernel.constexprs, options=kernel.options())
    lacking = [p for p in DECLARED if not may_change(Selection.of(build([p.name], None)), stock.asm["ttir"])]
    for spec in lacking:
        variant = compile_unless_stock(kernel.fn, kernel.signature, kernel.constexprs, passes=[spec.name], stock=stock,
                                       options=kernel.options())
        assert variant is None, (f"{spec.name} declares needs_ops {list(spec.needs_ops)}, which {kernel.name} "
                                 "lacks, but changed it: fix the declaration in registry.yaml")


def test_a_kernel_with_one_of_the_operations_may_be_changed() -> None:
    matmul = next(k for k in CORPUS if k.name == "matmul")
    stock = compile_through_cubin(matmul.fn, matmul.signature, matmul.constexprs, options=matmul.options())
    for name in ("grid_swizzle", "nvidia_pipeline_deeper", "loop_split"):
        assert may_change(Selection.of(build([name], None)), stock.asm["ttir"]), name
    # Matched as a whole operation name: `scf.forall` is not `scf.for`, nor is a longer name.
    loops = Selection.of(build(["loop_split"], None))
    assert not may_change(loops, "%r = scf.forall (%i) in (4) {")
    assert not may_change(loops, "%0 = tt.load %p : tensor<128xf32> loc(\"my.scf.forfile\")")
    assert may_change(loops, "  %5 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f32) : i32 {")
    dots = Selection.of(build(["grid_swizzle"], None))
    assert may_change(dots, "%0 = tt.dot_scaled %a scale %s, %b : tensor<...>")  # it declares both
    assert not may_change(dots, "%0 = tt.load %p : tensor<128xf32>")
    assert may_change(dots, None)  # the no-pass TTIR is not known: compile the variant
    # A pass without the declaration (and so any selection holding one) may change any kernel.
    assert may_change(Selection.of(build(["grid_swizzle", "nvidia_auto_pdl"], None)), "tt.load")


@pytest.mark.parametrize("needs,message", [
    ("[tt.dot, scf.for]", None),
    ("[dot]", "passes.loop_split.needs_ops[0]: expected an operation name like 'tt.dot', found 'dot'"),
    ("tt.dot", "passes.loop_split.needs_ops: expected a list of strings"),
])
def test_needs_ops_must_name_operations(needs: str, message: str | None) -> None:
    text = VALID.replace("after: loop_unroll", f"after: loop_unroll\n        needs_ops: {needs}")
    if message is None:
        assert parse_registry(text, "registry.yaml").find_pass("loop_split").needs_ops == ("tt.dot", "scf.for")
        return
    with pytest.raises(ManifestError) as info:
        parse_registry(text, "registry.yaml")
    assert message in str(info.value)
