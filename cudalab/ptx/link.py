"""PTX-level linking: the PTX of several translation units made into one module the emulator loads.

A program built from ``main.cu`` and ``kernels.cu`` has one PTX module per ``.cu`` file. On a GPU,
without ``-rdc=true`` each is loaded on its own; with it, nvlink joins them and resolves
``.extern .func helper`` / ``.extern .global counter`` in one file against the ``.visible``
definition in another. The emulator loads one module, so ``link`` joins the texts the way nvlink
would:

* an ``.extern`` declaration gives way to the definition in another module (one declaration stays
  when nothing defines the name: ``vprintf``, ``malloc`` and friends are the emulator's own);
* ``.weak`` definitions (templates, inline functions instantiated in several files) keep the first;
* a symbol private to its file (a ``static __device__`` variable, a non-rdc module's
  ``__constant__`` array) that another file also defines differently is renamed in the later file,
  so each file keeps its own. The host's ``cudaMemcpyToSymbol`` reaches the first file's copy
  (a difference from a GPU only when two files keep different values under one name);
* debug sections are dropped: the emulator reads lines from ``.loc`` alone. The first module's
  ``.cu`` file stays file 1 (build.py makes each module's own file its file 1), whose lines
  messages give as "line N"; the file numbers of the second and later modules move up by
  ``FILE_STEP`` per module, so their ``.file`` names stay theirs and their lines are named ("line 6
  of kernels.cu"), as nvlink keeps each module's line table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_HEAD = re.compile(r"^((?:\.(?:visible|extern|weak|common)\s+)*)\.(entry|func|global|const|shared|tex|"
                   r"texref|surfref|samplerref)\b")
_LINE_DIRECTIVES = (".version", ".target", ".address_size", ".file", ".loc")
FILE_NUMBER = re.compile(r'^(\s*\.(?:loc|file)\s+)(\d+)|(inlined_at\s+)(\d+)', re.M)
FILE_STEP = 1000


class PtxLinkError(ValueError):
    """Two modules define the same visible symbol (nvlink's "multiple definition")."""


@dataclass
class Item:
    """One top-level statement of a module: a directive, a variable, or a function with its body."""

    text: str
    kind: str = "other"          # "header", "section", "func", "var", "other"
    name: str = ""
    linkage: str = ""            # "visible", "extern", "weak", "common" or "" (private to the file)
    defines: bool = False        # a definition, not a declaration


_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"]*"|[{};\n]', re.S)


def items(text: str) -> list:
    """Split a PTX module into its top-level statements (comments and strings respected)."""
    out, start, depth, head = [], 0, 0, ""

    def cut(end):
        nonlocal start, head
        out.append(text[start:end])
        start, head = end, ""

    for m in _TOKENS.finditer(text):
        tok, end = m.group(), m.end()
        if tok == "\n":
            if depth == 0 and _code(text[start:end]).lstrip().startswith(_LINE_DIRECTIVES):
                cut(end)                       # .version, .target, .file ...: one line, no ';'
        elif tok == "{":
            if depth == 0:
                head = " ".join(_code(text[start:m.start()]).split())
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0 and (head.startswith(".section") or _is_function(head)):
                cut(end)
        elif tok == ";" and depth == 0:
            cut(end)
    if text[start:].strip():
        out.append(text[start:])
    return [_classify(t) for t in out if _code(t).strip()]


def _is_function(head: str) -> bool:
    m = _HEAD.match(head)
    return bool(m) and m.group(2) in ("entry", "func")


def _code(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _classify(text: str) -> Item:
    code = " ".join(_code(text).split())
    if code.startswith((".version", ".target", ".address_size")):
        return Item(text, "header")
    if code.startswith(".section"):
        return Item(text, "section")
    m = _HEAD.match(code)
    if not m:
        return Item(text)
    linkage = next((w for w in ("extern", "visible", "weak", "common") if f".{w}" in m.group(1)), "")
    if m.group(2) in ("entry", "func"):
        before_params = re.sub(r"^\.func\s*\([^)]*\)", ".func", code[m.start(2) - 1:])   # return value
        name = re.match(r"\.(?:entry|func)\s+([\w$]+)", before_params).group(1)
        return Item(text, "func", name, linkage, "{" in code and linkage != "extern")
    decl = re.sub(r"\s*(=.*)?;\s*$", "", code)
    name = re.search(r"([\w$]+)\s*(\[[^\]]*\])*\s*$", decl).group(1)
    return Item(text, "var", name, linkage, linkage != "extern")


def link(modules) -> str:
    """Join PTX modules (texts, in link order) into one module's text; see the module docstring."""
    if len(modules) == 1:
        return modules[0]
    parsed = [items(_file_numbers_up(m, k * FILE_STEP)) for k, m in enumerate(modules)]
    defined = {}                                   # name -> (module index, Item) of its definition
    renames = [dict() for _ in parsed]
    for k, its in enumerate(parsed):
        for it in its:
            if it.kind not in ("func", "var") or not it.defines:
                continue
            if it.name not in defined:
                defined[it.name] = (k, it)
                continue
            first_k, first = defined[it.name]
            if first_k == k or _same(first.text, it.text):
                continue
            if it.linkage == "visible" and first.linkage == "visible" and it.kind == "var":
                raise PtxLinkError(f"multiple definition of {it.name!r} (in modules {first_k + 1} and {k + 1})")
            if not it.linkage:
                renames[k][it.name] = f"{it.name}__tu{k + 1}"
    versions = [h for its in parsed for h in its if h.kind == "header"]
    out = [_highest(versions, ".version"), _first(versions, ".target"), _first(versions, ".address_size"),
           *(h.text.strip() for h in versions if _code(h.text).strip().startswith(".file")), ""]
    kept_decl = set()
    for k, its in enumerate(parsed):
        for it in its:
            if it.kind in ("header", "section"):
                continue
            text = it.text
            if it.kind in ("func", "var"):
                if not it.defines:
                    if it.name in defined or it.name in kept_decl:
                        continue                   # the definition (or one declaration) is enough
                    kept_decl.add(it.name)
                elif defined[it.name][0] != k and it.name not in renames[k]:
                    continue                       # a copy of a definition that an earlier module made
            for old, new in renames[k].items():
                text = re.sub(rf"(?<![\w$%.]){re.escape(old)}(?![\w$])", new, text)
            out.append(text.strip("\n"))
    return "\n".join(out) + "\n"


def _file_numbers_up(text: str, step: int) -> str:
    """A module with every file number (``.file``, ``.loc``, ``inlined_at``) moved up by ``step``."""
    if not step:
        return text
    return FILE_NUMBER.sub(lambda m: (m.group(1) or m.group(3)) + str(int(m.group(2) or m.group(4)) + step), text)


def _same(a: str, b: str) -> bool:
    return " ".join(_code(a).split()) == " ".join(_code(b).split())


def _first(headers, directive) -> str:
    return next((" ".join(_code(h.text).split()) for h in headers if _code(h.text).strip().startswith(directive)), "")


def _highest(headers, directive) -> str:
    found = [_code(h.text).split()[1] for h in headers if _code(h.text).strip().startswith(directive)]
    best = max(found, key=lambda v: tuple(int(x) for x in v.split(".")), default="")
    return f"{directive} {best}" if best else ""
