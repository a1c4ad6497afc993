"""The server's requests for the math libraries' host APIs (cuBLAS, cuRAND).

A mixin for ``programs.server.Server``: the libraries' semantics live in ``runtime.libraries``;
these methods unpack the shim's request and answer with the library's status code as the first
number (the CUDA code before it stays 0 unless the context is broken), followed by a host result's
bytes, or a message for the student after a zero byte when the call was refused.
"""
from __future__ import annotations

from ..runtime.libraries import blas
from ..runtime.libraries.operands import LibraryError
from .server_textures import _int


def _value(token: str):
    """A shim argument: h<hex bytes> (a scalar behind a host pointer), d<address> (behind a device
    pointer), or a number."""
    if token.startswith("h"):
        return ("host", bytes.fromhex(token[1:]))
    if token.startswith("d"):
        return ("device", _int(token[1:]))
    return _int(token)


CAPTURED = 1000   # the shim's CAPTURED: it makes the call a host node of the graph, which sends it again


def _refused(e: LibraryError):
    return (e.status,), b"\0" + f"cudalab: {e.args[0]}".encode()


class LibraryRequests:
    """op_* handlers for the library shims (mixed into Server)."""

    def op_blas(self, name, stream, device_scalars, *args, blob=b""):
        values = {k: _value(v) for k, v in (a.split("=", 1) for a in args)}
        if self.ctx.stream(_int(stream)).capture is not None:
            return (CAPTURED,)
        try:
            returned = blas.run(self.ctx, name, _int(stream), values, device_scalars == "1")
        except LibraryError as e:
            return _refused(e)
        return (blas.SUCCESS,), returned
