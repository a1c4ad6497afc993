"""Bank conflicts: one warp's shared-memory access, 32 lanes against 32 banks, wavefront by wavefront."""
from __future__ import annotations

import numpy as np

from ..analysis.shared_banks import BANK_BYTES, BANKS, bank_map, shared_wavefronts
from .observe import KINDS
from .svg import Svg, category, esc, legend, table_html


def padded_addresses(trace, addresses, row_words=32):
    """The same accesses if each row of their shared array were one word longer (``[32][33]``
    instead of ``[32][32]``). Rows are the array's last dimension, or ``row_words`` words for 1-D."""
    addresses = np.asarray(addresses, np.int64)
    out = addresses.copy()
    for v in trace.shared.values():
        inside = (addresses >= v.offset) & (addresses < v.offset + v.nbytes)
        row = v.shape[-1] * v.itemsize if len(v.shape) > 1 else row_words * BANK_BYTES
        off = addresses[inside] - v.offset
        out[inside] = v.offset + off // row * (row + BANK_BYTES) + off % row
    return out


def _launch_totals(trace, inst, padded, row_words):
    """Wavefronts and the ideal over every recorded execution of ``inst``."""
    rows = np.flatnonzero(trace.events["inst"][trace.access["event"]] == inst)
    total = ideal = 0
    for e in np.unique(trace.access["event"][rows]):
        r = rows[trace.access["event"][rows] == e]
        addr = trace.access["address"][r]
        if padded:
            addr = padded_addresses(trace, addr, row_words)
        w = shared_wavefronts(trace.lanes(trace.access["thread"][r]), addr, int(trace.events["size"][e]),
                              load=KINDS[trace.events["kind"][e]] == "ld")
        total += int(w.wavefronts.sum())
        ideal += int(w.ideal.sum())
    return total, ideal


def banks_model(trace, line=None, inst=None, block=0, warp=0, occurrence=0, padded=False, row_words=32) -> dict:
    """Plain data for the bank picture of one warp's execution of one shared-memory instruction."""
    inst = trace.pick_instruction("shared", inst, line)
    lanes, addresses, size, occurrences = trace.warp_access(inst, block, warp, occurrence)
    if padded:
        addresses = padded_addresses(trace, addresses, row_words)
    bm = bank_map(lanes, addresses, size, 0)
    ideal = len(np.unique(bm.phase))
    e = int(np.flatnonzero(trace.events["inst"] == inst)[0])
    names = sorted({trace.shared_element(a)[0] or "?" for a in addresses})
    total, total_ideal = _launch_totals(trace, inst, padded, row_words)
    ways = bm.wavefronts / max(ideal, 1)
    return dict(inst=inst, line=int(trace.events["line"][e]), text=trace.events["text"][e],
                source=trace.source_line(int(trace.events["line"][e])), arrays=names, size=size,
                block=int(trace.blocks[block]), warp=warp, occurrence=min(occurrence, occurrences - 1),
                occurrences=occurrences, padded=padded, lane=bm.lane, address=bm.address, bank=bm.bank,
                word=bm.word, wavefront=bm.wavefront, wavefronts=bm.wavefronts, ideal=ideal, ways=ways,
                launch_wavefronts=total, launch_ideal=total_ideal, note=trace.note,
                instructions=trace.instructions("shared"))


def verdict(m) -> str:
    """The picture's headline, e.g. '32-way bank conflict: 32 wavefronts where 1 would do'."""
    ways = m["ways"]
    n = f"{ways:.0f}" if float(ways).is_integer() else f"{ways:.1f}"
    if m["wavefronts"] <= m["ideal"]:
        return f"no bank conflict: {m['wavefronts']} wavefront{'s' * (m['wavefronts'] > 1)} for the warp"
    return f"{n}-way bank conflict: {m['wavefronts']} wavefronts where {m['ideal']} would do"


def render_svg(m) -> str:
    cw, left = 24, 70
    top, bottom = 66, 250
    svg = Svg(left + BANKS * cw + 30, bottom + 96)
    what = f"line {m['line']}: {m['source']}" if m["source"] else m["text"]
    svg.text(10, 16, what[:110], 12, bold=True)
    svg.text(10, 34, f"block {m['block']}, warp {m['warp']} (execution {m['occurrence'] + 1} of "
             f"{m['occurrences']}), {m['size']}-byte {', '.join(m['arrays'])} access"
             + ("  [what if: rows padded by one word]" if m["padded"] else ""), 11)
    svg.text(10, 52, verdict(m), 13, bold=True, fill="#a50f15" if m["wavefronts"] > m["ideal"] else "#006d2c")
    svg.text(left - 8, top + 15, "lane", 10, "end")
    svg.text(left - 8, bottom + 15, "bank", 10, "end")
    for i in range(32):
        svg.rect(left + i * cw, top, cw - 2, 20, "#deebf7", "#6baed6", title=f"lane {i}")
        svg.text(left + i * cw + cw / 2 - 1, top + 14, str(i), 9, "middle")
    load = np.zeros(BANKS, int)
    for b in np.unique(m["bank"]):
        load[b] = len(np.unique(m["word"][m["bank"] == b]))
    for b in range(BANKS):
        hot = load[b] > 1
        svg.rect(left + b * cw, bottom, cw - 2, 20, "#fcbba1" if hot else "#f0f0f0", "#a50f15" if hot else "#999",
                 title=f"bank {b}: {load[b]} distinct word{'s' * int(load[b] != 1)}")
        svg.text(left + b * cw + cw / 2 - 1, bottom + 14, str(b), 9, "middle")
        if load[b]:
            svg.text(left + b * cw + cw / 2 - 1, bottom + 34, f"{load[b]}", 9, "middle", "#a50f15" if hot else "#555")
    svg.text(left - 8, bottom + 34, "words", 9, "end", "#555")
    for j, lane in enumerate(m["lane"]):
        for k in range(m["bank"].shape[1]):
            wf = int(m["wavefront"][j, k])
            svg.line(left + lane * cw + cw / 2 - 1, top + 20, left + m["bank"][j, k] * cw + cw / 2 - 1, bottom,
                     category(wf), 1.6, 0.85,
                     title=f"lane {lane}: byte {m['address'][j]} -> word {m['word'][j, k]}, bank {m['bank'][j, k]}, "
                           f"wavefront {wf + 1}")
    items = [(category(w), f"wavefront {w + 1}") for w in range(min(m["wavefronts"], 8))]
    if m["wavefronts"] > 8:
        items.append(("#ffffff", f"... {m['wavefronts']} in all"))
    legend(svg, left, bottom + 58, items)
    svg.text(10, bottom + 82, f"All recorded warps at this instruction: {m['launch_wavefronts']:,} wavefronts, ideal "
             f"{m['launch_ideal']:,}." + (f" {m['note']}" if m["note"] else ""), 10, fill="#555")
    return str(svg)


def details_html(m) -> str:
    rows = [("instruction", f"{m['inst']}: {m['text']}"), ("wavefronts (this warp)", m["wavefronts"]),
            ("ideal", m["ideal"]), ("bank conflicts", m["wavefronts"] - m["ideal"])]
    tip = ("" if m["wavefronts"] <= m["ideal"] else
           "<div>Lanes that ask one bank for <i>different</i> words are served one after another. "
           "Padding each row by one word (e.g. <code>[32][33]</code>) moves a column's words into different "
           "banks; tick <b>pad rows</b> to see it.</div>")
    return table_html(rows) + tip + f"<div><code>{esc(m['source'])}</code></div>"
