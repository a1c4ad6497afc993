"""PTX text -> ``ir.Module``: the subset of the PTX ISA that NVRTC and nvcc emit.

The parser splits the text into statements (``;``-terminated instructions and directives, labels,
``{``/``}`` scopes, ``.loc`` lines), then reads module directives, variables with initializers,
``.entry``/``.func`` headers with their parameters, and function bodies. Anything it does not know
raises ``PtxSyntaxError`` naming the PTX line, so a surprise surfaces at load time, not mid-kernel.
"""
from __future__ import annotations

import re
from collections import ChainMap

from .ir import TYPES, Function, Instruction, Module, Param, Variable

TYPE_SIZE = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}


class PtxSyntaxError(ValueError):
    pass


def type_size(t: str) -> int:
    if t == "pred":
        return 1
    if t in ("f16x2", "bf16x2"):
        return 4
    if t == "bf16":
        return 2
    if t == "tf32":
        return 4
    if t in ("e4m3", "e5m2"):
        return 1
    m = re.search(r"(\d+)$", t)
    return TYPE_SIZE[m.group(1)] if m else 4


# ------------------------------------------------------------------ statements

def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _statements(text: str):
    """Yield (kind, text, ptx_line) with kind in stmt | label | open | close | loc."""
    text = _strip_comments(text.replace("\x00", ""))
    lines = text.split("\n")
    i, n = 0, len(lines)
    buf, start = "", 0
    while i < n:
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        if not buf:
            start = i
            if re.match(r"^\.(version|target|address_size)\s", line):
                yield ("stmt", line.rstrip(";"), start)
                continue
            if re.match(r"^\.(loc|file)\s", line):
                yield ("loc" if line.startswith(".loc") else "file", line, start)
                continue
            if line.startswith(".section"):
                depth = line.count("{") - line.count("}")
                while (depth > 0 or "{" not in line) and i < n:
                    line = lines[i]
                    i += 1
                    depth += line.count("{") - line.count("}")
                    if depth <= 0 and "}" in line:
                        break
                continue
        buf = (buf + " " + line).strip() if buf else line
        while buf:
            kind, length = _next_statement(buf)
            if kind is None:
                break
            stmt, buf = buf[:length].strip(), buf[length:].strip()
            if kind == "stmt":
                stmt = stmt.rstrip(";").strip()
            yield kind, stmt, start
    if buf.strip():
        raise PtxSyntaxError(f"PTX ends in the middle of a statement: {buf[:80]!r}")


_LABEL = re.compile(r"^([$%\w.]+):(?!:)")


def _next_statement(buf: str):
    """Find the first complete statement at the start of ``buf``: (kind, length) or (None, 0)."""
    if buf[0] == "{":
        return "open", 1
    if buf[0] == "}":
        return "close", 1
    m = _LABEL.match(buf)
    if m and not buf.startswith("."):
        return "label", m.end()
    is_header = bool(re.match(r"^(\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b", buf))
    paren = brace = 0
    for j, ch in enumerate(buf):
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        elif ch == "{":
            if is_header and paren == 0:
                return "stmt", j          # the body's '{' follows as its own statement
            brace += 1
        elif ch == "}":
            brace -= 1
        elif ch == ";" and paren == 0 and brace == 0:
            return "stmt", j + 1
    return None, 0


# ------------------------------------------------------------------ operands

_FLOAT_IMM = re.compile(r"^0[fF]([0-9a-fA-F]{8})$")
_DOUBLE_IMM = re.compile(r"^0[dD]([0-9a-fA-F]{16})$")
_SREGS = {"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid",
          "clock", "clock64", "clock_hi", "globaltimer", "globaltimer_lo", "globaltimer_hi",
          "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt",
          "dynamic_smem_size", "total_smem_size", "aggr_smem_size", "clusterid", "nclusterid",
          "cluster_ctaid", "cluster_nctaid", "cluster_ctarank", "cluster_nctarank", "is_explicit_cluster"}


