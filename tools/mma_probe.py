"""Measure the tensor cores of this machine's GPU: wmma fragment layouts and how mma rounds.

wmma's fragment layouts are implementation-defined (PTX ISA: "the mapping of matrix elements to
fragments is unspecified"), and the order and rounding of the tensor cores' sums are not documented
at all, so the emulator's model (cudalab/emulator/mma.py) is fitted to what a Hopper GPU answers here
(an H200: the H100's GH100 chip):

* **layouts**: every wmma fragment (matrix a/b/c, shape, type, row/col) is loaded from a matrix whose
  elements are their own indices (in two passes, index % 64 and index // 64, exact in every type), and
  each lane's x[i] is written out; accumulator stores write lane * num_elements + i through
  store_matrix_sync to see where each element goes.
* **arithmetic**: wmma and mma.sync tiles of every type, with crafted inputs: products far below the
  accumulator (how many bits survive the alignment), cancelling pairs at random positions of k (which
  products are summed together), denormals, inf/NaN, overflow, random numbers of wide range, and for
  tf32 full float32 bits (what the tensor core keeps of them).

    python tools/mma_probe.py --gpu tests/mma_probe_h200.npz   # on a GPU: run and save the answers
    python tools/mma_probe.py --check                          # the emulator against the saved answers

Both modes run the same kernels on the same inputs through cudalab (``cudalab.use("gpu")`` or the
emulator with the H100 profile), so a difference is a difference of the model.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from kernels.mma import bf16_from_f32, mma_sync_source  # noqa: E402

SAVED = os.path.join(ROOT, "tests", "mma_probe_h200.npz")
OPTIONS = ["-arch=compute_90"]

HEADER = r'''
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;
template <typename F> __device__ void put(const F& f, float* out, int at) {
  for (int i = 0; i < f.num_elements; ++i) out[at + threadIdx.x * f.num_elements + i] = static_cast<float>(f.x[i]);
}
template <typename Use, int M, int N, int K, typename FT, typename L, typename TS>
__device__ void dump_load(const TS* lo, const TS* hi, float* out, int ld) {
  wmma::fragment<Use, M, N, K, FT, L> f;
  wmma::load_matrix_sync(f, lo, ld); put(f, out, 0);
  wmma::load_matrix_sync(f, hi, ld); put(f, out, 32 * f.num_elements);
}
template <int M, int N, int K, typename T>
__device__ void dump_acc(const T* lo, const T* hi, float* out, int ld, bool row) {
  wmma::fragment<wmma::accumulator, M, N, K, T> f;
  wmma::layout_t l = row ? wmma::mem_row_major : wmma::mem_col_major;
  wmma::load_matrix_sync(f, lo, ld, l); put(f, out, 0);
  wmma::load_matrix_sync(f, hi, ld, l); put(f, out, 32 * f.num_elements);
}
template <int M, int N, int K, typename T> __device__ void store_acc(T* out, int ld, bool row) {
  wmma::fragment<wmma::accumulator, M, N, K, T> f;
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = static_cast<T>(threadIdx.x * f.num_elements + i);
  wmma::store_matrix_sync(out, f, ld, row ? wmma::mem_row_major : wmma::mem_col_major);
}
// one tile per 32-thread block: A row-major M x K, B column-major (B^T row-major N x K), C, D row-major
template <typename FA, typename TA, typename TC, int M, int N, int K, bool INT>
__device__ void tile(const TA* a, const TA* b, const TC* c, TC* d, bool sat) {
  wmma::fragment<wmma::matrix_a, M, N, K, FA, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, FA, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, M, N, K, TC> fc;
  int t = blockIdx.x;
  wmma::load_matrix_sync(fa, a + t * M * K, K);
  wmma::load_matrix_sync(fb, b + t * N * K, K);
  wmma::load_matrix_sync(fc, c + t * M * N, N, wmma::mem_row_major);
  if constexpr (INT) wmma::mma_sync(fc, fa, fb, fc, sat);
  else wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d + t * M * N, fc, N, wmma::mem_row_major);
}
'''

# wmma element types: C++ fragment type, memory type, numpy storage, accumulators
TYPES = {
    "f16": ("half", "half", np.float16, ("f32", "f16")),
    "bf16": ("__nv_bfloat16", "__nv_bfloat16", np.uint16, ("f32",)),
    "tf32": ("wmma::precision::tf32", "float", np.float32, ("f32",)),
    "f64": ("double", "double", np.float64, ("f64",)),
    "s8": ("signed char", "signed char", np.int8, ("s32",)),
    "u8": ("unsigned char", "unsigned char", np.uint8, ("s32",)),
}
SHAPES = {"f16": [(16, 16, 16), (32, 8, 16), (8, 32, 16)], "bf16": [(16, 16, 16), (32, 8, 16), (8, 32, 16)],
          "tf32": [(16, 16, 8)], "f64": [(8, 8, 4)], "s8": [(16, 16, 16), (32, 8, 16), (8, 32, 16)],
          "u8": [(16, 16, 16), (32, 8, 16), (8, 32, 16)]}
ACC = {"f32": ("float", np.float32), "f16": ("half", np.float16), "s32": ("int", np.int32),
       "f64": ("double", np.float64)}
# mma.sync forms whose arithmetic is probed beside wmma's: (shape, dtype, atype, ctype)
MMA_SYNC = [("m16n8k16", "f32", "f16", "f32"), ("m16n8k8", "f32", "f16", "f32"), ("m16n8k16", "f16", "f16", "f16"),
            ("m16n8k16", "f32", "bf16", "f32"), ("m16n8k8", "f32", "bf16", "f32"), ("m16n8k4", "f32", "tf32", "f32"),
            ("m16n8k8", "f32", "tf32", "f32"), ("m8n8k4", "f64", "f64", "f64"), ("m16n8k16", "f64", "f64", "f64")]


def as_memory(values, typ):
    """Small exact numbers in a type's memory representation."""
    if typ == "bf16":
        return bf16_from_f32(np.asarray(values, np.float32))
    return np.asarray(values).astype(TYPES[typ][2] if typ in TYPES else ACC[typ][1])


