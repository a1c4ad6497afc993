"""Find where a fuzz program first differs between the emulator and a GPU: per statement, per mma.

A program that differs only says so in its final outputs. This tool cuts the search down in one GPU
call for many programs at once:

* **statement traces**: the program's kernel gets one more parameter, a trace buffer, and after each
  top-level statement every thread writes its eight values (u0..u3, f0..f3) there. The first trace
  point where the emulator's bits and the GPU's part is the statement to read.
* **tensor-core replays**: the emulator records the register words of every mma.sync / wmma.mma it
  executes in the programs (each warp's 32 lanes, every operand); a PTX kernel per instruction form
  loads those words into registers, runs the instruction alone and stores D. Any difference between
  the two backends on such a replay is the tensor core's arithmetic, whatever the program did before.
* **instruction traces** (``make_instrumented``): every instruction of one statement (or of the
  whole kernel) stores its destination into a slot of its own, so the first differing instruction
  shows. Such stores can change what ptxas does: a difference that vanishes under them is ptxas's
  (docs/fuzz_report.md, "The 20 open, explained").
* **wmma load/store replays** (``gpu forms.json``): every wmma.load / wmma.store form on index-valued
  tiles, to tell a fragment layout from the rest.
* **deep traces** (``make_deep``): a trace point after every statement line of the kernel *and its
  helpers*, each appending (point, u0..u3, f0..f3) to the thread's own row, so loops and helper calls
  are traced in execution order; the first entry where a thread's rows part is the statement to read.
* **ptxas's folds** (``ptxas``): the PTX rewritten the way CUDA 13.0's ptxas was seen to compile it
  (docs/fuzz_report.md, causes 17, 18, 19, 21 and the last round's variants), emulated against the
  recorded GPU outputs.

    python tools/fuzz_locate.py make OUT.json.gz SEED...      # here: PTX and inputs
    python tools/fuzz_locate.py gpu OUT.json.gz GPU.npz       # on the GPU machine
    python tools/fuzz_locate.py compare OUT.json.gz GPU.npz   # here: the first trace point, the mma rows
    python tools/fuzz_locate.py ptxas - SEED... [--folds selp-half,...] [--version 3]   # here: with ptxas's known folds in the PTX

``--version 1`` takes version 1's programs (compiled as that run did, with NVRTC's default fmad).
"""
from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

VALUES = ("u0", "u1", "u2", "u3", "f0", "f1", "f2", "f3")
TRACE_SENTINEL = 0xFEEDF00D


# ------------------------------------------------------------------ statement traces

def traced_source(prog):
    """The program with a trace buffer parameter ``fz_tr`` and a trace point after every top-level
    statement of the kernel body; returns (Program, number of trace points, their source lines)."""
    lines = prog.src.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith(f'extern "C" __global__ void {prog.kernel}('))
    lines[head] = lines[head].replace(", float p1)", ", float p1, unsigned* fz_tr)")
    start = next(i for i in range(head, len(lines)) if lines[i].startswith("    float f0 = ")) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("    oi[gid * 4u + 0u] = "))
    out, points, depth, stmt = lines[:start], [], 0, []
    for i in range(start, end):
        ln = lines[i]
        out.append(ln)
        stmt.append(ln.strip())
        depth += ln.count("{") - ln.count("}")
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if depth == 0 and not nxt.startswith(("else", "while")):
            k = len(points)
            points.append(" ".join(stmt)[:400])
            stmt = []
            out.append(f"    {{ unsigned* t_ = fz_tr + ((size_t){k} * (gridDim.x * gridDim.y * nt) + gid) * 8u;"
                       " t_[0] = u0; t_[1] = u1; t_[2] = u2; t_[3] = u3; t_[4] = __float_as_uint(f0);"
                       " t_[5] = __float_as_uint(f1); t_[6] = __float_as_uint(f2); t_[7] = __float_as_uint(f3); }")
    out += lines[end:]
    return dataclasses.replace(prog, src="\n".join(out)), len(points), points


def trace_buffer(prog, points, extra=0):
    return np.full(max(points, 1) * prog.threads * 8 + extra, TRACE_SENTINEL, np.uint32)


# ------------------------------------------------------------------ tensor-core replays

def record_mma(run_program):
    """Run ``run_program()`` on the emulator with every mma.sync / wmma.mma recorded: returns a list
    of (instruction, {"d"/"a"/"b"/"c": (warps, 32, registers) words, "wide": {use: 64-bit?}})."""
    from cudalab.emulator import mma
    seen = []
    orig = mma._run_mma

    def words(f, ex, warps):
        return np.stack([np.broadcast_to(np.asarray(r(ex, None)).astype(f.word), (ex.n,)).reshape(-1, 32)[warps]
                         for r in f.readers], axis=-1)

    def hooked(inst, frag, shape, *a, **k):
        run = orig(inst, frag, shape, *a, **k)
        text = ".".join((inst.opcode,) + tuple(inst.mods))

        def recorded(ex):
            warps = mma.active_warps(ex, inst)
            rec = {u: words(frag[u], ex, warps) for u in "abc"}
            run(ex)
            rec["d"] = words(frag["d"], ex, warps)
            seen.append((text, rec, {u: frag[u].bits == 64 for u in "dabc"}))
        return recorded
    mma._run_mma = hooked
    try:
        run_program()
    finally:
        mma._run_mma = orig
    return seen


