"""Write examples/expected/NAME.out: each whole program's stdout on the emulator, timing lines dropped.

Run after changing an example:  python tools/programs_expected.py [examples/foo.cu ...]
tests/test_programs.py compares against these files, and tools/programs_gpu.py diffs them with
what the same programs print on a real GPU.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudalab.programs import has_main, run_program  # noqa: E402
from cudalab.programs.compare import comparable      # noqa: E402


def main(paths) -> int:
    paths = [Path(p) for p in paths] or sorted((ROOT / "examples").glob("*.cu"))
    out_dir = ROOT / "examples" / "expected"
    out_dir.mkdir(exist_ok=True)
    bad = 0
    for p in paths:
        if not has_main(p.read_text()):
            continue
        r = run_program(p, timeout=600)
        (out_dir / f"{p.stem}.out").write_text(comparable(r.stdout, keep_device=True))
        ok = r.returncode == 0 and "Result = PASS" in r.stdout
        bad += not ok
        print(f"{p.name}: exit {r.returncode}, {'PASS' if ok else 'FAIL'}, {len(r.launches)} launches")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
