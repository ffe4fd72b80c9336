"""Developer tooling of triton-ext: the ``triton-ext`` command and what it runs.

Nothing here is imported when a kernel is compiled; the runtime is the top-level package.

- :mod:`.cli`: the ``triton-ext`` command (``list``, ``info``, ``doctor``, ``opt`` and the
  subcommands below).
- :mod:`.toolchain`: the C++ toolchain (clang-19, LLVM/MLIR headers, mlir-tblgen) in a cache.
- :mod:`.build`: configures and builds the plugins with CMake.
- :mod:`.wheel`: the core wheel and one wheel per extension.
- :mod:`.scaffold`: ``triton-ext new``; templates are files under ``scaffold/templates``.
- :mod:`.testcmd`: ``triton-ext test``, an extension's lit and pytest tests.
- :mod:`.pipeline`: ``triton-ext pipeline``, the pass pipeline per stage with plugin passes and
  overridden built-ins in place (``--diff`` between two enabled sets).
- :mod:`.tune`: ``triton-ext tune``, the best pass set for a bench spec's kernels.

The benchmark is public authoring API and lives in :mod:`triton_ext.bench`.
"""