# ---------------------------------------------------------------- the probes

class Probe:
    """One kernel launch: name, grid, args (numpy arrays copied in and out), and what it measures."""

    def __init__(self, name, kernel, grid, args, src):
        self.name, self.kernel, self.grid, self.args, self.src = name, kernel, grid, args, src


def layout_probes():
    out = []
    for typ, (ft, mt, _, accs) in TYPES.items():
        for m, n, k in SHAPES[typ]:
            for use, rows, cols in (("matrix_a", m, k), ("matrix_b", k, n)):
                for lay in ("row", "col"):
                    ld = cols if lay == "row" else rows
                    name = f"layout_{use[-1]}_{typ}_m{m}n{n}k{k}_{lay}"
                    src = (f"__global__ void {name}(const {mt}* lo, const {mt}* hi, float* out) {{ "
                           f"dump_load<wmma::{use}, {m}, {n}, {k}, {ft}, wmma::{lay}_major>(lo, hi, out, {ld}); }}")
                    idx = np.arange(rows * cols)
                    out.append(Probe(name, name, 1, [as_memory(idx % 64, typ), as_memory(idx // 64, typ),
                                                     np.zeros(2 * 32 * 64, np.float32)], src))
            for acc in accs:
                ct = ACC[acc][0]
                for lay in ("row", "col"):
                    name = f"layout_c_{acc}_m{m}n{n}k{k}_{lay}"
                    if any(p.name == name for p in out):
                        continue
                    ld = n if lay == "row" else m
                    idx = np.arange(m * n)
                    src = (f"__global__ void {name}(const {ct}* lo, const {ct}* hi, float* out) {{ "
                           f"dump_acc<{m}, {n}, {k}, {ct}>(lo, hi, out, {ld}, {str(lay == 'row').lower()}); }}")
                    out.append(Probe(name, name, 1, [as_memory(idx % 64, acc), as_memory(idx // 64, acc),
                                                     np.zeros(2 * 32 * 64, np.float32)], src))
                    name = f"store_{acc}_m{m}n{n}k{k}_{lay}"
                    src = (f"__global__ void {name}({ct}* out) {{ "
                           f"store_acc<{m}, {n}, {k}, {ct}>(out, {ld}, {str(lay == 'row').lower()}); }}")
                    out.append(Probe(name, name, 1, [np.zeros(m * n, ACC[acc][1])], src))
    return out


def elements(r, typ, n, family):
    """n input elements of a type for one family of experiments, as float64 values before storing."""
    lim = {"f16": 14, "bf16": 100, "tf32": 100, "f64": 900}.get(typ, 14)
    sign = np.where(r.random(n) < 0.5, -1.0, 1.0)
    frac = 1 + np.floor(r.random(n) * 1024) / 1024
    if family == "normal":
        v = r.standard_normal(n)
    elif family == "wide":
        v = sign * frac * np.exp2(r.integers(-min(lim, 30), min(lim, 30) + 1, n))
    elif family == "tiny":                                   # products ~2^-30..2^-16 beside c ~1
        v = sign * frac * np.exp2(r.integers(-15, -7, n))
    elif family == "denormal":
        low = {"f16": -24, "bf16": -133, "tf32": -149, "f64": -1074}.get(typ, -24)
        v = sign * np.exp2(r.integers(low, low + 12, n)) * np.floor(1 + r.random(n) * 7)
    elif family == "huge":
        v = sign * frac * np.exp2(r.integers(lim - 6, lim, n))
    else:
        v = r.standard_normal(n) * 4
    if family == "specials":
        at = r.choice(n, max(1, n // 24), replace=False)
        v[at] = r.choice([np.inf, -np.inf, np.nan], at.size)
    if typ == "tf32" and family != "specials":
        # the low 13 bits of a float32 that tf32 has no room for: random, to see what is kept of them
        bits = np.asarray(v, np.float32).view(np.uint32) | r.integers(0, 1 << 13, n).astype(np.uint32)
        return bits.view(np.float32).astype(np.float64)
    return v


FAMILIES = ("normal", "wide", "tiny", "cancel", "denormal", "huge", "specials", "cancel")


def arith_inputs(r, typ, acc, m, n, k, per_family=2):
    """(A, B^T, C) of shape (tiles, M, K), (tiles, N, K), (tiles, M, N) as float64 values."""
    tiles = len(FAMILIES) * per_family
    a = np.zeros((tiles, m, k))
    b = np.zeros((tiles, n, k))
    c = np.zeros((tiles, m, n))
    for t in range(tiles):
        fam = FAMILIES[t // per_family]
        src_fam = "normal" if fam == "cancel" else fam
        a[t] = elements(r, typ, m * k, src_fam).reshape(m, k)
        b[t] = elements(r, typ, n * k, src_fam).reshape(n, k)
        cscale = {"tiny": 1.0, "huge": 2.0 ** 20, "denormal": 2.0 ** -130}.get(fam, 4.0)
        c[t] = r.standard_normal((m, n)) * cscale
        if fam == "cancel":
            # two big products that cancel at random positions of k, the rest small: is the small part
            # aligned to the big ones (summed together) or to the result (summed after)?
            k1, k2 = r.choice(k, 2, replace=False)
            big = 2.0 ** (8 if typ == "f16" else 14)
            a[t][:, k1] = big * np.where(r.random(m) < 0.5, -1, 1)
            a[t][:, k2] = a[t][:, k1]
            b[t][:, k1] = big
            b[t][:, k2] = -big
            a[t][:, [q for q in range(k) if q not in (k1, k2)]] *= 2.0 ** -6
    if acc == "s32":
        lo, hi = (-128, 127) if typ == "s8" else (0, 255)
        a = r.integers(lo, hi + 1, a.shape).astype(np.float64)
        b = r.integers(lo, hi + 1, b.shape).astype(np.float64)
        a[: tiles // 4] = hi
        b[: tiles // 4] = hi if typ == "u8" else lo
        c = r.integers(-2 ** 31, 2 ** 31, c.shape).astype(np.float64)
        c[: tiles // 2] = 2 ** 31 - 1 - r.integers(0, 2 ** 20, c[: tiles // 2].shape)
    return a, b, c


def memory(values, typ):
    with np.errstate(over="ignore"):        # edge families overflow narrow types on purpose
        return _memory(values, typ)


def _memory(values, typ):
    if typ == "bf16":
        return bf16_from_f32(values.astype(np.float32))
    if typ == "tf32":
        return values.astype(np.float32)
    return values.astype(TYPES[typ][2] if typ in TYPES else ACC[typ][1])


def arith_probes():
    out = []
    for typ, (ft, mt, _, accs) in TYPES.items():
        for m, n, k in SHAPES[typ][:1] if typ in ("s8", "u8") else SHAPES[typ]:
            for acc in accs:
                for sat in ((False, True) if acc == "s32" else (False,)):
                    name = f"wmma_{typ}_{acc}_m{m}n{n}k{k}" + ("_sat" if sat else "")
                    ct = ACC[acc][0]
                    src = (f"__global__ void {name}(const {mt}* a, const {mt}* b, const {ct}* c, {ct}* d) {{ "
                           f"tile<{ft}, {mt}, {ct}, {m}, {n}, {k}, {str(acc == 's32').lower()}>"
                           f"(a, b, c, d, {str(sat).lower()}); }}")
                    r = np.random.default_rng(zlib.crc32(name.encode()))
                    a, b, c = arith_inputs(r, typ, acc, m, n, k)
                    args = [memory(a, typ).ravel(), memory(b, typ).ravel(), memory(c, acc).ravel()]
                    out.append(Probe(name, name, a.shape[0], args + [np.zeros_like(args[2])], src))
    for shape, dt, at, ct in MMA_SYNC:
        name = f"mma_{shape}_{dt}_{at}_{ct}"
        m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
        r = np.random.default_rng(zlib.crc32(name.encode()))
        a, b, c = arith_inputs(r, at, ct, m, n, k)

        def words(x, typ):            # operands as mma_sync_source's kernels take them
            x = np.ascontiguousarray(memory(x, typ).ravel())
            return x if x.dtype in (np.float64, np.float32, np.int32) and typ != "tf32" else x.view(np.uint32)
        args = [words(a, at), words(b, at), words(c, ct)]
        out.append(Probe(name, name, a.shape[0], args + [np.zeros_like(args[2])],
                         mma_sync_source(name, shape, dt, at, ct)))
    return out


def probes():
    return layout_probes() + arith_probes()


# ---------------------------------------------------------------- running and checking

def fingerprint(arrays):
    """crc32 of the inputs: the saved answers hold outputs only, the inputs are made again from seeds."""
    return "%08x" % zlib.crc32(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays))


def run_all(backend):
    """Run every probe on ``backend`` ("gpu" or "emu"); {"<probe>/in<k>" and "/out<k>": arrays}."""
    import cudalab
    from cudalab.device import current, set_device
    ps = probes()
    before = current()
    if backend == "emu":
        set_device("H100")
    cudalab.use(backend)
    try:
        mod = cudalab.compile(HEADER + "\n".join(p.src for p in ps), options=OPTIONS)
        got = {}
        for p in ps:
            args = [a.copy() for a in p.args]
            t0 = time.time()
            mod.get_kernel(p.name).launch(p.grid, 32, tuple(args))
            cudalab.synchronize()
            got[f"{p.name}/inputs"] = np.array(fingerprint(p.args))
            got[f"{p.name}/out"] = args[-1]          # every probe writes its last argument only
            print(f"{p.name}: {time.time() - t0:.2f} s", flush=True)
    finally:
        cudalab.use("emu")
        set_device(before)
    return got


def check(saved=SAVED):
    """Run the probes on the emulator and count the outputs that differ from the GPU's answers."""
    want = dict(np.load(saved))
    got = run_all("emu")
    bad = 0
    for key in sorted(k for k in want if k.endswith("/out")):
        name = key[:-4]
        if str(want[f"{name}/inputs"]) != str(got[f"{name}/inputs"]):
            print(f"STALE {name}: its inputs changed since the GPU ran it; run --gpu again")
            bad += 1
            continue
        g, w = got[key], want[key]
        diff = g.view(np.uint8).reshape(g.size, -1) != w.view(np.uint8).reshape(w.size, -1)
        n = int(diff.any(axis=1).sum())
        if n:
            bad += 1
            i = int(np.flatnonzero(diff.any(axis=1))[0])
            print(f"DIFF {name}: {n} of {w.size} elements, first at {i}: emulator {g[i]!r}, GPU {w[i]!r}")
    print(f"{bad} probes differ from the GPU" if bad else f"all {len(want) // 2} probes match the GPU bit for bit")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", metavar="OUT.npz", help="run the probes on the GPU and save inputs and answers")
    ap.add_argument("--check", nargs="?", const=SAVED, metavar="NPZ", help="compare the emulator with saved answers")
    a = ap.parse_args()
    if a.gpu:
        got = run_all("gpu")
        np.savez_compressed(a.gpu, **got)
        print(f"saved {len(got)} arrays to {a.gpu}")
    elif a.check:
        sys.exit(1 if check(a.check) else 0)
    else:
        ap.print_help()


if __name__ == "__main__":
    main()
