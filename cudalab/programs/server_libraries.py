"""The server's requests for the math libraries' host APIs (cuBLAS, cuBLASLt, cuSPARSE, cuRAND, cuFFT).

A mixin for ``programs.server.Server``: the libraries' semantics live in ``runtime.libraries``;
these methods unpack the shim's request and answer with the library's status code as the first
number (the CUDA code before it stays 0 unless the context is broken), followed by a host result's
bytes, or a message for the student after a zero byte when the call was refused (every handler is
``@answers``: a ``LibraryError`` becomes that refusal in one place).
"""
from __future__ import annotations

import functools

from ..runtime.libraries import blas, blaslt, fft, rand, sparse
from ..runtime.libraries.operands import LibraryError
from .server_textures import _int

# "library NAME ROUTINE ...": the module of runtime.libraries that computes NAME's routines
ROUTINES = {"blas": blas, "blaslt": blaslt, "sparse": sparse}


def _value(token: str):
    """A shim argument: h<hex bytes> (a scalar behind a host pointer), d<address> (behind a device
    pointer), or a number."""
    if token.startswith("h"):
        return ("host", bytes.fromhex(token[1:]))
    if token.startswith("d"):
        return ("device", _int(token[1:]))
    return _int(token)


CAPTURED = 1000   # shim/libraries.c's CAPTURED: the call becomes a host node of the graph, which sends it again


