"""``python -m triton_ext._stage_worker FD``: the worker process of isolated stages
(:mod:`triton_ext._triton.isolated`), serving requests on the socket FD until it closes."""

import sys

from ._triton.isolated import serve

if __name__ == "__main__":
    serve(int(sys.argv[1]))
