"""Random, well-defined CUDA C++ kernels for differential testing (emulator against a real GPU).

``generate(seed) -> Program``: one ``extern "C"`` kernel named ``fz<seed>`` (plus its own
``__device__`` helpers, all named after the seed, so that many programs can share one source and
one PTX module). The same seed always gives the same program and the same inputs.

Every kernel has the signature ::

    fz<seed>(const unsigned* ia, const float* fa, unsigned* oi, float* of, unsigned* acc,
             unsigned p0, float p1)

``ia``/``fa`` are 256 random inputs (with the float edge values: +-0, +-inf, NaNs with payloads,
denormals, huge and tiny numbers), ``oi``/``of`` get ``NI``/``NF`` values per thread (its final
state), and ``acc`` is 18 words (two per kind of atomic) that atomics with order-independent results update.

What "well-defined" means here (so that any difference is the emulator's, not the program's):

* integers are unsigned (wrapping is defined); signed views only where they cannot overflow
  (division by ``(b & 0x7fffffff) | 1``); divisors ``| 1``; shift counts ``& 31``;
* every index is masked to its array (``& 255``, ``& 7``, ``% nt``);
* shared memory is written by a thread and read by others only after ``__syncthreads()``, and a
  barrier ends each phase before the next write; barriers sit in block-uniform code only
  (top level, ``if`` on ``blockIdx``, loops over the parameter ``p0``);
* warp operations run in converged code with the mask of the lanes that exist (``FM``, computed
  from the block size, so a partial last warp is handled), or inside a branch with the mask
  ``__ballot_sync(FM, c)`` of the lanes that took it; a shuffle's result is used only where its
  source lane exists (the guard mirrors the PTX ``shfl`` rules for widths), otherwise the lane
  keeps its own value;
* atomics never use their return value, and only operations whose final result does not depend
  on the order (add/max/min/or/and/xor on integers, inc with one limit) are used;
* early ``return`` only in the tail of a kernel, after its last warp operation or barrier;
* loops have bounded, data-dependent trip counts (``k < (x & 7)``); no float atomics, no
  approximate math (``.approx`` may differ in the last ulp by design).

Version 2 (the default; ``VERSIONS`` below) adds tensor cores, asynchronous copies, barriers,
``elect.sync``, DPX, fp8 and half/bf16 math; ``ops_v2.py`` has them and the rules that keep them
well-defined (whole warps for tensor cores, a copy read only after its wait, barriers initialised once
and used in block-uniform code).
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

import numpy as np

NI = 4            # unsigned outputs per thread
NF = 4            # float outputs per thread
NIN = 256         # input words in ia and fa
NACC = 18         # atomic accumulators: two words per kind of atomic
SENTINEL_I = 0xDEADBEEF
SENTINEL_F = 0x7FBADBAD   # a NaN bit pattern nothing computes

# Generator versions. A version's programs never change, so recorded GPU outputs stay valid:
# 1 (the run of 2026-11-23): scalar integer/float code, warps, shared memory, atomics; compute_80.
# 2: version 1's operations plus the device features of the Programming Guide's later chapters
#    (tensor cores, asynchronous copies and barriers, named barriers, elect, DPX, fp8, half/bf16
#    math); compute_90, so it runs on the emulator's H100 profile. Its random choices differ from
#    version 1's from the first new option on, so seed N of version 2 is a different program.
# 3: version 2's plus PTX instructions the emulator runs that neither drew (ops_v3.py: prmt modes, bfind,
#    bfe/bfi, lop3, dp4a, carry chains, video instructions, fp8 and packed conversions by PTX, testp,
#    match.all, redux min/max/logic, ldmatrix/stmatrix/movmatrix, more mma shapes, mbarrier tx counts
#    and cp.async.mbarrier.arrive), without the forms ptxas of CUDA 13.0 was seen to miscompile.
# 4: version 3's with two of its own mistakes mended (docs/fuzz_report.md, fuzz5): the carry of an add.cc
#    chain is read in the same asm statement (fz4_addc; fz3_addc's separate `addc.u32 %0, 0, 0` has no
#    inputs, so NVRTC may move it anywhere: seeds 1092 and 3713 read some other carry), and no
#    compile-time constant expression, not only a literal, is __vibmax_s16x2's first operand (1447).
VERSIONS = (1, 2, 3, 4)
VERSION = 2
ARCH = {1: "compute_80", 2: "compute_90", 3: "compute_90", 4: "compute_90"}
DEVICE = {1: "A100", 2: "H100", 3: "H100", 4: "H100"}          # the emulator profile whose compute capability the PTX targets

# block shapes: multiples of 32 and not, 1-D and 2-D (at most 256 threads: the shared arrays)
BLOCKS = [(32,), (64,), (128,), (256,), (96,), (33,), (50,), (100,), (1,), (7,), (200,), (255,), (65,),
          (16, 8), (32, 4), (12, 5), (7, 9), (8, 8), (31, 3), (17, 2)]
GRIDS = [(1,), (2,), (3,), (4,), (2, 2), (1, 3), (3, 1)]
# version 2 draws these too, so that more programs have whole warps (tensor cores need them)
FULL_WARP_BLOCKS = [(32,), (64,), (128,), (256,), (96,), (160,), (32, 2), (64, 3), (16, 4)]


@dataclass
class Program:
    seed: int
    src: str                 # the kernel and its helpers (no #include; concatenable)
    kernel: str              # its name in the PTX (extern "C": not mangled)
    grid: tuple
    block: tuple
    shared: int              # dynamic shared memory bytes
    features: set = field(default_factory=set)
    version: int = VERSION   # the generator version that made it (see VERSIONS)

    @property
    def options(self) -> tuple:
        """NVRTC options the program needs besides run.OPTIONS: version 2 targets the H100 (compute_90)."""
        return (f"-arch={ARCH[self.version]}",)

    @property
    def full_source(self) -> str:
        """The program alone, with the lines every program of its version shares."""
        return batch_source([self])

    @property
    def threads(self) -> int:
        return int(np.prod(self.grid)) * int(np.prod(self.block))

    def make_args(self):
        """(ia, fa, oi, of, acc, p0, p1): fresh arrays every call; the same values for a seed."""
        return make_inputs(self.seed, self.threads)


# ------------------------------------------------------------------ inputs

F_EDGES = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001,
           0x7F800001, 0xFFFFFFFF, 0x7FFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,
           0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0x4F000000,
           0xCF000000, 0x4F800000, 0x5F000000, 0x34000000, 0x3EAAAAAB, 0x4B000000, 0x4B7FFFFF,
           0x3FC00000, 0x40200000, 0xC0200000]
I_EDGES = [0, 1, 2, 3, 31, 32, 0xFFFFFFFF, 0xFFFFFFFE, 0x80000000, 0x7FFFFFFF, 0x80000001, 0xFF,
           0x100, 0xFFFF, 0x10000, 0x55555555, 0xAAAAAAAA]


def make_inputs(seed: int, threads: int):
    r = random.Random(seed * 7919 + 1)
    ia = np.empty(NIN, np.uint32)
    fb = np.empty(NIN, np.uint32)
    for i in range(NIN):
        k = r.random()
        ia[i] = (r.choice(I_EDGES) if k < 0.15 else r.getrandbits(r.choice((3, 5, 8, 16, 32))))
        k = r.random()
        if k < 0.2:
            fb[i] = r.choice(F_EDGES)
        elif k < 0.3:
            fb[i] = r.getrandbits(32)                       # any bits: NaN payloads, denormals
        elif k < 0.5:
            fb[i] = _f2u(float(r.randint(-300, 300)) * r.choice((1, 0.5, 0.25)))
        elif k < 0.55:
            fb[i] = r.getrandbits(23) | (r.getrandbits(1) << 31)   # denormals
        else:
            fb[i] = _f2u(r.uniform(-1, 1) * 2.0 ** r.randint(-30, 30))
    oi = np.full(threads * NI, SENTINEL_I, np.uint32)
    of = np.full(threads * NF, SENTINEL_F, np.uint32).view(np.float32)
    acc = np.array([r.getrandbits(32) if r.random() < 0.7 else r.choice(I_EDGES) for _ in range(NACC)], np.uint32)
    p0 = np.uint32(r.getrandbits(32))
    p1 = np.uint32(r.choice(F_EDGES) if r.random() < 0.3 else _f2u(r.uniform(-4, 4))).view(np.float32)
    return ia, fb.view(np.float32), oi, of, acc, p0, np.float32(p1)


def _f2u(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ------------------------------------------------------------------ the generator


class Gen:
    def __init__(self, seed: int, small: bool = False, version: int = VERSION):
        if version not in VERSIONS:
            raise ValueError(f"generator version {version} does not exist (versions: {VERSIONS})")
        self.v = version
        self.r = random.Random(seed)
        self.small = small              # fewer, shallower statements (quick tests); same kinds
        self.seed = seed
        self.name = f"fz{seed}"
        self.features: set = set()
        self.helpers: list = []        # (name, returns 'u'|'f', source)
        self.tmp = 0
        self.dyn_shared = False
        self.inc_limit = self.r.choice([1, 5, 100, 0xFFFFFFFF, self.r.getrandbits(32)])
        self.uses: set = set()          # shared objects the kernel must declare (version 2)
        self.full_warps = False         # every warp has 32 lanes (tensor-core operations need it)
        self.nt = 0

    # -- small utilities
    def p(self, x):
        return self.r.random() < x

    def fresh(self, base="t"):
        self.tmp += 1
        return f"{base}{self.tmp}"

    def feat(self, name):
        self.features.add(name)

    def uconst(self):
        r = self.r
        k = r.random()
        if k < 0.4:
            return f"{r.randint(0, 40)}u"
        if k < 0.6:
            return f"0x{r.choice(I_EDGES):x}u"
        return f"0x{r.getrandbits(32):x}u"

    def fconst(self):
        r = self.r
        k = r.random()
        if k < 0.3:
            return f"__int_as_float(0x{r.choice(F_EDGES):08x})"
        if k < 0.7:
            return "(" + repr(float(r.choice((0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -0.25, 0.1, 100.0, 1e-3, 1e6)))) + "f)"
        return "(" + float.hex(struct.unpack("<f", struct.pack("<f", r.uniform(-8, 8)))[0]) + "f)"

    # -- expressions. `sc` is the scope: dict with 'u' and 'f' lists of readable names
    def uexpr(self, sc, d=0):
        r = self.r
        if d >= 3 or self.p(0.3):
            k = r.random()
            if k < 0.45:
                return r.choice(sc["u"])
            if k < 0.6:
                return self.uconst()
            if k < 0.72 and "ia" in sc:
                return f"ia[({self.uexpr(sc, d + 2)}) & 255u]"
            if k < 0.8:
                return f"__float_as_uint({self.fexpr(sc, d + 2)})"
            if k < 0.9 and sc.get("special"):
                return r.choice(sc["special"])
            return r.choice(sc["u"])
        a = lambda: self.uexpr(sc, d + 1)  # noqa: E731
        f = lambda: self.fexpr(sc, d + 1)  # noqa: E731
        c = r.randrange(44 if self.v == 1 else 52 if self.v == 2 else 58)
        if c >= 52:
            return self.uexpr_v3(sc, d, c - 52)
        if c >= 44:
            return self.uexpr_v2(sc, d, c - 44)
        if c < 10:
            return f"({a()} {r.choice(['+', '-', '*', '&', '|', '^', '+', '-', '*', '^'])} {a()})"
        if c == 10:
            self.feat("udiv")
            return f"({a()} / ({a()} | 1u))"
        if c == 11:
            self.feat("urem")
            return f"({a()} % ({a()} | 1u))"
        if c == 12:
            return f"({a()} << ({a()} & 31u))"
        if c == 13:
            return f"({a()} >> ({a()} & 31u))"
        if c == 14:
            self.feat("sshr")
            return f"(unsigned)((int)({a()}) >> ({a()} & 31u))"
        if c == 15:
            self.feat("sdiv")
            return f"(unsigned)((int)({a()}) / ((int)({a()} & 0x7fffffffu) | 1))"
        if c == 16:
            self.feat("srem")
            return f"(unsigned)((int)({a()}) % ((int)({a()} & 0x7fffffffu) | 1))"
        if c == 17:
            op = r.choice(['<', '<=', '==', '!=', '>', '>='])
            if self.p(0.5):
                return f"(unsigned)((int)({a()}) {op} (int)({a()}))"
            return f"(unsigned)({a()} {op} {a()})"
        if c == 18:
            self.feat("select")
            return f"({self.cond(sc, d + 1)} ? {a()} : {a()})"
        if c == 19:
            return f"{r.choice(['min', 'max'])}({a()}, {a()})"
        if c == 20:
            return f"(unsigned){r.choice(['min', 'max'])}((int)({a()}), (int)({a()}))"
        if c == 21:
            self.feat("bitops")
            fn = r.choice(["__popc", "__clz", "__brev", "__ffs"])
            cast = "(int)" if fn in ("__clz", "__ffs") else ""
            return f"(unsigned){fn}({cast}({a()}))"
        if c == 22:
            self.feat("byte_perm")
            return f"__byte_perm({a()}, {a()}, {a()})"
        if c == 23:
            self.feat("mulhi")
            return r.choice([f"__umulhi({a()}, {a()})", f"(unsigned)__mulhi((int)({a()}), (int)({a()}))"])
        if c == 24:
            self.feat("funnelshift")
            return f"{r.choice(['__funnelshift_l', '__funnelshift_r', '__funnelshift_lc', '__funnelshift_rc'])}({a()}, {a()}, {a()})"
        if c == 25:
            self.feat("sad")
            return f"__usad({a()}, {a()}, {a()})"
        if c == 26:
            self.feat("wide")
            return f"(unsigned)(((unsigned long long)({a()}) * ({a()})) >> ({a()} & 63u))"
        if c == 27:
            self.feat("simd")
            fn = r.choice(["__vadd4", "__vsub4", "__vmaxu4", "__vminu4", "__vabsdiffu4", "__vcmpgtu4", "__vcmpeq4",
                           "__vadd2", "__vsub2", "__vmaxs2", "__vavgu4", "__vsadu4", "__vhaddu2", "__vaddss4"])
            return f"{fn}({a()}, {a()})"
        if c == 28:
            return f"(~({a()}))"
        if c == 29:
            return f"(0u - {a()})"
        if c == 30:
            self.feat("narrow")
            return r.choice([f"(unsigned)(unsigned char)({a()})", f"(unsigned)(signed char)({a()})",
                             f"(unsigned)(short)({a()})", f"(unsigned)(unsigned short)({a()})"])
        if c in (31, 32):
            self.feat("f2i")
            fn = r.choice(["__float2int_rn", "__float2int_rz", "__float2int_rd", "__float2int_ru",
                           "__float2uint_rn", "__float2uint_rz", "__float2uint_rd", "__float2uint_ru"])
            return f"(unsigned){fn}({f()})"
        if c == 33:
            self.feat("f2ll")
            fn = r.choice(["__float2ll_rz", "__float2ll_rn", "__float2ull_rd"])
            return f"(unsigned)({fn}({f()}) >> {r.randint(0, 40)})"
        if c == 34:
            self.feat("fcmp")
            return f"(unsigned)({self.fcond(sc, d + 1)})"
        if c == 35:
            self.feat("isnan")
            return f"(unsigned)({r.choice(['isnan', 'isinf', 'isfinite', 'signbit'])}({f()}) != 0)"
        if c == 36 and self.helpers and sc.get("calls", True):
            return self.call(sc, d, "u")
        if c == 37:
            self.feat("u64")
            return f"(unsigned)(((unsigned long long)({a()}) << 32 | {a()}) % (({a()} | 1ull) + 0x100000000ull))"
        if c == 38:
            self.feat("mad24")
            return f"(unsigned)__mul24((int)({a()}), (int)({a()}))"
        if c == 39:
            self.feat("f2i")
            return f"(unsigned)(int)fminf(fmaxf({f()}, -2e9f), 2e9f)"
        if c == 40:
            self.feat("f64")
            return f"(unsigned)__double2int_rz((double)({a()}) * (double)({f()}))"
        return f"({a()} {r.choice(['+', '^', '|'])} {a()})"

    def fexpr(self, sc, d=0):
        r = self.r
        if d >= 3 or self.p(0.3):
            k = r.random()
            if k < 0.5:
                return r.choice(sc["f"])
            if k < 0.62:
                return self.fconst()
            if k < 0.75 and "fa" in sc:
                return f"fa[({self.uexpr(sc, d + 2)}) & 255u]"
            if k < 0.82:
                self.feat("bitcast")
                return f"__uint_as_float({self.uexpr(sc, d + 2)})"
            if k < 0.9:
                self.feat("i2f")
                u = self.uexpr(sc, d + 2)
                return r.choice([f"(float)({u})", f"(float)(int)({u})", f"__uint2float_rz({u})",
                                 f"__int2float_rd((int)({u}))", f"__uint2float_ru({u})", f"__ll2float_rn((long long)(int)({u}) * 1048577ll)"])
            return r.choice(sc["f"])
        a = lambda: self.fexpr(sc, d + 1)  # noqa: E731
        c = r.randrange(30 if self.v == 1 else 36 if self.v == 2 else 39)
        if c >= 36:
            return self.fexpr_v3(sc, d, c - 36)
        if c >= 30:
            return self.fexpr_v2(sc, d, c - 30)
        if c < 8:
            return f"({a()} {r.choice(['+', '-', '*', '+', '*', '/'])} {a()})"
        if c == 8:
            self.feat("fma")
            return f"fmaf({a()}, {a()}, {a()})"
        if c == 9:
            self.feat("fminmax")
            return f"{r.choice(['fminf', 'fmaxf'])}({a()}, {a()})"
        if c == 10:
            return f"fabsf({a()})"
        if c == 11:
            return f"(-({a()}))"
        if c == 12:
            return f"copysignf({a()}, {a()})"
        if c == 13:
            self.feat("frounding")
            fn = r.choice(["__fadd_rz", "__fadd_rd", "__fadd_ru", "__fadd_rn", "__fmul_rz", "__fmul_rd",
                           "__fmul_ru", "__fsub_rn", "__fsub_rz", "__fdiv_rn", "__fdiv_rz", "__fdiv_ru"])
            return f"{fn}({a()}, {a()})"
        if c == 14:
            self.feat("frounding")
            fn = r.choice(["__fmaf_rn", "__fmaf_rz", "__fmaf_rd", "__fmaf_ru"])
            return f"{fn}({a()}, {a()}, {a()})"
        if c == 15:
            self.feat("fsqrt")
            return r.choice([f"sqrtf({a()})", f"__fsqrt_rn({a()})", f"__frcp_rn({a()})", f"__fsqrt_rz({a()})"])
        if c == 16:
            self.feat("fround")
            return f"{r.choice(['truncf', 'floorf', 'ceilf', 'rintf', 'roundf', 'nearbyintf'])}({a()})"
        if c == 17:
            self.feat("saturate")
            return f"__saturatef({a()})"
        if c == 18:
            self.feat("select")
            return f"({self.cond(sc, d + 1)} ? {a()} : {a()})"
        if c == 19:
            self.feat("f64")
            op = r.choice(['+', '*', '-', '/'])
            return f"(float)((double)({a()}) {op} (double)({a()}))"
        if c == 20:
            self.feat("f64")
            return f"(float)fma((double)({a()}), (double)({a()}), (double)({a()}))"
        if c == 21 and self.helpers and sc.get("calls", True):
            return self.call(sc, d, "f")
        if c == 22:
            self.feat("fdim")
            return f"{r.choice(['fdimf', 'fmaxf', 'fminf'])}({a()}, {a()})"
        if c == 23:
            self.feat("i2f")
            return f"(float)({self.uexpr(sc, d + 1)})"
        return f"({a()} {r.choice(['+', '-', '*'])} {a()})"

    def cond(self, sc, d=0):
        r = self.r
        k = r.random()
        if d < 2 and k < 0.12:
            return f"({self.cond(sc, d + 1)} {r.choice(['&&', '||'])} {self.cond(sc, d + 1)})"
        if d < 2 and k < 0.16:
            return f"!({self.cond(sc, d + 1)})"
        if k < 0.45:
            op = r.choice(['<', '<=', '==', '!=', '>', '>='])
            return f"({self.uexpr(sc, d + 1)} {op} {self.uexpr(sc, d + 1)})"
        if k < 0.6:
            return f"(({self.uexpr(sc, d + 1)}) & {1 << r.randint(0, 5)}u)"
        if k < 0.7:
            return f"((int)({self.uexpr(sc, d + 1)}) < {r.randint(-5, 5)})"
        return self.fcond(sc, d)

    def fcond(self, sc, d=0):
        op = self.r.choice(['<', '<=', '==', '!=', '>', '>='])
        return f"({self.fexpr(sc, d + 1)} {op} {self.fexpr(sc, d + 1)})"

    def call(self, sc, d, want):
        name, ret, _ = self.r.choice(self.helpers)
        self.feat("call")
        e = f"{name}({self.uexpr(sc, d + 2)}, {self.uexpr(sc, d + 2)}, {self.fexpr(sc, d + 2)})"
        if ret == want:
            return e
        return f"__float_as_uint({e})" if want == "u" else f"__uint_as_float({e})"

    # -- statements: return lists of lines (indentation added by block())
    def assign(self, sc):
        r = self.r
        if self.p(0.55):
            v = r.choice(sc["uw"])
            op = r.choice(["=", "=", "+=", "^=", "-=", "*=", "|="])
            return [f"{v} {op} {self.uexpr(sc)};"]
        v = r.choice(sc["fw"])
        op = r.choice(["=", "=", "+=", "*=", "-="])
        return [f"{v} {op} {self.fexpr(sc)};"]

    def stmts(self, sc, n, depth, ctx):
        out = []
        for _ in range(n):
            out += self.stmt(sc, depth, ctx)
        return out

    def stmt(self, sc, depth, ctx):
        """ctx: dict(conv: warp-converged, uni: block-uniform, loop: inside a loop, tail: may return)."""
        r = self.r
        choices = ["assign"] * 6
        if depth < (2 if self.small else 3):
            choices += ["if", "if", "for", "switch", "while", "local"]
        if "ia" in sc:
            choices += ["atomic"]
        if ctx["conv"] and "ia" in sc:
            choices += ["shfl", "shfl", "vote", "redux", "divwarp"]
            if depth < 2:
                choices += ["warpif"]
        if ctx["uni"] and "ia" in sc:
            choices += ["shared", "shared", "barred", "satomic"]
            if depth < 2:
                choices += ["uniif", "uniloop"]
            if self.dyn_shared:
                choices += ["dynshared"]
        if ctx.get("tail") and depth > 0:
            choices += ["return"]
        if ctx["loop"]:
            choices += ["break", "continue"]
        if self.v >= 2 and "ia" in sc:
            choices += ["cpthread", "cupipe"]
            if ctx["conv"]:
                choices += ["elect"]
                if self.full_warps:
                    choices += ["wmma", "wmma", "wmma", "mma", "mma"]
            if ctx["uni"]:
                choices += ["cpblock", "cgcopy", "cubar", "cubarcopy", "mbar"]
                if self.full_warps:
                    choices += ["named", "named"]
        if self.v >= 3 and "ia" in sc:
            if ctx["conv"]:
                choices += ["warp3"]
                if self.full_warps:
                    choices += ["ldmatrix", "ldmatrix"]
            if ctx["uni"]:
                choices += ["mbartx"]
        k = r.choice(choices)
        return getattr(self, "s_" + k)(sc, depth, ctx)

    def sub(self, ctx, **kw):
        c = dict(ctx)
        c.update(kw)
        return c

    def block(self, lines):
        return ["    " + x for x in lines]

    def s_assign(self, sc, depth, ctx):
        return self.assign(sc)

    def s_if(self, sc, depth, ctx):
        self.feat("if")
        dv = self.sub(ctx, conv=False, uni=False)
        out = [f"if ({self.cond(sc)}) {{"] + self.block(self.stmts(sc, self.r.randint(1, 3), depth + 1, dv))
        if self.p(0.6):
            if self.p(0.3):
                self.feat("elseif")
                out += [f"}} else if ({self.cond(sc)}) {{"] + self.block(self.stmts(sc, self.r.randint(1, 2), depth + 1, dv))
            out += ["} else {"] + self.block(self.stmts(sc, self.r.randint(1, 3), depth + 1, dv))
        return out + ["}"]

    def s_for(self, sc, depth, ctx):
        self.feat("loop")
        k, n = self.fresh("k"), self.fresh("n")
        inner = dict(sc, u=sc["u"] + [k])
        dv = self.sub(ctx, conv=False, uni=False, loop=True)
        step = self.r.choice(["++", "++", "+= 2u"])
        inc = f"++{k}" if step == "++" else f"{k} += 2u"
        return ([f"for (unsigned {k} = 0, {n} = ({self.uexpr(sc)}) & {self.r.choice([3, 7, 7, 15])}u; {k} < {n}; {inc}) {{"]
                + self.block(self.stmts(inner, self.r.randint(1, 3), depth + 1, dv)) + ["}"])

    def s_while(self, sc, depth, ctx):
        self.feat("while")
        k = self.fresh("w")
        inner = dict(sc, u=sc["u"] + [k])
        dv = self.sub(ctx, conv=False, uni=False, loop=True)
        if self.p(0.5):
            body = [f"++{k};"] + self.stmts(inner, self.r.randint(1, 3), depth + 1, dv)
            return ([f"{{ unsigned {k} = 0;", f"while ({k} < {self.r.randint(1, 8)}u) {{"] + self.block(body)
                    + [f"    if ({self.cond(inner)}) break;", "}", "}"])
        self.feat("dowhile")
        body = self.stmts(inner, self.r.randint(1, 2), depth + 1, dv)
        return ([f"{{ unsigned {k} = 0;", "do {"] + self.block(body)
                + [f"}} while (++{k} < {self.r.randint(1, 6)}u && {self.cond(inner)});", "}"])

    def s_break(self, sc, depth, ctx):
        return [f"if ({self.cond(sc)}) break;"]

    def s_continue(self, sc, depth, ctx):
        return [f"if ({self.cond(sc)}) continue;"]

    def s_switch(self, sc, depth, ctx):
        self.feat("switch")
        dv = self.sub(ctx, conv=False, uni=False, loop=False)
        cases = sorted(self.r.sample(range(8), self.r.randint(2, 5)))
        out = [f"switch (({self.uexpr(sc)}) & 7u) {{"]
        for cval in cases:
            out += [f"case {cval}:"] + self.block(self.stmts(sc, self.r.randint(1, 2), depth + 1, dv))
            if self.p(0.8):
                out.append("    break;")
            else:
                self.feat("fallthrough")
        if self.p(0.6):
            out += ["default:"] + self.block(self.stmts(sc, 1, depth + 1, dv) + ["break;"])
        return out + ["}"]

    def s_local(self, sc, depth, ctx):
        self.feat("local_array")
        la, i = self.fresh("la"), self.fresh("i")
        isf = self.p(0.35)
        ty = "float" if isf else "unsigned"
        inner = dict(sc, u=sc["u"] + [i])
        init = self.fexpr(inner) if isf else self.uexpr(inner)
        out = [f"{{ {ty} {la}[8];", f"for (unsigned {i} = 0; {i} < 8u; ++{i}) {la}[{i}] = {init};"]
        if self.p(0.5):
            out.append(f"{la}[({self.uexpr(sc)}) & 7u] = {self.fexpr(sc) if isf else self.uexpr(sc)};")
        read = f"{la}[({self.uexpr(sc)}) & 7u]"
        if isf:
            out.append(f"{self.r.choice(sc['fw'])} += {read};")
        else:
            out.append(f"{self.r.choice(sc['uw'])} ^= {read};")
        return out + ["}"]

    # each operation has its own two words of acc: different operations on one word would not commute
    ATOMIC_WORDS = {"atomicAdd": 0, "atomicSub": 0, "atomicMax": 2, "atomicMin": 4, "atomicOr": 6,
                    "atomicAnd": 8, "atomicXor": 10, "atomicMaxS": 12, "atomicMinS": 14, "atomicInc": 16}

    def s_atomic(self, sc, depth, ctx):
        self.feat("atomic")
        r = self.r
        op = r.choice(["atomicAdd", "atomicAdd", "atomicMax", "atomicMin", "atomicOr", "atomicAnd", "atomicXor",
                       "atomicMaxS", "atomicMinS", "atomicInc", "atomicSub"])
        idx = f"acc[{self.ATOMIC_WORDS[op]}u + (({self.uexpr(sc)}) & 1u)]"
        if op in ("atomicMaxS", "atomicMinS"):
            return [f"{op[:-1]}((int*)&{idx}, (int)({self.uexpr(sc)}));"]
        if op == "atomicInc":   # one limit per program: the same function every time, so order-free
            return [f"atomicInc(&{idx}, {self.inc_limit}u);"]
        return [f"{op}(&{idx}, {self.uexpr(sc)});"]

    # ---- warp-level (converged code)
    def _shfl(self, sc, mask, lanes_ok):
        """A shuffle whose result is used only where the source lane is in the mask."""
        r = self.r
        isf = self.p(0.35)
        val = self.fexpr(sc) if isf else self.uexpr(sc)
        dst = r.choice(sc["fw"] if isf else sc["uw"])
        w = r.choice([32, 32, 32, 16, 8, 4, 2])
        t, s, j = self.fresh("t"), self.fresh("s"), self.fresh("j")
        ty = "float" if isf else "unsigned"
        kind = r.choice(["xor", "down", "up", "idx"])
        self.feat("shfl_" + kind)
        if w != 32:
            self.feat("shfl_width")
        if kind == "xor":
            m = r.randint(1, 31) if self.p(0.15) else r.randint(1, w - 1) if w > 1 else 1
            out = [f"{ty} {t} = __shfl_xor_sync({mask}, {val}, {m}, {w});",
                   f"unsigned {j} = lane ^ {m}u; {j} = ({j} <= (lane | {w - 1}u)) ? {j} : lane;"]
        elif kind == "down":
            dl = r.randint(0, w - 1) if w > 1 else 0
            out = [f"{ty} {t} = __shfl_down_sync({mask}, {val}, {dl}, {w});",
                   f"unsigned {j} = lane + {dl}u; {j} = ({j} <= (lane | {w - 1}u)) ? {j} : lane;"]
        elif kind == "up":
            dl = r.randint(0, w - 1) if w > 1 else 0
            out = [f"{ty} {t} = __shfl_up_sync({mask}, {val}, {dl}, {w});",
                   f"unsigned {j} = (lane >= (lane & ~{w - 1}u) + {dl}u) ? lane - {dl}u : lane;"]
        else:
            out = [f"unsigned {s} = {self.uexpr(sc)};",
                   f"{ty} {t} = __shfl_sync({mask}, {val}, (int){s}, {w});",
                   f"unsigned {j} = (lane & ~{w - 1}u) | ({s} & {w - 1}u);"]
        out.append(f"{dst} = ((({lanes_ok}) >> {j}) & 1u) ? {t} : {dst};")
        return ["{"] + self.block(out) + ["}"]

    def s_shfl(self, sc, depth, ctx):
        return self._shfl(sc, "FM", "FM")

    def _vote(self, sc, mask):
        r = self.r
        dst = r.choice(sc["uw"])
        k = r.randrange(5)
        if k == 0:
            self.feat("ballot")
            return [f"{dst} ^= __ballot_sync({mask}, {self.cond(sc)});"]
        if k == 1:
            self.feat("any_all")
            return [f"{dst} += (unsigned){r.choice(['__any_sync', '__all_sync'])}({mask}, {self.cond(sc)});"]
        if k == 2:
            self.feat("ballot")
            return [f"{dst} += __popc(__ballot_sync({mask}, {self.cond(sc)}));"]
        if k == 3:
            self.feat("match_any")
            return [f"{dst} ^= __match_any_sync({mask}, {self.uexpr(sc)} & {r.choice([1, 3, 7, 0xffffffff])}u);"]
        self.feat("activemask_ballot")
        return [f"{dst} = __ballot_sync({mask}, 1) == {mask} ? {dst} + 1u : {dst};"]

    def s_vote(self, sc, depth, ctx):
        return self._vote(sc, "FM")

    def _redux(self, sc, mask):
        self.feat("redux")
        fn = self.r.choice(["__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
                            "__reduce_or_sync", "__reduce_xor_sync"])
        return [f"{self.r.choice(sc['uw'])} ^= {fn}({mask}, {self.uexpr(sc)});"]

    def s_redux(self, sc, depth, ctx):
        return self._redux(sc, "FM")

    def s_divwarp(self, sc, depth, ctx):
        """Warp operations inside a branch, with the mask of the lanes that took it."""
        self.feat("divergent_warp_ops")
        c, m = self.fresh("c"), self.fresh("m")
        dv = self.sub(ctx, conv=False, uni=False)
        body = self.stmts(sc, self.r.randint(0, 2), depth + 1, dv)
        for _ in range(self.r.randint(1, 2)):
            k = self.r.randrange(4 if self.v == 1 else 5)
            if k == 4:
                body += self._elect(sc, m)
            elif k == 0:
                body += self._shfl(sc, m, m)
            elif k == 1:
                body += self._vote(sc, m)
            elif k == 2:
                body += self._redux(sc, m)
            else:
                t = self.fresh("t")
                body += [f"unsigned {t} = __shfl_sync({m}, {self.uexpr(sc)}, __ffs({m}) - 1);",
                         f"{self.r.choice(sc['uw'])} += {t};"]
        out = [f"{{ bool {c} = {self.cond(sc)};", f"unsigned {m} = __ballot_sync(FM, {c});",
               f"if ({c}) {{"] + self.block(body)
        if self.p(0.4):
            out += ["} else {"] + self.block(self.stmts(sc, 1, depth + 1, dv))
        return out + ["}", "}"]

    def s_warpif(self, sc, depth, ctx):
        """A branch every lane of a warp takes the same way: still converged, not block-uniform."""
        self.feat("warp_uniform_if")
        cv = self.sub(ctx, uni=False)
        cond = self.r.choice(["((tid >> 5) & 1u)", "(warp == 0u)", "((warp ^ blockIdx.x) & 1u)", "(p0 & 1u)"])
        out = [f"if ({cond}) {{"] + self.block(self.stmts(sc, self.r.randint(1, 3), depth + 1, cv))
        if self.p(0.5):
            out += ["} else {"] + self.block(self.stmts(sc, self.r.randint(1, 2), depth + 1, cv))
        return out + ["}"]

    # ---- block-level (uniform code)
    def s_shared(self, sc, depth, ctx):
        self.feat("shared")
        r = self.r
        isf = self.p(0.4)
        arr = f"{self.name}_shf" if isf else f"{self.name}_sh"
        val = self.fexpr(sc) if isf else self.uexpr(sc)
        dst = r.choice(sc["fw"] if isf else sc["uw"])
        idx = r.choice([f"(tid + {r.randint(1, 300)}u) % nt", f"(tid ^ {r.randint(1, 255)}u) % nt",
                        f"({self.uexpr(sc)}) % nt", "nt - 1u - tid", f"(tid * {r.choice([3, 5, 17, 33])}u) % nt"])
        op = "+=" if isf else r.choice(["^=", "+=", "="])
        return [f"{arr}[tid] = {val};", "__syncthreads();", f"{dst} {op} {arr}[{idx}];", "__syncthreads();"]

    def s_dynshared(self, sc, depth, ctx):
        self.feat("dynamic_shared")
        dyn = f"{self.name}_dyn"
        return [f"{dyn}[nt - 1u - tid] = {self.uexpr(sc)};", "__syncthreads();",
                f"{self.r.choice(sc['uw'])} += {dyn}[({self.uexpr(sc)}) % nt];", "__syncthreads();"]

    def s_barred(self, sc, depth, ctx):
        self.feat("bar_red")
        fn = self.r.choice(["__syncthreads_count", "__syncthreads_or", "__syncthreads_and"])
        return [f"{self.r.choice(sc['uw'])} += (unsigned){fn}({self.cond(sc)});"]

    def s_satomic(self, sc, depth, ctx):
        self.feat("shared_atomic")
        sa = f"{self.name}_sacc"
        op = self.r.choice(["atomicAdd", "atomicOr", "atomicXor", "atomicMax", "atomicMin", "atomicAnd"])
        return [f"for (unsigned i = tid; i < 8u; i += nt) {sa}[i] = {self.uconst()} ^ i;", "__syncthreads();",
                f"{op}(&{sa}[({self.uexpr(sc)}) & 7u], {self.uexpr(sc)});", "__syncthreads();",
                f"{self.r.choice(sc['uw'])} ^= {sa}[tid & 7u];", "__syncthreads();"]

    def s_uniif(self, sc, depth, ctx):
        self.feat("uniform_if_barrier")
        cond = self.r.choice(["(blockIdx.x & 1u)", "(p0 & 2u)", "(blockIdx.y == 0u)", "((p0 >> 3) & 1u)"])
        out = [f"if ({cond}) {{"] + self.block(self.stmts(sc, self.r.randint(1, 3), depth + 1, ctx))
        if self.p(0.5):
            out += ["} else {"] + self.block(self.stmts(sc, self.r.randint(1, 2), depth + 1, ctx))
        return out + ["}"]

    def s_uniloop(self, sc, depth, ctx):
        self.feat("uniform_loop_barrier")
        k = self.fresh("r")
        inner = dict(sc, u=sc["u"] + [k])
        return ([f"for (unsigned {k} = 0; {k} < ((p0 >> {self.r.randint(0, 8)}) & 3u); ++{k}) {{"]
                + self.block(self.stmts(inner, self.r.randint(1, 3), depth + 1, self.sub(ctx, loop=False))) + ["}"])

    def s_return(self, sc, depth, ctx):
        self.feat("early_return")
        return [f"if ({self.cond(sc)}) {{"] + self.block(self.writes() + ["return;"]) + ["}"]

    def writes(self):
        return ([f"oi[gid * {NI}u + {i}u] = u{i};" for i in range(NI)]
                + [f"of[gid * {NF}u + {i}u] = f{i};" for i in range(NF)])

    # ---- helpers and kernel
    def helper(self, i):
        r = self.r
        ret = r.choice("uf")
        name = f"{self.name}_h{i}"
        qual = r.choice(["__device__ __noinline__", "__device__ __noinline__", "__device__", "__device__ __forceinline__"])
        if "noinline" in qual:
            self.feat("noinline_call")
        sc = {"u": ["u0", "u1", "u2", "u3"], "f": ["f0", "f1", "f2"], "uw": ["u0", "u1", "u2", "u3"], "fw": ["f0", "f1", "f2"]}
        ctx = dict(conv=False, uni=False, loop=False, tail=False)
        body = [f"unsigned u0 = a, u1 = b, u2 = a ^ {self.uconst()}, u3 = b * 3u;", "float f0 = c, f1 = (float)a, f2 = c * 0.5f;"]
        body += self.stmts(sc, r.randint(1, 4), 1, ctx)
        if self.p(0.3):
            self.feat("helper_return")
            body.append(f"if ({self.cond(sc)}) return {self.uexpr(sc) if ret == 'u' else self.fexpr(sc)};")
        body += self.stmts(sc, r.randint(0, 2), 1, ctx)
        body.append(f"return {self.uexpr(sc) if ret == 'u' else self.fexpr(sc)};")
        ty = "unsigned" if ret == "u" else "float"
        src = "\n".join([f"{qual} {ty} {name}(unsigned a, unsigned b, float c) {{"] + self.block(body) + ["}"])
        self.helpers.append((name, ret, src))

    def kernel(self):
        r = self.r
        for i in range(r.choice([0, 0, 1, 1, 2, 3])):
            self.helper(i)
        block = r.choice(BLOCKS if self.v == 1 else BLOCKS + FULL_WARP_BLOCKS)
        grid = r.choice(GRIDS)
        if len(block) == 2:
            self.feat("2d_block")
        if len(grid) == 2:
            self.feat("2d_grid")
        nt = int(np.prod(block))
        self.nt, self.full_warps = nt, nt % 32 == 0
        if nt % 32:
            self.feat("partial_warp")
        self.dyn_shared = self.p(0.25)
        shared = nt * 4 if self.dyn_shared else 0
        n = self.name
        sc = {"u": ["u0", "u1", "u2", "u3"], "f": ["f0", "f1", "f2", "f3"], "uw": ["u0", "u1", "u2", "u3"],
              "fw": ["f0", "f1", "f2", "f3"], "ia": True, "fa": True,
              "special": ["tid", "gid", "lane", "warp", "nt", "blockIdx.x", "p0", "threadIdx.x", "threadIdx.y"]}
        main = self.stmts(sc, r.randint(2, 4) if self.small else r.randint(3, 8), 0, dict(conv=True, uni=True, loop=False, tail=False))
        tail = self.stmts(sc, r.randint(0, 3), 0, dict(conv=False, uni=False, loop=False, tail=True))
        if self.p(0.3):
            tail = self.s_return(sc, 1, {}) + tail
        lines = [
            "const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;",
            "const unsigned nt = blockDim.x * blockDim.y;",
            "const unsigned gid = (blockIdx.y * gridDim.x + blockIdx.x) * nt + tid;",
            "const unsigned lane = tid & 31u, warp = tid >> 5;",
            "const unsigned nl = min(32u, nt - (tid & ~31u));        // lanes that exist in this warp",
            "const unsigned FM = nl == 32u ? 0xffffffffu : (1u << nl) - 1u;",
            f"__shared__ unsigned {n}_sh[256];",
            f"__shared__ float {n}_shf[256];",
            f"__shared__ unsigned {n}_sacc[8];",
        ]
        if self.dyn_shared:
            lines.append(f"extern __shared__ unsigned {n}_dyn[];")
        lines += self.v2_declarations()
        lines += [
            "unsigned u0 = ia[gid & 255u], u1 = ia[(gid * 7u + 3u) & 255u], u2 = p0 ^ tid, u3 = ia[(tid + 100u) & 255u];",
            "float f0 = fa[gid & 255u], f1 = fa[(gid * 5u + 1u) & 255u], f2 = p1, f3 = (float)tid * 0.25f;",
        ]
        lines += main + tail + self.writes()
        src = "\n".join([h[2] for h in self.helpers]
                        + [f'extern "C" __global__ void {n}(const unsigned* __restrict__ ia, const float* __restrict__ fa, '
                           "unsigned* oi, float* of, unsigned* acc, unsigned p0, float p1) {"]
                        + self.block(lines) + ["}", ""])
        return Program(self.seed, src, n, grid, block, shared, set(self.features), self.v)

    # ------------------------------------------------------------------ version 2
    from .ops_v2 import (uexpr_v2, fexpr_v2, v2_declarations, s_cpthread, s_cupipe, s_elect, _elect,  # noqa: E402
                         s_wmma, s_mma, s_cpblock, s_cgcopy, s_cubar, s_cubarcopy, s_mbar, s_named)
    from .ops_v3 import uexpr_v3, fexpr_v3, s_warp3, s_ldmatrix, s_mbartx  # noqa: E402


def generate(seed: int, small: bool = False, version: int = VERSION) -> Program:
    """The program of ``seed``; ``small=True`` gives a shorter one (a different program); ``version``
    picks the generator version (1: the programs of the 2026-11-23 run)."""
    return Gen(seed, small, version).kernel()


def batch_source(programs) -> str:
    """One source with many programs (their names never clash); version 2 programs need the
    includes and helpers of ``PRELUDE_V2`` once, at the top."""
    from .ops_v2 import PRELUDE_V2
    from .ops_v3 import PRELUDE_V3, PRELUDE_V4
    head = [PRELUDE_V2] if any(p.version >= 2 for p in programs) else []
    head += [PRELUDE_V3] if any(p.version >= 3 for p in programs) else []
    head += [PRELUDE_V4] if any(p.version >= 4 for p in programs) else []
    return "\n".join(head + [p.src for p in programs])


if __name__ == "__main__":
    import sys
    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0,
                   version=int(sys.argv[2]) if len(sys.argv) > 2 else VERSION).full_source)
