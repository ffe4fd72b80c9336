"""The worker process of isolated stages (:mod:`triton_ext._triton.isolated`).

``python -m triton_ext._stage_worker FD`` imports Triton, says ``ready`` on the socket FD, then
answers each :class:`~triton_ext._triton.isolated.StageRequest` until the socket closes: it loads
the request's plugins, builds the backend's own stage function, and runs it on the request's module
text with the request's passes (the stage runner, with ``TRITON_EXT_STRICT=1`` from the parent, so
any Python-level failure comes back as an error, which the parent then meets in its own run). A
pass that exits or hangs here ends or stalls this process only.
"""

from __future__ import annotations

import pickle
import sys
from multiprocessing.connection import Connection
from typing import Any


def serve(fd: int) -> None:
    """Answer requests on ``fd`` until the parent closes the connection."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    from ._loader import load
    from ._triton import install_tap, reparse, wrap_stage
    from ._triton.isolated import StageRequest
    from ._triton.tap import runtime_knobs

    install_tap()
    runtime_knobs().add_stages_inspection_hook = None  # the stages below are wrapped here, once
    connection = Connection(fd)
    connection.send_bytes(b"ready")
    while True:
        try:
            request: StageRequest = pickle.loads(connection.recv_bytes())
        except EOFError:
            return
        try:
            for path, extension in request.libraries:
                load(path, extension)
            backend = make_backend(request.target)
            stages: dict[str, Any] = {}
            backend.add_stages(stages, request.options, request.language)
            context = ir.context()
            ir.load_dialects(context)
            backend.load_dialects(context)
            module = reparse(request.text, context)
            wrap_stage(request.stage, stages[request.stage], request.entries)(module, request.metadata)
            reply: tuple[Any, ...] = ("ok",)
        except Exception as exc:  # noqa: BLE001  (the parent runs the stage itself)
            reply = ("error", f"{type(exc).__name__}: {exc}"[:2000])
        connection.send_bytes(pickle.dumps(reply))


if __name__ == "__main__":
    serve(int(sys.argv[1]))