def _split_top(s: str, sep: str = ","):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_int(tok: str) -> int:
    t = tok.rstrip("Uu")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    if t.lower().startswith("0x"):
        v = int(t, 16)
    elif len(t) > 1 and t.startswith("0") and t.isdigit():
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


def parse_operand(tok: str, regs=None):
    """Read one operand. ``regs`` maps register names visible here (inner scopes first) to their
    unique names, so inline-asm blocks can declare `.reg .pred p;` without a `%`."""
    tok = tok.strip()
    if not tok:
        raise PtxSyntaxError("empty operand")
    if tok.startswith("[") and tok.endswith("]"):
        inner = tok[1:-1].strip()
        parts = _split_top(inner)
        if len(parts) > 1:        # [texture, {coordinates}] and [texture, sampler, {coordinates}]
            return ("mem", ("vec", tuple(parse_operand(p, regs) for p in parts)), 0)
        m = re.match(r"^(.*?)\s*\+\s*(-?\s*(?:0x[0-9a-fA-F]+|\d+))$", inner)
        if m and m.group(1):
            base, off = m.group(1), parse_int(m.group(2).replace(" ", ""))
        elif re.match(r"^-?(0x[0-9a-fA-F]+|\d+)$", inner):
            return ("mem", None, parse_int(inner))
        else:
            base, off = inner, 0
        return ("mem", parse_operand(base, regs), off)
    if tok.startswith("{") and tok.endswith("}"):
        return ("vec", tuple(parse_operand(t, regs) for t in _split_top(tok[1:-1])))
    if tok.startswith("(") and tok.endswith(")"):
        return ("list", tuple(parse_operand(t, regs) for t in _split_top(tok[1:-1])))
    if "|" in tok:
        a, b = tok.split("|")
        return ("pair", parse_operand(a, regs), parse_operand(b, regs))
    if tok.startswith("!"):
        op = parse_operand(tok[1:], regs)
        return ("reg", op[1], True)
    if regs is not None and tok in regs:
        return ("reg", regs[tok], False)
    if tok.startswith("%"):
        name, _, comp = tok.partition(".")
        base = name[1:]
        if base in _SREGS or re.fullmatch(r"envreg\d+", base):
            return ("sreg", base, comp)
        return ("reg", tok, False)
    m = _FLOAT_IMM.match(tok)
    if m:
        return ("imm", int(m.group(1), 16), "f32")
    m = _DOUBLE_IMM.match(tok)
    if m:
        return ("imm", int(m.group(1), 16), "f64")
    if re.match(r"^[-+]?(0[xX][0-9a-fA-F]+|\d+)[Uu]?$", tok):
        return ("imm", parse_int(tok), "int")
    if re.match(r"^[-+]?\d*\.\d+([eE][-+]?\d+)?$", tok):
        import struct
        return ("imm", struct.unpack("<Q", struct.pack("<d", float(tok)))[0], "f64")
    if re.match(r"^[$\w.]+$", tok):
        return ("sym", tok)
    raise PtxSyntaxError(f"cannot read operand {tok!r}")


# ------------------------------------------------------------------ declarations

_VAR = re.compile(
    r"^(?P<pre>(?:\.(?:visible|extern|weak|common|global|const|shared|local|param)\s+)+)"
    r"(?:\.attribute\s*\(\s*\.managed\s*\)\s+)?"
    r"(?:\.align\s+(?P<align>\d+)\s+)?(?:\.ptr\s+(?:\.\w+\s+)*)?\.(?P<type>\w+)\s+(?P<name>[$\w.]+)"
    r"(?P<dims>(?:\s*\[\s*\d*\s*\])*)(?:\s*=\s*(?P<init>.*))?$", re.S)