def replay_ptx(text, counts, wide):
    """A kernel that runs one warp-wide matrix instruction on register words read from memory: each
    thread's record is one 64-bit slot per register of A, B, C; D goes out the same way."""
    regs, body, k = [], [], 0
    for use in "abc":
        names = []
        for j in range(counts[use]):
            r = f"%{'x' if wide[use] else 'r'}{k}"
            k += 1
            names.append(r)
            body.append(f"ld.global.b{64 if wide[use] else 32} {r}, [%rd3+{8 * (k - 1)}];")
        regs.append("{" + ", ".join(names) + "}")
    dn = []
    for j in range(counts["d"]):
        r = f"%{'x' if wide['d'] else 'r'}{k + j}"
        dn.append(r)
        body.append(f"st.global.b{64 if wide['d'] else 32} [%rd4+{8 * j}], {r};")
    nin, nout = k, counts["d"]
    inst = f"{text} {{{', '.join(dn)}}}, {regs[0]}, {regs[1]}, {regs[2]};"
    stores = body[nin:]
    return f"""
.visible .entry replay(.param .u64 pin, .param .u64 pout) {{
  .reg .b32 %r<{k + nout + 1}>; .reg .b64 %x<{k + nout + 1}>; .reg .b32 %t<4>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %t0, %tid.x; mov.u32 %t1, %ctaid.x; mov.u32 %t2, %ntid.x; mad.lo.u32 %t3, %t1, %t2, %t0;
  mul.wide.u32 %rd5, %t3, {8 * nin}; add.s64 %rd3, %rd1, %rd5;
  mul.wide.u32 %rd6, %t3, {8 * nout}; add.s64 %rd4, %rd2, %rd6;
  {chr(10).join('  ' + b for b in body[:nin])}
  {inst}
  {chr(10).join('  ' + s for s in stores)}
  ret;
}}"""


def replay_module(text, counts, wide):
    return ".version 8.0\n.target sm_90\n.address_size 64\n" + replay_ptx(text, counts, wide)


# ------------------------------------------------------------------ make (here)

def make(path, seeds, version=2, group=25):
    """Compile the traced programs (``group`` to a module) and record their mma executions."""
    from cudalab.frontend.nvrtc import compile_to_ptx
    from tests.fuzz.generator import batch_source, generate
    from tests.fuzz.run import DIFFERING, OPTIONS
    extra = DIFFERING[version][1]
    progs, replays, modules = [], {}, []
    for g0 in range(0, len(seeds), group):
        traced = [(s,) + traced_source(generate(s, version=version)) for s in seeds[g0:g0 + group]]
        ptx = compile_to_ptx(batch_source([t[1] for t in traced]), OPTIONS + traced[0][1].options + extra).ptx
        modules.append(ptx)
        for s, prog, npts, points in traced:
            progs.append({"seed": s, "module": len(modules) - 1, "kernel": prog.kernel, "points": points,
                          "npoints": npts, "grid": list(prog.grid), "block": list(prog.block),
                          "shared": prog.shared})
    data = {"version": version, "modules": modules, "programs": progs}
    for p in progs:
        try:
            seen = record_mma(lambda: run_traces(dict(data, programs=[p]), emu_launch(version), strict=True))
        except Exception as e:   # noqa: BLE001 - a program the emulator stops is reported, not fatal
            print(f"seed {p['seed']}: {type(e).__name__}: {e}")
            seen = []
        for text, rec, wide in seen:
            entry = replays.setdefault(text, {"text": text, "counts": {u: rec[u].shape[-1] for u in "dabc"},
                                              "wide": wide, "inputs": [], "emu": [], "where": []})
            entry["inputs"].append(np.concatenate([rec[u].astype(np.uint64) for u in "abc"], axis=-1))
            entry["emu"].append(rec["d"].astype(np.uint64))
            entry["where"] += [p["seed"]] * rec["d"].shape[0]
        print(f"seed {p['seed']}: {p['npoints']} trace points, {len(seen)} mma executions", flush=True)
    for e in replays.values():
        e["inputs"] = np.concatenate(e["inputs"]).tolist()
        e["emu"] = np.concatenate(e["emu"]).tolist()
    data["replays"] = list(replays.values())
    with gzip.open(path, "wt") as f:
        json.dump(data, f)


# ------------------------------------------------------------------ run (both backends)

def run_traces(data, launch, strict=False):
    """{seed: trace words} from ``launch(ptx, kernel, grid, block, shared, args) -> args after``."""
    from tests.fuzz.generator import generate
    out = {}
    for p in data["programs"]:
        prog = generate(p["seed"], version=data["version"])
        args = list(prog.make_args()) + [trace_buffer(prog, p["npoints"], p.get("extra_words", 0))]
        try:
            res = launch(data["modules"][p["module"]], p["kernel"], tuple(p["grid"]), tuple(p["block"]), p["shared"], args)
            out[f"t{p['seed']}"] = np.asarray(res[-1], np.uint32)
            out[f"o{p['seed']}"] = np.concatenate([np.asarray(res[i]).view(np.uint32) for i in (2, 3, 4)])
        except Exception as e:   # noqa: BLE001
            if strict:
                raise
            out[f"e{p['seed']}"] = np.array(f"{type(e).__name__}: {e}")
    return out


def run_replays(data, launch):
    out = {}
    for i, e in enumerate(data["replays"]):
        inp = np.asarray(e["inputs"], np.uint64)              # (warps, 32, registers)
        dst = np.zeros((inp.shape[0], 32, e["counts"]["d"]), np.uint64)
        try:
            res = launch(replay_module(e["text"], e["counts"], e["wide"]), "replay", (inp.shape[0],), (32,), 0,
                         [inp, dst])
            out[f"r{i}"] = np.asarray(res[1], np.uint64)
        except Exception as e2:   # noqa: BLE001
            out[f"re{i}"] = np.array(f"{type(e2).__name__}: {e2}")
    return out


@functools.lru_cache(maxsize=8)
def _gpu_module(ptx):
    from cudalab.gpu.backend import GpuModule
    return GpuModule(ptx)


@functools.lru_cache(maxsize=8)
def _emu_module(ptx):
    from tests.fuzz.run import emu_module
    return emu_module(ptx, re.findall(r"\.entry\s+(\w+)", ptx))


