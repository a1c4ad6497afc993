"""Profile one launch the way Nsight Compute's source page does: counts per CUDA source line, the
worst lines flagged with what to try; as plain data, a fixed-width text table and an HTML table.

    rec = cudalab.profile(kernel, grid, block, (args...))
    rec.reports["per_line"]         # one dict per source line (see MetricsObserver.per_line, + "advice")
    rec.reports["per_instruction"]  # one dict per PTX instruction
    rec.reports["advice"]           # the worst lines, worst first, as sentences for a student
    rec.reports["profile"]          # a ProfileReport: prints as a table, renders as HTML in a notebook
"""
from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass, field

from .metrics import MetricsObserver
from .warps import WARP_SIZE

# (heading, how to read it off a per-line row); memory columns stay blank on lines without such accesses
COLUMNS = (
    ("warp inst", lambda r: f"{r['instructions']:,}"),
    ("thread inst", lambda r: f"{r['thread_instructions']:,}"),
    ("lanes", lambda r: f"{r['active_lanes']:.1f}"),
    ("shared wf", lambda r: f"{r['shared_wavefronts']:,}" if r["shared_instructions"] else ""),
    ("conflicts", lambda r: f"{r['bank_conflicts']:,}" if r["shared_instructions"] else ""),
    ("requests", lambda r: f"{r['global_requests']:,}" if r["global_requests"] else ""),
    ("sectors", lambda r: f"{r['sectors']:,}" if r["global_requests"] else ""),
    ("sect/req", lambda r: f"{r['sectors_per_request']:.1f}" if r["global_requests"] else ""),
)
LEGEND = ("warp inst: instructions executed (warp-level, smsp__inst_executed); thread inst: the same summed "
          f"over active threads; lanes: active lanes per warp instruction (of {WARP_SIZE}, lower = divergence "
          "or idle threads); shared wf: shared-memory wavefronts; conflicts: bank conflicts (wavefronts over "
          "the ideal); requests, sectors: global/local memory requests and 32-byte sectors (ideal for 4-byte "
          "words: 4 sectors per request). Instruction counts are PTX instructions (ncu counts SASS); memory "
          "counts match ncu's.")
GAP = 3                      # longer runs of lines that never ran are folded into "..."
_SHARED_2D = re.compile(r"__shared__\s+(?:[\w:]+\s+)+?(\w+)\s*\[([^\]]+)\]\s*\[([^\]]+)\]")


def profile(kernel, grid, block, args=(), shared: int = 0):
    """Launch ``kernel`` on the emulator counting what Nsight Compute would, per source line; returns
    the LaunchRecord with ``rec.metrics`` and ``rec.reports`` filled (see this module's docstring).
    Numpy arrays are copied in and back as in a plain launch."""
    from ..errors import UnsupportedError
    from ..runtime import device   # the launch goes through the runtime; analysis only observes it
    if device.current().kind != "emu":
        raise UnsupportedError("cudalab.profile counts what each warp did on the emulator; call "
                               "cudalab.use('emu') first (on a real GPU, run your program under Nsight "
                               "Compute: ncu --set full).")
    from ..runtime.module import specialized
    kernel = specialized(kernel, args)
    source = kernel.module.source
    obs = MetricsObserver(source=source)
    rec = kernel.launch(grid, block, tuple(args), shared=shared, observers=[obs])
    return fill_profile(rec, obs, source)


def fill_profile(rec, obs, source: str):
    """Put what ``obs`` (a MetricsObserver that watched ``rec``'s launch) counted into ``rec.reports``."""
    rec.metrics.update(obs.metrics)
    advice = obs.findings()
    per_line = obs.per_line()
    summaries = line_summaries(advice, source)
    for row in per_line:
        row["thread_instructions"] = round(row["active_lanes"] * row["instructions"])
        row["advice"] = summaries.get(row["line"], "")
    rec.reports["per_line"] = per_line
    rec.reports["per_instruction"] = obs.per_instruction()
    rec.reports["advice"] = advice
    rec.reports["profile"] = ProfileReport(rec.kernel, rec.grid, rec.block, rec.backend, source.splitlines(),
                                           per_line, advice, dict(rec.metrics))
    return rec