def answers(handler):
    """A handler whose ``LibraryError`` is the library's refusal: its status code, and the message
    for the student after a zero byte (the shim says it once)."""
    @functools.wraps(handler)
    def answer(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except LibraryError as e:
            return (e.status,), b"\0" + f"cudalab: {e.args[0]}".encode()
    return answer


class LibraryRequests:
    """op_* handlers for the library shims (mixed into Server)."""

    @answers
    def op_library(self, library, name, stream, device_scalars, *args, blob=b""):
        """One routine of cuBLAS, cuBLASLt or cuSPARSE, its C arguments by name (shim/libraries.c's request)."""
        values = {k: _value(v) for k, v in (a.split("=", 1) for a in args)}
        if self.ctx.stream(_int(stream)).capture is not None:
            return (CAPTURED,)
        module = ROUTINES[library]
        return (module.SUCCESS,), module.run(self.ctx, name, _int(stream), values, device_scalars == "1")

    # ------------------------------------------------------------------ cuRAND
    @property
    def generators(self) -> dict:
        """curandGenerator_t (a number) -> rand.Generator."""
        return self.__dict__.setdefault("_generators", {})

    def _generator(self, handle) -> rand.Generator:
        gen = self.generators.get(_int(handle))
        if gen is None:
            raise LibraryError(f"generator {handle} is not a live curandGenerator_t (never created, or destroyed).",
                               rand.NOT_INITIALIZED)
        return gen

    @answers
    def op_rand_create(self, rng_type, host, blob=b""):
        rng_type = int(rng_type)
        if rng_type not in rand.PSEUDO and rng_type not in rand.QUASI:
            raise LibraryError(f"curandCreateGenerator: generator type {rng_type} is a scrambled or 64-bit Sobol one; "
                               "cudalab's cuRAND has the pseudo-random generators and Sobol32, so it returns "
                               "CURAND_STATUS_TYPE_ERROR.", rand.TYPE_ERROR)
        handle = max(self.generators, default=0) + 1
        self.generators[handle] = rand.Generator(rng_type, host=host == "1")
        note = b""
        if rng_type in rand.PSEUDO and rand.PSEUDO[rng_type] not in ("XORWOW", "Philox4x32-10"):
            note = (f"\0cudalab: {rand.PSEUDO[rng_type]} numbers come from numpy: the same distribution as "
                    "cuRAND's, not the same sequence (XORWOW, the default, and Philox4x32-10 give cuRAND's own "
                    "numbers).").encode()
        return (rand.SUCCESS, handle), note

    @answers
    def op_rand_destroy(self, handle, blob=b""):
        self._generator(handle)
        del self.generators[_int(handle)]
        return (rand.SUCCESS,)

    @answers
    def op_rand_set(self, handle, what, value, blob=b""):
        gen = self._generator(handle)
        if what == "seed":
            gen.seed = _int(value)
        elif what == "offset":
            gen.offset = _int(value)
        elif what == "dims":
            if gen.rng_type not in rand.QUASI:
                raise LibraryError("curandSetQuasiRandomGeneratorDimensions: the generator is a pseudo-random one; "
                                   "only a quasi-random (Sobol) generator has dimensions.", rand.TYPE_ERROR)
            if not 1 <= int(value) <= rand.SOBOL_DIMENSIONS:
                raise LibraryError(f"curandSetQuasiRandomGeneratorDimensions: {value} dimensions; cuRAND's Sobol "
                                   f"generators have 1 to {rand.SOBOL_DIMENSIONS:,}.", rand.OUT_OF_RANGE)
            gen.dims = int(value)
        elif what == "stream":
            gen.stream = _int(value)
        elif what == "ordering" and int(value) not in (100, 101):
            return (rand.SUCCESS,), (b"\0cudalab: cuRAND's orderings other than CURAND_ORDERING_PSEUDO_DEFAULT "
                                     b"and _BEST are not modeled: the numbers come in the default order.")
        return (rand.SUCCESS,)

    @answers
    def op_rand_directions(self, vector_set, blob=b""):
        """curandGetDirectionVectors32's table, copied once into the program's memory by the shim."""
        return (rand.SUCCESS,), rand.direction_vectors(int(vector_set)).tobytes()

    @answers
    def op_rand_generate(self, handle, kind, n, address, mean, stddev, *offset, blob=b""):
        """A curandGenerate* call. Into a capturing stream it becomes a graph node (CAPTURED, the
        stream, and the generator's offset, which the node sends back as ``offset`` each time the
        graph runs): as with cuRAND's captured kernel, the generator moves on once, at the capture,
        and each launch writes numbers from that offset on (XORWOW's later launches further on:
        rand.replay_shift)."""
        gen = self._generator(handle)
        if gen.host:
            values = rand.generate(gen, kind, int(n), float.fromhex(mean), float.fromhex(stddev))
            return (rand.SUCCESS, 1), values.tobytes()
        s = self.ctx.stream(gen.stream)
        if s.capture is not None:
            at, gen.offset = gen.offset, gen.offset + rand.used(kind, int(n), gen)
            return (CAPTURED, s.handle, at)
        now = gen.offset
        if offset:
            runs = self.__dict__.setdefault("_rand_replays", {})
            key = (handle, kind, n, address, offset[0])
            runs[key] = runs.get(key, -1) + 1
            gen.offset = _int(offset[0]) + runs[key] * rand.replay_shift(gen, kind, int(n))
        rand.fill(self.ctx, gen, kind, int(n), _int(address), float.fromhex(mean), float.fromhex(stddev))
        if offset:
            gen.offset = now
        return (rand.SUCCESS, 0)

    # ------------------------------------------------------------------ cuFFT
    @property
    def plans(self) -> dict:
        """cufftHandle -> fft.Plan (None between cufftCreate and cufftMakePlan*)."""
        return self.__dict__.setdefault("_plans", {})

    def op_fft_create(self, blob=b""):
        handle = max(self.plans, default=0) + 1
        self.plans[handle] = None
        return (fft.SUCCESS, handle)

    @answers
    def op_fft_plan(self, handle, n, inembed, istride, idist, onembed, ostride, odist, fft_type, batch, blob=b""):
        if _int(handle) not in self.plans:
            raise LibraryError(f"cufftMakePlan: {handle} is not a cufftHandle from cufftCreate.", fft.INVALID_PLAN)
        dims = lambda text: None if text == "-" else [int(x) for x in text.split(",")]  # noqa: E731
        self.plans[_int(handle)] = fft.make_plan(dims(n), int(fft_type), int(batch), dims(inembed), int(istride),
                                                 int(idist), dims(onembed), int(ostride), int(odist))
        return (fft.SUCCESS,)

    def _plan(self, handle) -> fft.Plan:
        plan = self.plans.get(_int(handle))
        if plan is None:
            raise LibraryError(f"cuFFT plan {handle} was never made (cufftPlan*, cufftMakePlan*) or is destroyed.",
                               fft.INVALID_PLAN)
        return plan

    @answers
    def op_fft_destroy(self, handle, blob=b""):
        if _int(handle) not in self.plans:
            raise LibraryError(f"cufftDestroy: {handle} is not a live cuFFT plan.", fft.INVALID_PLAN)
        del self.plans[_int(handle)]
        return (fft.SUCCESS,)

    @answers
    def op_fft_stream(self, handle, stream, blob=b""):
        self._plan(handle).stream = _int(stream)
        return (fft.SUCCESS,)

    @answers
    def op_fft_exec(self, handle, kind, idata, odata, direction, blob=b""):
        plan = self._plan(handle)
        if self.ctx.stream(plan.stream).capture is not None:
            return (CAPTURED, plan.stream)
        fft.execute(self.ctx, plan, kind, _int(idata), _int(odata), int(direction))
        return (fft.SUCCESS,)