def gpu_launch(ptx, kernel, grid, block, shared, args):
    from cudalab.gpu.backend import GpuBuffer
    mod = _gpu_module(ptx)
    dev = [GpuBuffer.from_host(a) if isinstance(a, np.ndarray) else a for a in args]
    mod.launch(kernel, grid, block, shared, dev)
    return [d.copy_to_host(np.empty_like(a)) if isinstance(a, np.ndarray) else a for a, d in zip(args, dev)]


def emu_launch(version):
    def launch(ptx, kernel, grid, block, shared, args):
        from tests.fuzz.run import on_profile
        mod = _emu_module(ptx)
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        with on_profile(version):
            mod.get_kernel(kernel).launch(grid, block, tuple(args), shared=shared)
        return args
    return launch


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def cmd_gpu(path, out):
    if path.endswith("forms.json"):             # wmma load/store replays
        with open(path) as f:
            res = run_ldst(json.load(f), gpu_launch)
        np.savez_compressed(out, **res)
        print(f"wrote {out}: {len(res)} arrays")
        return
    data = load(path)
    res = run_traces(data, gpu_launch)
    res.update(run_replays(data, gpu_launch))
    np.savez_compressed(out, **res)
    print(f"wrote {out}: {len(res)} arrays")


# ------------------------------------------------------------------ compare (here)

def first_difference(data, emu, gpu):
    """{seed: (trace point, statement, [(thread, value, emu, gpu)...])} at the first differing point."""
    found = {}
    for p in data["programs"]:
        s = p["seed"]
        if f"t{s}" not in gpu or f"t{s}" not in emu:
            found[s] = ("error", str(gpu.get(f"e{s}", "")) + " / " + str(emu.get(f"e{s}", "")), [])
            continue
        n = len(emu[f"t{s}"]) - p.get("extra_words", 0)
        a = emu[f"t{s}"][:n].reshape(max(p["npoints"], 1), -1, 8)
        b = gpu[f"t{s}"][:n].reshape(a.shape)
        bad = np.argwhere(a != b)
        if not bad.size:
            same = np.array_equal(emu[f"o{s}"], gpu[f"o{s}"])
            found[s] = ("none", "outputs " + ("match" if same else "differ (after the last point)"), [])
            continue
        k = int(bad[0, 0])
        rows = [(int(t), VALUES[v], int(a[k, t, v]), int(b[k, t, v])) for _, t, v in bad[bad[:, 0] == k][:6]]
        found[s] = (k, p["points"][k], rows)
    return found


def cmd_compare(path, gpu_path):
    data = load(path)
    gpu = dict(np.load(gpu_path))
    emu = run_traces(data, emu_launch(data["version"]))
    for s, (k, stmt, rows) in first_difference(data, emu, gpu).items():
        print(f"seed {s}: point {k}: {stmt}\n    {rows}")
    emr = run_replays(data, emu_launch(data["version"]))
    for i, e in enumerate(data["replays"]):
        if f"r{i}" not in gpu:
            print(f"replay {e['text']}: {gpu.get(f're{i}')}")
            continue
        g, m = gpu[f"r{i}"], emr[f"r{i}"]
        bad = np.flatnonzero((g != m).any(axis=(1, 2)))
        seeds = sorted({e["where"][j] for j in bad})
        print(f"replay {e['text']}: {len(bad)} of {g.shape[0]} warps differ (seeds {seeds})")


def save_replays(path, gpu_path, out):
    """Keep the GPU's answers to the tensor-core replays as a test fixture: per instruction form
    ``i``, ``text_i`` (instruction, register counts, widths as JSON), ``in_i`` and ``gpu_i`` (register words)."""
    data = load(path)
    gpu = dict(np.load(gpu_path))
    keep = {}
    for i, e in enumerate(data["replays"]):
        if f"r{i}" not in gpu:
            continue
        word = np.uint64 if any(e["wide"].values()) else np.uint32
        keep[f"text_{i}"] = np.array(json.dumps({k: e[k] for k in ("text", "counts", "wide")}))
        keep[f"in_{i}"] = np.asarray(e["inputs"], np.uint64).astype(word)
        keep[f"gpu_{i}"] = gpu[f"r{i}"].astype(word)
    np.savez_compressed(out, **keep)


# ------------------------------------------------------------------ wmma load/store replays

TILE = 4096     # bytes of shared memory a wmma.load reads or a wmma.store writes


def ldst_forms(modules):
    """{instruction: registers} of every wmma.load / wmma.store in the PTX modules."""
    forms = {}
    for m in modules:
        for x in re.findall(r"\bwmma\.(?:load|store)\.[\w.]+\s+[^;]*;", m):
            op = x.split()[0]
            regs = x[x.index("{") + 1:x.index("}")]
            forms[op] = len(re.findall(r"%\w+", regs))
    return forms