def _parse_var(stmt: str):
    m = _VAR.match(stmt)
    if not m:
        return None
    pre = m.group("pre").split()
    space = next(p[1:] for p in pre if p[1:] in ("global", "const", "shared", "local", "param"))
    t = m.group("type")
    elem = type_size(t)
    count = 1
    extern_unsized = False
    for d in re.findall(r"\[\s*(\d*)\s*\]", m.group("dims") or ""):
        if d == "":
            extern_unsized = True
            count = 0
        else:
            count *= int(d)
    align = int(m.group("align") or elem)
    init, relocs = None, ()
    if m.group("init"):
        init, relocs = _parse_init(m.group("init"), t, elem, count)
    return Variable(name=m.group("name"), space=space, type=t, size=0 if extern_unsized else elem * count,
                    align=align, init=init, extern=".extern" in pre or extern_unsized, relocs=relocs)


def _parse_init(text: str, t: str, elem: int, count: int):
    import struct
    vals = [v.strip() for v in re.split(r"[{},]", text) if v.strip()]
    out = bytearray()
    relocs = []
    for v in vals:
        if re.match(r"^(generic\()?[A-Za-z_$][\w$.]*\)?(\+\d+)?$", v) and not _FLOAT_IMM.match(v) \
                and not _DOUBLE_IMM.match(v):
            name = re.sub(r"^generic\((.*)\)$", r"\1", v)
            relocs.append((len(out), name))
            out += b"\0" * elem
            continue
        op = parse_operand(v)
        if op[0] != "imm":
            raise PtxSyntaxError(f"cannot read initializer {v!r}")
        if t.startswith("f") and op[2] == "int" and t in ("f32", "f64"):
            out += struct.pack("<f" if t == "f32" else "<d", float(op[1]))
        elif op[2] == "f32":
            out += struct.pack("<I", op[1])
        elif op[2] == "f64" and elem == 4:
            out += struct.pack("<f", struct.unpack("<d", struct.pack("<Q", op[1]))[0])
        else:
            out += (op[1] & ((1 << (8 * elem)) - 1)).to_bytes(elem, "little")
    size = elem * max(count, 1)
    out = bytes(out[:size]) + b"\0" * max(0, size - len(out))
    return out, tuple(relocs)


def _parse_params(text: str):
    params = []
    for p in _split_top(text):
        # `.param .u64 .ptr .align 1 name` (newer NVRTC: the pointer's attributes after the type)
        p = re.sub(r"^(\.param\s+\.\w+)\s+\.ptr(?:\s+\.(?:global|shared|const|local))?(?:\s+\.align\s+\d+)?",
                   r"\1", p.strip())
        m = re.match(r"^\.param\s+(?:\.align\s+(\d+)\s+)?(?:\.ptr\s+(?:\.\w+\s+)*)?\.(\w+)\s+([$\w.]+)"
                     r"((?:\s*\[\s*\d+\s*\])*)$", p.strip())
        if not m:
            m2 = re.match(r"^\.reg\s+\.(\w+)\s+([$%\w.]+)$", p.strip())
            if m2:
                params.append(Param(m2.group(2), m2.group(1), type_size(m2.group(1)), type_size(m2.group(1))))
                continue
            raise PtxSyntaxError(f"cannot read parameter {p!r}")
        t, name = m.group(2), m.group(3)
        size = type_size(t)
        for d in re.findall(r"\[\s*(\d+)\s*\]", m.group(4) or ""):
            size *= int(d)
        params.append(Param(name, t, size, int(m.group(1) or type_size(t)), ptr=".ptr" in p))
    return params


_HEADER = re.compile(r"^(?P<pre>(?:\.(?:visible|weak|extern)\s+)*)\.(?P<kind>entry|func)\s*"
                     r"(?:\((?P<ret>[^)]*)\)\s*)?(?P<name>[$\w.]+)\s*(?:\((?P<params>.*?)\))?"
                     r"(?P<rest>[^()]*)$", re.S)


