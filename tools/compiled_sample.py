"""Pick tests/test_compiled.py's CORPUS_SAMPLE: corpus cases that together compile every form.

    PYTHONPATH=. python tools/compiled_sample.py      # a few minutes: plans every corpus kernel

Plans the compiled tier's groups for every kernel of tests/kernels (LLVM IR only, nothing is
compiled), collects the (opcode, modifiers) of every instruction a group holds, and prints a
greedy set cover: the fewest cases found that between them hold every such form.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from llvmlite import ir  # noqa: E402

import cudalab  # noqa: E402
from cudalab.emulator import compiled  # noqa: E402
from cudalab.emulator.engine import Program  # noqa: E402
from cudalab.emulator.memory import DeviceMemory  # noqa: E402
from kernels import cases  # noqa: E402


def forms(case):
    mod = cudalab.compile(case["src"], options=list(case.get("options") or ())).ptx_module
    program = Program(mod, DeviceMemory())
    out = set()
    for name, f in mod.functions.items():
        if f.is_entry:
            df = program.function(name)
            for g in compiled.plan(df, mod, ir.Module()):
                out.update(".".join((df.code[k][2].opcode,) + df.code[k][2].mods) for k in range(g.start, g.end))
    return out


def main():
    cover = {}
    for case in cases():
        try:
            cover[case["name"]] = forms(case)
        except Exception as e:        # noqa: BLE001  (a case the emulator rejects has nothing to cover)
            print(f"skipped {case['name']}: {type(e).__name__}", file=sys.stderr)
    left = set().union(*cover.values())
    total, chosen = len(left), []
    while left:
        best = max(cover, key=lambda n: len(left & cover[n]))
        chosen.append(best)
        left -= cover[best]
    print(f"{total} forms, {len(chosen)} cases:")
    print(sorted(chosen))


if __name__ == "__main__":
    main()