def ldst_module(op, nregs):
    """A one-warp kernel for one wmma.load / wmma.store form. Load: the tile comes from ``pin`` (TILE
    bytes), each lane's registers go to ``pout`` (8-byte slots). Store: each lane's registers come
    from ``pin`` (8-byte slots), the zeroed tile goes to ``pout`` after the store."""
    m, n, k = (int(x) for x in re.search(r"m(\d+)n(\d+)k(\d+)", op).groups())
    use = op.split(".")[2]
    row = ".row." in op
    ld = {"a": k if row else m, "b": n if row else k}.get(use, n if row else m)
    wide = op.endswith(".f64")
    r = "%x" if wide else "%r"
    bits = 64 if wide else 32
    regs = ", ".join(f"{r}{j}" for j in range(nregs))
    addr = "%t5" if ".shared." in op else "%rd5"
    lines = [".version 8.0", ".target sm_90", ".address_size 64",
             ".visible .entry ldst(.param .u64 pin, .param .u64 pout) {",
             f"  .reg .b32 %r<{nregs + 1}>; .reg .b64 %x<{nregs + 1}>; .reg .b32 %t<8>; .reg .b64 %rd<8>; .reg .b32 %w;",
             f"  .shared .align 128 .b8 tile[{TILE}];",
             "  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];",
             "  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;",
             "  mov.u32 %t0, %tid.x; mov.u32 %t5, tile; cvta.shared.u64 %rd5, tile;",
             f"  mov.u32 %t6, {ld};", "  mul.wide.u32 %rd6, %t0, 4; mul.lo.u32 %t1, %t0, 4;"]
    load = op.split(".")[1] == "load"
    for j in range(TILE // 128):                  # each lane moves one word of every 128 bytes
        if load:
            lines.append(f"  ld.global.b32 %w, [%rd1+0]; st.shared.b32 [%t1+{j * 128}], %w;"
                         .replace("%rd1+0", f"%rd3+{j * 128}"))
        else:
            lines.append(f"  st.shared.b32 [%t1+{j * 128}], %w;")
    lines.insert(-TILE // 128, "  add.s64 %rd3, %rd1, %rd6; add.s32 %t1, %t1, %t5; add.s64 %rd4, %rd2, %rd6; mov.u32 %w, 0;")
    lines.append("  bar.warp.sync -1;")
    lines.append(f"  mul.wide.u32 %rd7, %t0, {8 * nregs};")
    if load:
        lines.append(f"  {op} {{{regs}}}, [{addr}], %t6;")
        lines.append("  add.s64 %rd7, %rd2, %rd7;")
        lines += [f"  st.global.b{bits} [%rd7+{8 * j}], {r}{j};" for j in range(nregs)]
    else:
        lines.append("  add.s64 %rd7, %rd1, %rd7;")
        lines += [f"  ld.global.b{bits} {r}{j}, [%rd7+{8 * j}];" for j in range(nregs)]
        lines.append(f"  {op} [{addr}], {{{regs}}}, %t6;")
        lines.append("  bar.warp.sync -1;")
        lines += [f"  ld.shared.b32 %w, [%t1+{j * 128}]; st.global.b32 [%rd4+{j * 128}], %w;" for j in range(TILE // 128)]
    lines += ["  ret;", "}"]
    return "\n".join(lines)


def ldst_inputs(op, nregs, seed=1):
    rng = np.random.default_rng(seed)
    if op.split(".")[1] == "load":
        return rng.integers(0, 256, TILE, dtype=np.uint8), np.zeros(32 * nregs, np.uint64)
    return rng.integers(0, 2 ** 63, 32 * nregs, dtype=np.uint64) | np.uint64(1 << 62), np.zeros(TILE, np.uint8)


def run_ldst(forms, launch):
    out = {}
    for i, (op, nregs) in enumerate(sorted(forms.items())):
        src, dst = ldst_inputs(op, nregs)
        try:
            out[f"w{i}"] = np.asarray(launch(ldst_module(op, nregs), "ldst", (1,), (32,), 0, [src, dst])[1])
        except Exception as e:   # noqa: BLE001
            out[f"we{i}"] = np.array(f"{type(e).__name__}: {e}")
    return out


# ------------------------------------------------------------------ ptxas's folds, written back into the PTX

def fold_vibmax(ptx):
    """``__vibmax_s16x2(K, b)`` with a constant K: ptxas's ``VIMNMX.S16x2 d, P0, P1, b, K`` compares the
    maximum with b, so the predicates' ``setp.eq`` reads b's halves instead of K's."""
    consts = set(re.findall(r"mov\.u32\s+(%r\d+),\s*-?\d+;", ptx))
    # a constant expression NVRTC left to ptxas: a float constant converted (seed 2857 of version 3:
    # ``__float2uint_ru(__int_as_float(0x4f800000))`` is ``cvt.rpi.u32.f32`` of ``mov.f32 0f4F800000``)
    fconsts = set(re.findall(r"mov\.f32\s+(%f\d+),\s*0f[0-9A-F]{8};", ptx))
    consts |= {r for r, f in re.findall(r"cvt\.r[nzmp]i\.[us]32\.f32\s+(%r\d+),\s*(%f\d+);", ptx) if f in fconsts}

    def fix(m):
        a, b = m.group(3), m.group(4)
        return m.group(0).replace(f"mov.b32 {{rs2, rs3}}, {a};", f"mov.b32 {{rs2, rs3}}, {b};") if a in consts else m.group(0)
    return re.sub(r"(max|min)\.[su]16x2 (%r\d+), (%r\d+), (%r\d+);.*?setp\.eq\.[su]16 pu, rs1, rs3;", fix, ptx, flags=re.S)


def fold_dpx_neg(ptx):
    """A ``neg.s32`` folded into a three-input DPX min/max (``VIMNMX3``) loses its minus when it feeds the
    first of the two instructions (the one writing ``t1``); the third operand's keeps it (seed 4540:
    ``__vimax3_s32_relu(a, -x, -y)`` gave max(a, x, -y) on the H200)."""
    negs = dict(re.findall(r"neg\.s32\s+(%r\d+),\s*(%r\d+);", ptx))

    def fix(m):
        first = m.group(0)
        for x, y in negs.items():
            first = re.sub(re.escape(x) + r"\b(?!\s*,\s*-?\d)", y, first)
        return first
    return re.sub(r"(?<=\.reg \.[su]32 t1;)\s*[\w.]+\s+t1,[^;]*;", fix, ptx)


def fold_byte_store(ptx):
    """The low byte of a half/bf16 result stored as ``F2I.U8`` of its value, a bf16's bits read as a half
    (``F2I.U8.F16``): after an fma.rn.bf16 the SASS of seed 353 shows it; seeds 2930 (max.bf16) and
    4640 (cvt.rn.bf16.f32) give the GPU's bits only so."""
    halves = set()                  # registers holding a half or bf16 result
    for m in re.finditer(r"\b([a-z]+)((?:\.[A-Za-z0-9:]+)*)\s+(%rs\d+)\s*[,;]", ptx):
        types = [t for t in m.group(2).split(".") if t in ("f16", "bf16", "b16", "u16", "s16", "u8", "s8", "u32",
                                                           "s32", "f32", "f64", "b32", "u64", "s64")]
        if types and types[0] in ("f16", "bf16") and m.group(1) not in ("ld", "mov", "st"):
            halves.add(m.group(3))

    def fix(m):
        st, addr, reg = m.groups()
        if reg not in halves:
            return m.group(0)
        return (f"{{ .reg .f32 zf; .reg .u16 zh; cvt.f32.f16 zf, {reg}; cvt.rzi.sat.u8.f32 zh, zf; "
                f"{st} [{addr}], zh; }}")
    return re.sub(r"(st(?:\.\w+)*\.[us]8)\s+\[([^\]]+)\],\s*(%rs\d+);", fix, ptx)


def fold_selp_half(ptx):
    """``selp.u16 r, 1, 0, p`` used as a half. Read by ``cvt.f32.f16`` (directly or through a
    ``mov.b32`` pack and ``mov.b16`` unpack of a half2), ptxas's ``FSEL f, RZ, 1.0, !p`` makes it the
    half 1.0, not the half with bits 1 (2^-24), as the SASS of seed 764 shows (cause 19); negated by
    ``neg.f16`` or ``neg.bf16``, it becomes the integer -1 (0xffff), not 0x8001 (seed 914 gives the GPU's bits
    only so; the bf16 form: 1536 of version 3, 4800 of version 4).
    Converted to an integer as a bf16 (``cvt.rzi.s32.bf16``, ``__bfloat162int_rz`` of a 0/1 read as bf16
    bits), it counts as the bf16 1.0 and gives 1, not 0 (version 3's seed 945 gives the GPU's bits only so)."""
    sels = set(re.findall(r"selp\.u16\s+(%rs\d+),\s*1,\s*0,\s*%p\d+;", ptx))
    alias = {x: x for x in sels}
    for m in re.finditer(r"mov\.b32\s+(%r\d+),\s*\{(%rs\d+),\s*(%rs\d+)\}|mov\.b32\s+\{low,high\},\s*(%r\d+);\s*"
                         r"mov\.b16\s+(%rs\d+),\s*low;|mov\.b32\s+\{(%rs\d+),\s*%rs\d+\},\s*(%r\d+);", ptx):
        if m.group(1) and m.group(2) in alias:
            alias[m.group(1)] = alias[m.group(2)]           # packed as the low half
        elif m.group(4) in alias:
            alias[m.group(5)] = alias[m.group(4)]           # unpacked again
        elif m.group(7) in alias:
            alias[m.group(6)] = alias[m.group(7)]           # unpacked into two registers (seed 4952 of version 4)
    halves = {alias[r] for r in re.findall(r"cvt\.f32\.f16\s+%f\d+,\s*(%rs\d+);", ptx) if r in alias}
    bf16s = set(re.findall(r"cvt\.r[nzmp]i\.[su]32\.bf16\s+%r\d+,\s*(%rs\d+);", ptx)) & sels
    ptx = re.sub(r"selp\.u16(\s+)(%rs\d+),\s*1,\s*0,", lambda m: m.group(0).replace(", 1,", ", 16256,")
                 if m.group(2) in bf16s else m.group(0), ptx)
    ptx = re.sub(r"neg\.(b?f16)(\s+%rs\d+,\s*(%rs\d+);)",
                 lambda m: ("neg.s16" if m.group(3) in sels else "neg." + m.group(1)) + m.group(2), ptx)
    return re.sub(r"selp\.u16(\s+)(%rs\d+),\s*1,\s*0,", lambda m: m.group(0).replace(", 1,", ", 15360,")
                  if m.group(2) in halves else m.group(0), ptx)


def fold_selp_float(ptx):
    """``selp.u32 r, 1, 0, p; mov.b32 f, r; cvt.rz.f16.f32 h, f``: the float with bits 1 (1.4e-45)
    rounds to the half +0, but ptxas makes the half 1.0 (seed 60's SASS: ``SEL R19, RZ, 0x3c00, !P2``
    feeding the ``HFMA2``), as if the integer had been converted: the mov becomes that conversion."""
    sels = set(re.findall(r"selp\.u32\s+(%r\d+),\s*1,\s*0,\s*%p\d+;", ptx))
    floats = {m.group(1): m.group(2) for m in re.finditer(r"mov\.b32\s+(%f\d+),\s*(%r\d+);", ptx) if m.group(2) in sels}
    read = set(re.findall(r"cvt\.r[nzmp]\.b?f16\.f32\s+%rs\d+,\s*(%f\d+);", ptx)) & set(floats)
    return re.sub(r"mov\.b32(\s+)(%f\d+),\s*(%r\d+);", lambda m: f"cvt.rn.f32.u32{m.group(1)}{m.group(2)}, {m.group(3)};"
                  if m.group(2) in read else m.group(0), ptx)


def fold_relu_eq(ptx):
    """``min.s32.relu d, t1, b`` (the second instruction of a three-input DPX ``__vimin3_s32_relu``) tested by
    ``setp.eq d, b``: ptxas makes the pair ``VIMNMX.RELU RZ, P0, P0, t1, b``, whose predicate says the
    result is the *first* operand, t1 (seed 560's SASS; its 192 threads all follow ``d == t1`` on the H200,
    20 of them differ from ``d == b``). The comparison is written with t1, inside the inline asm."""
    return re.sub(r"(min\.s32\.relu (%r\d+), t1, (%r\d+);)\}(\s*// end inline asm\s*)"
                  r"setp\.eq\.s32\s+(%p\d+),\s*\2,\s*\3;",
                  lambda m: f"{m.group(1)} setp.eq.s32 {m.group(5)}, {m.group(2)}, t1;}}{m.group(4)}", ptx)


def fold_nan_const_abs(ptx):
    """``abs.f32``/``neg.f32`` of a register holding a NaN constant: ptxas computes it at compile time and
    keeps the payload (``fabsf(__int_as_float(0x7fc00000))`` stays 0x7fc00000), where the instruction run
    gives the canonical 0x7fffffff (cause 4); seed 2659 of version 3 gives the GPU's bits only so."""
    consts = dict(re.findall(r"mov\.f32\s+(%f\d+),\s*(0f[7F]F[89A-F][0-9A-F]{5});", ptx))

    def fix(m):
        op, d, a = m.groups()
        if a not in consts:
            return m.group(0)
        v = int(consts[a][2:], 16)
        return f"mov.b32 {d}, 0f{(v & 0x7FFFFFFF if op == 'abs' else v ^ 0x80000000):08X};"
    return re.sub(r"(abs|neg)\.f32\s+(%f\d+),\s*(%f\d+);", fix, ptx)


FOLDS = {"vibmax": fold_vibmax, "nan-const-abs": fold_nan_const_abs, "dpx-neg": fold_dpx_neg, "byte-store": fold_byte_store, "selp-half": fold_selp_half,
         "selp-float": fold_selp_float, "relu-eq": fold_relu_eq}


def cmd_ptxas(seeds, folds=tuple(FOLDS), version=2):
    """Emulate a version's programs with ptxas's folds written into their PTX and compare them with the
    GPU outputs in tests/fuzz/differing_gpu_v*.npz: a match says the fold explains the difference."""
    from tests.fuzz.run import DIFFERING, compare, compile_batch, load_results, run_emu_batch
    gpu = load_results(os.path.join(ROOT, "tests", "fuzz", DIFFERING[version][0]))
    data = compile_batch(seeds, DIFFERING[version][1], version)
    # each function on its own: register names repeat from one function to the next
    parts = re.split(r"(?m)^(?=(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b)", data["ptx"])
    for f in folds:
        parts = [FOLDS[f](p) for p in parts]
    data["ptx"] = "".join(parts)
    emu = run_emu_batch(data)
    for s in seeds:
        print(f"seed {s}: {'differs' if compare(emu, gpu, [s]) else 'gives the GPU bits'} with {', '.join(folds)}")


# ------------------------------------------------------------------ deep traces (every statement, in execution order)

DEEP_LIMIT = 1024            # trace entries a thread keeps (a program's loops are short)


def deep_source(prog, limit=DEEP_LIMIT):
    """The program with a trace buffer parameter and an entry appended after every statement line of the
    kernel and its helpers: (point, u0..u3, f0..f3 bits; a helper has no f3, f2 twice). Helpers find the
    buffer through a ``__device__`` pointer the kernel's threads set first. Returns (Program, points:
    [(function, source line)])."""
    k = prog.kernel
    lines = prog.src.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith(f'extern "C" __global__ void {k}('))
    lines[head] = lines[head].replace(", float p1)", ", float p1, unsigned* fz_tr)")
    pre = [f"__device__ unsigned* {k}_dtr;",
           f"#define {k}_T(p, a, b, c, d, e, f, g, h) {{ unsigned g_ = (blockIdx.y * gridDim.x + blockIdx.x) * "
           f"(blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x; unsigned* c_ = {k}_dtr + g_; "
           f"unsigned n_ = *c_ + 1u; *c_ = n_; if (n_ <= {limit}u) {{ unsigned* t_ = {k}_dtr + "
           f"(size_t)(gridDim.x * gridDim.y * blockDim.x * blockDim.y) * (1u + (size_t)(n_ - 1u) * 9u) + (size_t)g_ * 9u; "
           f"t_[0] = p; t_[1] = a; t_[2] = b; t_[3] = c; t_[4] = d; t_[5] = __float_as_uint(e); "
           f"t_[6] = __float_as_uint(f); t_[7] = __float_as_uint(g); t_[8] = __float_as_uint(h); }} }}"]
    out, points, fn, body = [], [], None, False
    for i, ln in enumerate(lines):
        st = ln.strip()
        if ln.startswith("__device__") and f"{k}_h" in ln or i == head:
            fn, body = ("kernel" if i == head else re.search(rf"({k}_h\d+)", ln).group(1)), False
        out.append(ln)
        if fn is None:
            continue
        if ln == "}":
            fn = None
            continue
        if st.startswith("float f0 = "):
            body = True
            if fn == "kernel":
                # past the statement-trace words run_traces' buffer starts with; each thread zeroes its count
                out.append(f"    {k}_dtr = fz_tr + (size_t)gridDim.x * gridDim.y * nt * 8u; {k}_dtr[gid] = 0u;")
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not body or not st.endswith(";") or st.startswith(("for (", "return", "break", "continue")) \
                or nxt.startswith(("else", "while")):
            continue
        f3 = "f3" if fn == "kernel" else "f2"
        out.append(f"    {k}_T({len(points)}u, u0, u1, u2, u3, f0, f1, f2, {f3});")
        points.append((fn, st[:300]))
    return dataclasses.replace(prog, src="\n".join(pre + out)), points


def make_deep(path, seeds, version=2):
    """Deep-traced programs (all in one module, one NVRTC call)."""
    from cudalab.frontend.nvrtc import compile_to_ptx
    from tests.fuzz.generator import batch_source, generate
    from tests.fuzz.run import DIFFERING, OPTIONS
    traced = {s: deep_source(generate(s, version=version)) for s in seeds}
    progs = [t[0] for t in traced.values()]
    ptx = compile_to_ptx(batch_source(progs), OPTIONS + progs[0].options + DIFFERING[version][1]).ptx
    data = {"version": version, "modules": [ptx], "replays": [],
            "programs": [{"seed": s, "module": 0, "kernel": p.kernel, "points": pts, "npoints": 0,
                          "grid": list(p.grid), "block": list(p.block), "shared": p.shared,
                          "extra_words": p.threads * (1 + 9 * DEEP_LIMIT)}
                         for s, (p, pts) in traced.items()]}
    with gzip.open(path, "wt") as f:
        json.dump(data, f)


def _both_traced(data, emu, gpu, found):
    """(program, its trace words on the emulator, on the GPU) for each program both backends traced; a
    program that stopped on either goes into ``found`` as the two errors."""
    for p in data["programs"]:
        s = p["seed"]
        if f"t{s}" not in gpu or f"t{s}" not in emu:
            found[s] = str(gpu.get(f"e{s}", "")) + " / " + str(emu.get(f"e{s}", ""))
            continue
        yield p, emu[f"t{s}"][-p["extra_words"]:], gpu[f"t{s}"][-p["extra_words"]:]


def first_deep(data, emu, gpu, threads=4):
    """{seed: [(entry, thread, point, function, statement, emu row, gpu row)..., summary]}: where the
    first few threads' traces part (earliest entry first), then how many threads part and at which point
    each thread's first differing entry lies (threads run at their own pace, so the most common first
    point, not the earliest entry, is the statement to read)."""
    found = {}
    for p, a, b in _both_traced(data, emu, gpu, found):
        n = p["extra_words"] // (1 + 9 * DEEP_LIMIT)
        ta, tb = (x[n:].reshape(DEEP_LIMIT, n, 9) for x in (a, b))
        rows, points = [], {}
        for t in range(n):
            bad = np.flatnonzero((ta[:, t] != tb[:, t]).any(1))
            if bad.size:
                e = int(bad[0])
                pt = int(tb[e, t, 0]) if tb[e, t, 0] < len(p["points"]) else -1
                points[pt] = points.get(pt, 0) + 1
                rows.append((e, t, pt, *(p["points"][pt] if pt >= 0 else ("?", "?")),
                             [hex(int(v)) for v in ta[e, t]], [hex(int(v)) for v in tb[e, t]]))
        rows.sort()
        found[p["seed"]] = rows[:threads] + [("threads differing", len(rows), "first points (point: threads)",
                                              dict(sorted(points.items(), key=lambda kv: -kv[1])))]
    return found


# ------------------------------------------------------------------ instruction traces inside one statement

_REG_DECL = re.compile(r"\.reg\s+\.(\w+)\s+%(\w+?)<\d+>")
_STORE = {"b32": "b32", "u32": "b32", "s32": "b32", "f32": "f32", "b64": "b64", "u64": "b64", "s64": "b64",
          "f64": "f64", "b16": "b16", "u16": "b16", "s16": "b16", "pred": "pred"}
_NO_DEST = ("st", "bar", "barrier", "bra", "ret", "exit", "red", "cp", "fence", "membar", "call", "prefetch")
SLOT_SENTINEL = 0xFEEDF00DFEEDF00D


def instrument(ptx, kernel, lo, hi, byte_base, kernel_lines):
    """Store the destination of every instruction of ``kernel`` whose source line is in (lo, hi) into its
    own 8-byte slot of the trace buffer (the last parameter), ``byte_base`` bytes in, one row of slots
    per thread; ``kernel_lines``: the kernel's first and last source lines. Returns (ptx, [(slot, PTX
    line, source line)])."""
    lines = ptx.split("\n")
    start = next(i for i, ln in enumerate(lines) if re.match(rf"\.(visible\s+)?\.entry\s+{kernel}\(", ln.strip()))
    after = next((i for i in range(start + 1, len(lines))
                  if re.match(r"\s*(\.visible\s+|\.weak\s+|\.extern\s+)?\.(entry|func)\b", lines[i])), len(lines))
    end = max(i for i in range(start, after) if lines[i] == "}")     # inline asm may hold a lone "}"
    params = [m for m in re.findall(rf"({kernel}_param_\d+)", "\n".join(lines[start:start + 20]))]
    last_param = max(set(params), key=lambda n: int(n.rsplit("_", 1)[1]))
    types = {}
    first_inst = None
    for i in range(start, end):
        m = _REG_DECL.search(lines[i])
        if m:
            types[m.group(2)] = m.group(1)
    body_open = next(i for i in range(start, end) if lines[i].strip() == "{")
    first_inst = next(i for i in range(body_open + 1, end)
                      if lines[i].strip() and not lines[i].strip().startswith((".", "//")))
    out, slots, cur, nslot = [], [], None, 0
    for i in range(start, end):
        ln = lines[i]
        st = ln.strip()
        if i == first_inst:
            out += ["\t.reg .b32 %zq<12>; .reg .b64 %zd<3>;",
                    f"\tld.param.u64 %zd0, [{last_param}]; cvta.to.global.u64 %zd0, %zd0;",
                    "\tmov.u32 %zq0, %ntid.x; mov.u32 %zq1, %ntid.y; mul.lo.u32 %zq2, %zq0, %zq1;",
                    "\tmov.u32 %zq3, %tid.y; mov.u32 %zq4, %tid.x; mad.lo.u32 %zq5, %zq3, %zq0, %zq4;",
                    "\tmov.u32 %zq6, %ctaid.y; mov.u32 %zq7, %nctaid.x; mov.u32 %zq8, %ctaid.x;",
                    "\tmad.lo.u32 %zq9, %zq6, %zq7, %zq8; mad.lo.u32 %zq10, %zq9, %zq2, %zq5;",
                    "\tmul.wide.u32 %zd1, %zq10, SLOTBYTES; add.s64 %zd0, %zd0, %zd1;",
                    f"\tadd.s64 %zd0, %zd0, {byte_base};"]
        out.append(ln)
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)", st)
        if m:
            at = re.search(r"inlined_at\s+1\s+(\d+)", st)
            line = int(m.group(2)) if m.group(1) == "1" else -1
            if kernel_lines[0] <= line <= kernel_lines[1]:
                cur = line
            elif at and kernel_lines[0] <= int(at.group(1)) <= kernel_lines[1]:
                cur = int(at.group(1))
            continue
        st = st.lstrip("{ ").rstrip("} ").strip()          # an inline asm block's { and } around an instruction
        if cur is None or not (lo < cur < hi) or i < first_inst or not st or st.startswith((".", "//", "$")):
            continue
        g = re.match(r"(@!?%\w+\s+)?([\w.:]+)\s*(.*?);?\s*$", st)
        if not g or g.group(2).split(".")[0] in _NO_DEST or not g.group(3):
            continue
        guard, ops = g.group(1) or "", g.group(3)
        first = ops[:ops.index("}") + 1] if ops.startswith("{") else ops.split(",")[0]
        for reg in re.findall(r"%(\w+)", first):
            kind = next((_STORE[t] for pre, t in types.items() if re.fullmatch(rf"{pre}\d+", reg)), None)
            if kind is None:
                continue
            off = 8 * nslot
            if kind == "pred":
                out.append(f"\t{guard}selp.b32 %zq11, 1, 0, %{reg}; {guard}st.global.b32 [%zd0+{off}], %zq11;")
            else:
                out.append(f"\t{guard}st.global.{kind} [%zd0+{off}], %{reg};")
            slots.append((nslot, st, cur))
            nslot += 1
    text = "\n".join(lines[:start] + out + lines[end:]).replace("SLOTBYTES", str(8 * max(nslot, 1)))
    return text, slots


def make_instrumented(path, cases, version=2):
    """``cases``: {seed: trace point}: instrument the statement before that point (for point None,
    the kernel's tail; for "all", every statement) of each program; all programs in one module (one
    NVRTC call)."""
    from cudalab.frontend.nvrtc import compile_to_ptx
    from tests.fuzz.generator import batch_source, generate
    from tests.fuzz.run import DIFFERING, OPTIONS
    extra = DIFFERING[version][1]
    traced = {s: traced_source(generate(s, version=version)) for s in cases}
    src = batch_source([t[0] for t in traced.values()])
    ptx = compile_to_ptx(src, OPTIONS + next(iter(traced.values()))[0].options + extra).ptx
    lines = src.split("\n")
    progs = []
    for s, k in cases.items():
        prog, npts, points = traced[s]
        kstart = next(i for i, ln in enumerate(lines) if ln.startswith(f'extern "C" __global__ void fz{s}('))
        kend = next(i for i in range(kstart, len(lines)) if lines[i] == "}") + 1
        marks = [i + 1 for i in range(kstart, kend) if "unsigned* t_ = fz_tr + ((size_t)" in lines[i]]
        body = next(i for i in range(kstart, len(lines)) if lines[i].startswith("    float f0 = ")) + 1
        if k == "all":                  # every statement: a slot per instruction of the whole body
            lo, hi = body, kend
        else:
            lo = (marks[k - 1] if k else body) if k is not None else (marks[-1] if marks else body)
            hi = marks[k] if k is not None else kend
        base = max(npts, 1) * prog.threads * 8 * 4
        ptx, slots = instrument(ptx, prog.kernel, lo, hi, base, (kstart + 1, kend))
        progs.append({"seed": s, "module": 0, "kernel": prog.kernel, "points": points,
                      "npoints": npts, "grid": list(prog.grid), "block": list(prog.block), "shared": prog.shared,
                      "slots": slots, "extra_words": prog.threads * 2 * max(len(slots), 1)})
        print(f"seed {s}: statement {k}, lines {lo}-{hi}, {len(slots)} slots", flush=True)
    with gzip.open(path, "wt") as f:
        json.dump({"version": version, "modules": [ptx], "programs": progs, "replays": []}, f)


def first_slot(data, emu, gpu):
    """{seed: [(slot, PTX line, source line, threads differing, (thread, emu, gpu))...]} in PTX order,
    the first few differing slots."""
    found = {}
    for p, a, b in _both_traced(data, emu, gpu, found):
        s = p["seed"]
        a = a.view(np.uint64).reshape(-1, max(len(p["slots"]), 1))
        b = b.view(np.uint64).reshape(a.shape)
        rows = []
        for slot, text, line in p["slots"]:
            if text.startswith("atom"):     # its return depends on the order of the atomics; never read
                continue
            bad = np.flatnonzero(a[:, slot] != b[:, slot])
            if bad.size:
                t = int(bad[0])
                rows.append((slot, text, line, int(bad.size), (t, hex(int(a[t, slot])), hex(int(b[t, slot])))))
            if len(rows) >= 4:
                break
        found[s] = rows
    return found


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["make", "gpu", "compare", "ptxas"])
    ap.add_argument("path")
    ap.add_argument("rest", nargs="*")
    ap.add_argument("--version", type=int, default=2)
    ap.add_argument("--folds", default=",".join(FOLDS), help=f"ptxas: which folds (of {', '.join(FOLDS)})")
    o = ap.parse_args(argv)
    if o.cmd == "make":
        make(o.path, [int(s) for s in o.rest], o.version)
    elif o.cmd == "ptxas":             # PATH is unused: python tools/fuzz_locate.py ptxas - SEED...
        cmd_ptxas([int(x) for x in o.rest], tuple(f for f in o.folds.split(",") if f), o.version)
    elif o.cmd == "gpu":
        cmd_gpu(o.path, o.rest[0])
    else:
        cmd_compare(o.path, o.rest[0])


if __name__ == "__main__":
    main(sys.argv[1:])