def _parse_header(stmt: str) -> Function:
    m = _HEADER.match(stmt)
    if not m:
        raise PtxSyntaxError(f"cannot read function header {stmt[:80]!r}")
    f = Function(name=m.group("name"), is_entry=m.group("kind") == "entry",
                 extern=".extern" in (m.group("pre") or ""))
    if m.group("ret"):
        f.returns = _parse_params(m.group("ret"))
    if m.group("params"):
        f.params = _parse_params(m.group("params"))
    for d, v in re.findall(r"\.(maxntid|reqntid|minnctapersm|maxnreg|noreturn|reqnctapercluster|"
                           r"explicitcluster|maxclusterrank)\s*([\d,\s]*)", m.group("rest") or ""):
        f.directives[d] = tuple(int(x) for x in re.findall(r"\d+", v))
    return f


# ------------------------------------------------------------------ instructions

def _parse_instruction(stmt: str, regs) -> Instruction:
    guard = None
    m = re.match(r"^@(!?)([%$\w.]+)\s+(.*)$", stmt, re.S)
    if m:
        name = m.group(2)
        guard = (regs[name] if regs is not None and name in regs else name, m.group(1) == "!")
        stmt = m.group(3)
    parts2 = stmt.split(None, 1)
    head, rest = parts2[0], (parts2[1].strip() if len(parts2) > 1 else "")
    parts = head.split(".")
    opcode, mods = parts[0], tuple(parts[1:])
    if opcode == "call":
        ops = tuple(parse_operand(t, regs) for t in _split_top(rest))
    else:
        ops = tuple(parse_operand(t, regs) for t in _split_top(rest)) if rest else ()
    return Instruction(opcode=opcode, mods=mods, operands=ops, guard=guard, text=stmt.strip())


_REG_DECL = re.compile(r"^\.reg\s*(?:\.v(\d)\s*)?\.(\w+)\s+(.*)$", re.S)


def _declare_regs(f: Function, stmt: str, scope: dict, nested: bool):
    """Declare registers; inside a nested `{ }` scope (inline asm) each name gets a unique name,
    since two asm blocks may declare the same name with different types."""
    m = _REG_DECL.match(stmt)
    if not m:
        raise PtxSyntaxError(f"cannot read register declaration {stmt!r}")
    t = m.group(2)

    def declare(name):
        unique = f"{name}${len(f.regs)}" if nested else name
        scope[name] = unique
        f.regs[unique] = t

    for item in _split_top(m.group(3)):
        mm = re.match(r"^([%$\w]+)\s*<\s*(\d+)\s*>$", item)
        if mm:
            for k in range(int(mm.group(2))):
                declare(f"{mm.group(1)}{k}")
        else:
            declare(item.strip())


def _in_front(f) -> bool:
    """Whether ``f`` is a skip-ahead function of cudalab's curand_kernel.h front (frontend/curand)."""
    return f is not None and f.name in ("cudalab_xorwow_jump", "cudalab_mrg_power")