def line_summaries(advice: list[str], source: str) -> dict:
    """Source line -> one short sentence of what to try, from the findings that name that line."""
    out: dict = {}
    lines = source.splitlines()
    for text in advice:
        m = re.match(r"line (\d+): (.*)", text, re.S)
        if m:
            line = int(m.group(1))
            code = lines[line - 1] if line <= len(lines) else ""
            said = out.get(line, "")
            new = _summary(m.group(2), code, source)
            # one line often holds several accesses of one kind (an inlined curand_init's five state stores):
            # the sentence once, not once per instruction
            out[line] = said if new in said.split("; ") else "; ".join(filter(None, [said, new]))
    return out


def _summary(text: str, code: str, source: str) -> str:
    if m := re.match(r"(\d+)-way bank conflict", text):
        return f"{m.group(1)}-way bank conflict: {_padding(code, source)}"
    if m := re.match(r"uncoalesced (\w+) (\w+): ([\d.]+) sectors per request where ([\d.]+)", text):
        space, what, got, ideal = m.groups()
        fix = ("start each warp's range on a 128-byte boundary" if "misaligned" in text else
               "index local arrays with constants" if space == "local" else
               "make consecutive threads access consecutive addresses")
        return f"uncoalesced {space} {what}, {got} sectors per request (ideal {ideal}): {fix}"
    if m := re.match(r"divergent branch: ([\d,]+) of ([\d,]+) warps split", text):
        return f"divergent branch ({m.group(1)} of {m.group(2)} warps split): branch on whole warps"
    if m := re.match(r"warps ran it with ([\d.]+) active lanes", text):
        return f"only {m.group(1)} of {WARP_SIZE} lanes active on average"
    return text.split(". ")[0]


def _padding(code: str, source: str) -> str:
    """Padding advice naming the 2D shared array the line uses, e.g. ``tile[32][33]``."""
    for m in _SHARED_2D.finditer(source):
        name, rows, cols = (g.strip() for g in m.groups())
        if re.search(rf"\b{name}\s*\[", code):
            wider = str(int(cols) + 1) if cols.isdigit() else f"{cols} + 1"
            return f"pad the shared array to {wider} columns, {name}[{rows}][{wider}]"
    return "pad each row of the shared array by one element"


