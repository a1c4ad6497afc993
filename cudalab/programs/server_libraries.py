"""The server's requests for the math libraries' host APIs (cuBLAS, cuRAND, cuFFT).

A mixin for ``programs.server.Server``: the libraries' semantics live in ``runtime.libraries``;
these methods unpack the shim's request and answer with the library's status code as the first
number (the CUDA code before it stays 0 unless the context is broken), followed by a host result's
bytes, or a message for the student after a zero byte when the call was refused.
"""
from __future__ import annotations

from ..runtime.libraries import blas, fft, rand
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


CAPTURED = 1000   # shim/libraries.c's CAPTURED: the call becomes a host node of the graph, which sends it again


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

    def op_rand_create(self, rng_type, host, blob=b""):
        rng_type = int(rng_type)
        if rng_type not in rand.PSEUDO:
            return _refused(LibraryError(f"curandCreateGenerator: generator type {rng_type} is a quasi-random "
                                         "(Sobol) one; cudalab's cuRAND has only the pseudo-random generators, so "
                                         "it returns CURAND_STATUS_TYPE_ERROR.", rand.TYPE_ERROR))
        handle = max(self.generators, default=0) + 1
        self.generators[handle] = rand.Generator(rng_type, host=host == "1")
        note = b""
        if rand.PSEUDO[rng_type] not in ("XORWOW", "Philox4x32-10"):
            note = (f"\0cudalab: {rand.PSEUDO[rng_type]} numbers come from numpy: the same distribution as "
                    "cuRAND's, not the same sequence (XORWOW, the default, and Philox4x32-10 give cuRAND's own "
                    "numbers).").encode()
        return (rand.SUCCESS, handle), note

    def op_rand_destroy(self, handle, blob=b""):
        try:
            self._generator(handle)
        except LibraryError as e:
            return _refused(e)
        del self.generators[_int(handle)]
        return (rand.SUCCESS,)

    def op_rand_set(self, handle, what, value, blob=b""):
        try:
            gen = self._generator(handle)
        except LibraryError as e:
            return _refused(e)
        if what == "seed":
            gen.seed = _int(value)
        elif what == "offset":
            gen.offset = _int(value)
        elif what == "stream":
            gen.stream = _int(value)
        elif what == "ordering" and int(value) not in (100, 101):
            return (rand.SUCCESS,), (b"\0cudalab: cuRAND's orderings other than CURAND_ORDERING_PSEUDO_DEFAULT "
                                     b"and _BEST are not modeled: the numbers come in the default order.")
        return (rand.SUCCESS,)

    def op_rand_generate(self, handle, kind, n, address, mean, stddev, *offset, blob=b""):
        """A curandGenerate* call. Into a capturing stream it becomes a graph node (CAPTURED, the
        stream, and the generator's offset, which the node sends back as ``offset`` each time the
        graph runs): as with cuRAND's captured kernel, the generator moves on once, at the capture,
        and each launch writes numbers from that offset on (XORWOW's later launches further on:
        rand.replay_shift)."""
        try:
            gen = self._generator(handle)
            if gen.host:
                values = rand.generate(gen, kind, int(n), float.fromhex(mean), float.fromhex(stddev))
                return (rand.SUCCESS, 1), values.tobytes()
            s = self.ctx.stream(gen.stream)
            if s.capture is not None:
                at, gen.offset = gen.offset, gen.offset + rand.used(kind, int(n))
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
        except LibraryError as e:
            return _refused(e)
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

    def op_fft_plan(self, handle, n, inembed, istride, idist, onembed, ostride, odist, fft_type, batch, blob=b""):
        if _int(handle) not in self.plans:
            return _refused(LibraryError(f"cufftMakePlan: {handle} is not a cufftHandle from cufftCreate.",
                                         fft.INVALID_PLAN))
        dims = lambda text: None if text == "-" else [int(x) for x in text.split(",")]  # noqa: E731
        try:
            self.plans[_int(handle)] = fft.make_plan(dims(n), int(fft_type), int(batch), dims(inembed), int(istride),
                                                     int(idist), dims(onembed), int(ostride), int(odist))
        except LibraryError as e:
            return _refused(e)
        return (fft.SUCCESS,)

    def _plan(self, handle) -> fft.Plan:
        plan = self.plans.get(_int(handle))
        if plan is None:
            raise LibraryError(f"cuFFT plan {handle} was never made (cufftPlan*, cufftMakePlan*) or is destroyed.",
                               fft.INVALID_PLAN)
        return plan

    def op_fft_destroy(self, handle, blob=b""):
        if _int(handle) not in self.plans:
            return _refused(LibraryError(f"cufftDestroy: {handle} is not a live cuFFT plan.", fft.INVALID_PLAN))
        del self.plans[_int(handle)]
        return (fft.SUCCESS,)

    def op_fft_stream(self, handle, stream, blob=b""):
        try:
            self._plan(handle).stream = _int(stream)
        except LibraryError as e:
            return _refused(e)
        return (fft.SUCCESS,)

    def op_fft_exec(self, handle, kind, idata, odata, direction, blob=b""):
        try:
            plan = self._plan(handle)
            if self.ctx.stream(plan.stream).capture is not None:
                return (CAPTURED, plan.stream)
            fft.execute(self.ctx, plan, kind, _int(idata), _int(odata), int(direction))
        except LibraryError as e:
            return _refused(e)
        return (fft.SUCCESS,)