def parse(text: str) -> Module:
    """Parse a PTX module. Raises PtxSyntaxError with the PTX line on anything unknown."""
    mod = Module()
    cur: Function | None = None
    depth = 0
    scopes: list = []
    line = file = elsewhere = None
    inlined: dict = {}            # .loc (file, line, column) -> the cell line it was inlined into
    # the source NVRTC or nvcc compiled is file 1, the first file the code names, unless the module opens
    # with the skip-ahead of cudalab's curand_kernel.h front (a called function, so compilers emit it
    # first, and its header and NVIDIA's take numbers 1 and 2): then it is the first file named after it
    main: int | None = 1
    for kind, stmt, ptx_line in _statements(text):
        try:
            if kind == "file":
                m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"', stmt)
                if m:
                    mod.files[int(m.group(1))] = m.group(2)
                continue
            if kind == "loc":
                parts = stmt.split()
                file, ln = int(parts[1]), int(parts[2].rstrip(","))
                col = int(parts[3].rstrip(",")) if len(parts) > 3 and parts[3].rstrip(",").isdigit() else 0
                m = re.search(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)", stmt)
                here = (file, ln, col)
                if main is None and not _in_front(cur):
                    main = file
                if file != main and m:
                    # code from a header (texture fetch, cuda_fp16.h, cuda::memcpy_async ...) inlined into the
                    # cell: name the cell's line that called it (file 1 is the source NVRTC compiled),
                    # following chains of inlined calls through the .loc lines seen before
                    at = tuple(int(g) for g in m.groups())
                    file, ln = (main, at[1]) if at[0] == main else inlined.get(at, (file, ln))
                inlined[here] = (file, ln)
                line = ln if ln > 0 and file == main else None
                elsewhere = (file, ln) if ln > 0 and file != main else None      # named below
                continue
            if kind == "open":
                depth += 1
                if cur is not None:
                    scopes.insert(0, {})
                continue
            if kind == "close":
                depth -= 1
                if scopes:
                    scopes.pop(0)
                if depth == 0:
                    cur = None
                    scopes = []
                continue
            if kind == "label":
                if cur is None:
                    raise PtxSyntaxError("label outside a function")
                cur.labels[stmt[:-1]] = len(cur.insts)
                continue
            if re.match(r"^[$\w]+\s*:\s*\.callprototype\b", stmt):
                continue    # the signature of an indirect call's target: the callee's own header says it
            if cur is None or depth == 0:
                if stmt.startswith(".version"):
                    mod.version = stmt.split()[1]
                elif stmt.startswith(".target"):
                    mod.target = stmt.split(None, 1)[1]
                elif stmt.startswith(".address_size"):
                    mod.address_size = int(stmt.split()[1])
                elif re.match(r"^(\.(visible|weak|extern)\s+)*\.(entry|func)\b", stmt):
                    f = _parse_header(stmt)
                    if _in_front(f) and not f.extern and all(g.extern for g in mod.functions.values()):
                        main = None
                    mod.functions[f.name] = f
                    if not f.extern:
                        cur = f
                        line = None
                elif stmt.startswith(".pragma"):
                    pass
                else:
                    v = _parse_var(stmt)
                    if v is None:
                        raise PtxSyntaxError(f"unknown module-level directive {stmt[:60]!r}")
                    mod.variables[v.name] = v
                continue
            # inside a function body
            if stmt.startswith(".reg"):
                _declare_regs(cur, stmt, scopes[0], nested=depth > 1)
            elif stmt.startswith((".local", ".shared", ".param", ".global", ".const")):
                v = _parse_var(stmt)
                if v is None:
                    raise PtxSyntaxError(f"cannot read declaration {stmt[:60]!r}")
                if v.space == "local":
                    cur.locals.append(v)
                elif v.space == "shared":
                    cur.shared.append(v)
                    mod.variables.setdefault(v.name, v)
                elif v.space == "param":
                    # call sequences reuse names (param0, param1) with other sizes: keep the largest
                    old = cur.body_params.get(v.name)
                    if old is None or v.size > old.size:
                        cur.body_params[v.name] = Param(v.name, v.type, v.size, v.align)
                else:
                    mod.variables.setdefault(v.name, v)
            elif stmt.startswith(".pragma") or stmt.startswith((".maxnreg", ".maxntid", ".reqntid")):
                pass
            else:
                inst = _parse_instruction(stmt, ChainMap(*scopes))
                inst.line, inst.file, inst.index, inst.elsewhere = line, file, len(cur.insts), elsewhere
                cur.insts.append(inst)
        except PtxSyntaxError as e:
            raise PtxSyntaxError(f"PTX line {ptx_line}, `{' '.join(stmt.split())[:80]}`: {e}") from None
    # a line of another file keeps the file's name (nvcc writes the .file table after the code): messages
    # say "line 12 of scan.cuh"
    names = {k: path.replace("\\", "/").rsplit("/", 1)[-1] for k, path in mod.files.items()}
    for f in mod.functions.values():
        for inst in f.insts:
            if inst.elsewhere:
                inst.elsewhere = (names[inst.elsewhere[0]], inst.elsewhere[1]) if inst.elsewhere[0] in names else None
    return mod