@dataclass
class ProfileReport:
    """One launch's per-line profile: plain data, a text table (``repr``) and an HTML table."""

    kernel: str
    grid: tuple
    block: tuple
    backend: str
    source: list                                   # the module's source lines
    per_line: list                                 # rows as in rec.reports["per_line"]
    advice: list = field(default_factory=list)     # sentences, worst first
    metrics: dict = field(default_factory=dict)    # Nsight Compute name -> total

    def listing(self):
        """(line number, source text, row or None) for the lines the kernel ran, in order, with runs
        of more than GAP lines that never ran as one (None, "...", None)."""
        rows = {r["line"]: r for r in self.per_line}
        ran = sorted(n for n in rows if n is not None and 1 <= n <= len(self.source))
        out, last = [], None
        for n in ran:
            if last is not None and n - last - 1 > GAP:
                out.append((None, "...", None))
            elif last is not None:
                out.extend((k, self.source[k - 1], None) for k in range(last + 1, n))
            out.append((n, self.source[n - 1], rows[n]))
            last = n
        for n, r in rows.items():
            if n not in ran:      # no line information, or a line of a header
                out.append((n, "(instructions without a source line here)", r))
        return out

    def flagged(self):
        """(line, short advice, [full sentences]) per line with advice, worst first; line None collects
        advice about instructions without a source line."""
        summaries = {r["line"]: r["advice"] for r in self.per_line}
        out: dict = {}
        for text in self.advice:
            m = re.match(r"line (\d+): (.*)", text, re.S)
            n = int(m.group(1)) if m else None
            texts = out.setdefault(n, [])
            if (m.group(2) if m else text) not in texts:
                texts.append(m.group(2) if m else text)
        return [(n, summaries.get(n, ""), texts) for n, texts in out.items()]

    def headline(self):
        m = self.metrics
        g = "x".join(map(str, self.grid))
        b = "x".join(map(str, self.block))
        shared = sum(v for k, v in m.items() if k.startswith("l1tex__data_pipe_lsu_wavefronts_mem_shared"))
        conflicts = sum(v for k, v in m.items() if k.startswith("l1tex__data_bank_conflicts"))
        requests = sum(v for k, v in m.items() if k.startswith("l1tex__t_requests"))
        sectors = sum(v for k, v in m.items() if k.startswith("l1tex__t_sectors"))
        parts = [f"{m.get('smsp__inst_executed.sum', 0):,} warp instructions",
                 f"{m.get('smsp__thread_inst_executed.sum', 0):,} thread instructions"]
        if shared:
            parts.append(f"{shared:,} shared wavefronts ({conflicts:,} bank conflicts)")
        if requests:
            parts.append(f"{requests:,} global/local requests ({sectors:,} sectors)")
        return f"{self.kernel} grid={g} block={b} on {self.backend}: " + ", ".join(parts)

    def text(self, source_width: int = 50) -> str:
        heads = ["", "line"] + [h for h, _ in COLUMNS] + ["source"]
        table = [heads]
        for n, code, row in self.listing():
            cells = [get(row) for _, get in COLUMNS] if row else [""] * len(COLUMNS)
            flag = "!" if row and row["advice"] else ""
            code = code.strip()
            if len(code) > source_width:
                code = code[:source_width - 3] + "..."
            table.append([flag, "" if n is None else str(n)] + cells + [code])
        widths = [max(len(r[i]) for r in table) for i in range(len(heads) - 1)]
        lines = [textwrap.fill(self.headline(), 100, subsequent_indent="  "), ""]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in table]
        if self.advice:
            lines += ["", "Worst lines, worst first:"]
            for n, summary, texts in self.flagged():
                lines.append(f"! line {n}: {summary}" if n is not None else "!")
                for text in texts:
                    lines += textwrap.wrap(text, 100, initial_indent="    ", subsequent_indent="    ")
        lines += [""] + textwrap.wrap(LEGEND, 100)
        return "\n".join(lines)

    __repr__ = text

    def _repr_html_(self):
        esc = html.escape
        cell = "style='text-align:right;padding:0 .6em'"
        heads = "".join(f"<th {cell}>{esc(h)}</th>" for h in ["line"] + [h for h, _ in COLUMNS])
        body = []
        for n, code, row in self.listing():
            cells = [get(row) for _, get in COLUMNS] if row else [""] * len(COLUMNS)
            advice = row["advice"] if row else ""
            style = " style='background:#fde2dd'" if advice else ""
            body.append(f"<tr{style}>" + "".join(f"<td {cell}>{esc(c)}</td>" for c in ["" if n is None else str(n)] + cells)
                        + f"<td style='text-align:left;white-space:pre;font-family:monospace'>{esc(code)}</td>"
                        + "<td style='text-align:left;color:#b3261e;min-width:24em'>"
                        + "<br>".join(map(esc, advice.split("; "))) + "</td></tr>")
        notes = "".join(f"<li>{esc(t)}</li>" for t in self.advice)
        return (f"<div class='cudalab-profile'><p><b>{esc(self.headline())}</b></p>"
                f"<table><tr>{heads}<th style='text-align:left'>source</th><th style='text-align:left'>advice</th></tr>"
                + "".join(body) + "</table>"
                + (f"<p>Worst lines, worst first:</p><ul>{notes}</ul>" if notes else "")
                + f"<p style='font-size:smaller'>{esc(LEGEND)}</p></div>")
