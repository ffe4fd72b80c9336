"""Templates of ``triton-ext new dialect`` and ``triton-ext new language`` (see :mod:`.passes`).

Both follow the worked example ``dialects/RangeFactsIR`` + ``language/RangeFacts``:

``new dialect Name`` writes ``dialects/<Name>/``: an ODS dialect ``triton_ext_<name>`` with one
op, ``scale`` (``%y = triton_ext_<name>.scale %x, 3 : i32``: element-wise wrapping multiply by
a constant; verifier, folder, inliner interface), the pass ``<name>_lower`` that lowers it to
``arith.muli``, three lit tests (parse/print/fold, verifier errors, lowering) and a README.

``new language Name`` writes ``language/<Name>/``: the builder op ``create_<name>_scale``
(``TRITON_EXT_REGISTER_OP``) that creates the dialect's op by name, the Python package
``triton_ext_<name>`` with the ``@builtin`` ``scale(x, factor)`` (type checks, constexpr
factor, errors at the caller's line), a pytest compiling kernels through cubin on the CPU and a
README. The op lives in a dialect scaffolded by ``new dialect`` (``<Name>IR`` unless
``--dialect`` names another), written too when it does not exist yet.

The files are under ``templates/dialect`` and ``templates/language`` (see :mod:`.render`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .render import render, render_entry, render_tree

__all__ = ["DialectNames", "LanguageNames", "render", "dialect_files", "language_files",
           "dialect_entry", "language_entry", "OP_MNEMONIC"]

#: The op the scaffolds define and call; a language scaffold needs a dialect that has it.
OP_MNEMONIC = "scale"

@dataclass(frozen=True)
class DialectNames:
    """Every spelling a scaffolded dialect uses, from its folder name (``DemoIR``)."""

    camel: str     # DemoIR: folder, .td, DemoIRDialect class, CMake target TritonExtDemoIR
    snake: str     # demo_ir: registry key, C++ namespace mlir::triton_ext::demo_ir
    kebab: str     # demo-ir: lit file names
    dialect: str   # triton_ext_demo: the MLIR dialect namespace (ops are triton_ext_demo.scale)

    @property
    def folder(self) -> str:
        return f"dialects/{self.camel}"

    @property
    def lower_pass(self) -> str:
        return f"{self.snake}_lower"

    def values(self) -> dict[str, str]:
        return {
            "camel": self.camel,
            "snake": self.snake,
            "kebab": self.kebab,
            "dialect": self.dialect,
            "folder": self.folder,
            "guard": f"TRITON_EXT_{self.snake.upper()}",
            "lower_pass": self.lower_pass,
            "lower_record": f"TritonExt{self.camel}Lower",
            "lower_macro": f"TRITONEXT{self.camel.upper()}LOWER",
            "lower_flag": f"triton-ext-{self.kebab}-lower",
            "op": OP_MNEMONIC,
        }


def dialect_namespace(snake: str) -> str:
    """``demo_ir`` -> ``triton_ext_demo``: prefixed so that no name clashes with MLIR's or
    Triton's dialects (``gpu``, ``tt``), without the folder's ``IR`` suffix."""
    base = snake[:-3] if snake.endswith("_ir") and len(snake) > 3 else snake
    return f"triton_ext_{base}"


@dataclass(frozen=True)
class LanguageNames:
    """Every spelling a scaffolded language extension uses, with the dialect it builds ops of."""

    camel: str     # Demo: folder, DemoBuilder.cpp, CMake target TritonExtDemo
    snake: str     # demo: registry key, package triton_ext_demo, builder op demo_scale
    dialect: DialectNames

    @property
    def folder(self) -> str:
        return f"language/{self.camel}"

    @property
    def package(self) -> str:
        return f"triton_ext_{self.snake}"

    def values(self) -> dict[str, str]:
        return {
            **self.dialect.values(),
            "dfolder": self.dialect.folder,
            "dsnake": self.dialect.snake,
            "dcamel": self.dialect.camel,
            "lcamel": self.camel,
            "lsnake": self.snake,
            "lfolder": self.folder,
            "package": self.package,
            "opfn": f"{self.snake}_{OP_MNEMONIC}",
        }


def dialect_files(d: DialectNames) -> dict[str, str]:
    """Relative path -> text of a scaffolded ``dialects/<Name>/``."""
    return render_tree("dialect", d.values())


def dialect_entry(d: DialectNames, owner: str) -> str:
    return render_entry("dialect", {**d.values(), "owner": owner})


def language_files(n: LanguageNames) -> dict[str, str]:
    """Relative path -> text of a scaffolded ``language/<Name>/``."""
    return render_tree("language", n.values())


def language_entry(n: LanguageNames, owner: str) -> str:
    return render_entry("language", {**n.values(), "owner": owner})
