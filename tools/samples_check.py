"""Run NVIDIA's cuda-samples through ``cudalab run`` as their own CMake build would, and write docs/samples.md.

Not part of CI: the samples are NVIDIA's and stay outside this repository. Give a local checkout::

    python tools/samples_check.py --samples ~/cuda-samples                  # the emulator (2 at a time)
    CUDALAB_DEVICE=gpu python tools/samples_check.py --samples ... --device gpu --jobs 12 \\
        --json gpu.json                                                      # a real GPU
    python tools/samples_check.py --samples ... --figure "table round 20" --json emu.json
    python tools/samples_check.py --table docs/samples_emu.json emu.json --keep docs/samples_emu.json
                                                                             # docs/samples.md, the new rows in

Each sample's CMakeLists.txt is read for what CMake would give nvcc: its sources, include folders
(``../../../Common``), compile options (``--extended-lambda``), the language standard,
``CUDA_SEPARABLE_COMPILATION`` (``-rdc=true``), ``CMAKE_CUDA_ARCHITECTURES`` (one ``-gencode`` each)
and the libraries it links. The program runs in its own folder (where its data files are, as the
samples' build copies them next to the executable) with the arguments the checkout's
test_args.json gives it. A sample passes as the samples' own test runner decides: exit code 0,
and no line saying it failed.

Samples that need what cudalab does not emulate are left out, with the reason: graphics
(OpenGL, EGL, Vulkan), a second GPU, IPC, MPI, OpenMP, NvSci, or a CUDA library cudalab does not
emulate (cuSOLVER, NPP, nvJPEG, nvJitLink, ...). Those linking cuBLAS, cuFFT, cuRAND or cuSPARSE
(computed by cudalab), the driver API (whose calls the shim answers over the runtime) or NVRTC
(NVIDIA's own, from its wheel) are run, and a call cudalab lacks fails with its name. Thrust is
headers only, so it is not a reason. The steps of a sample's add_custom_command run in its folder
before the build: the nvcc line that makes the module file a driver-API sample loads (as
``cudalab nvcc``, which keeps the file's PTX for the emulator) and the copies of kernel sources and
headers an NVRTC sample compiles at run time.
``--folders 1_Utilities,4_CUDA_Libraries,5_Domain_Specific`` runs the folders students reach next.

``--table`` writes docs/samples.md as a reader uses it: the summary line, one short row a sample (the
emulator's result and CPU seconds, whose run the figures are, the GPU's result, one line on why a
sample does not pass) and the samples left out, one word each. A sample stopped at the limit with
cudalab's estimate of a time beyond it is *GPU-sized* (``gpu_sized``: issue 14's rule), not a failure.
The rounds' notes and measurements are in docs/samples_history.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("0_Introduction", "2_Concepts_and_Techniques", "3_CUDA_Features", "6_Performance")
# the folders students reach next (--folders): deviceQuery and friends, the math libraries, domain samples
MORE_FOLDERS = ("1_Utilities", "4_CUDA_Libraries", "5_Domain_Specific")
TIMEOUT = 120
# what the samples print when they fail (their exit code usually says it too)
FAILURE = re.compile(r"\bFAIL(ED|URE)?\b|[Tt]est failed|Result\s*=\s*FAIL|CUDA error at|"
                     r"Segmentation fault|core dumped|^terminate called", re.M)
LIBRARIES = {"cublas": "cuBLAS", "cublasLt": "cuBLAS", "cufft": "cuFFT", "curand": "cuRAND host API",
             "cusparse": "cuSPARSE", "cusolver": "cuSOLVER", "nvjpeg": "nvJPEG", "nvjitlink": "nvJitLink",
             "nppc": "NPP", "nvrtc": "NVRTC"}
# the libraries whose host API cudalab's shim answers (programs/shim/cublas.c, curand.c, cufft.c, cusparse.c,
# driver.c): a sample linking only these (and the runtime) is run
SERVED = {"cudart", "cudart_static", "cuda_driver", "cublas", "cublasLt", "cufft", "curand", "cusparse", "nvrtc"}


@dataclass
class Sample:
    """What CMake would build for one sample, or why it is left out."""

    name: str
    folder: str
    path: Path
    sources: list = field(default_factory=list)
    options: list = field(default_factory=list)
    args: list = field(default_factory=list)             # one list of arguments per run
    left_out: str = ""
    steps: list = field(default_factory=list)            # add_custom_command's: ("nvcc"|"copy"|"copy_directory", words)


# ---------------------------------------------------------------------------------------- CMake
def _commands(text: str):
    """(name, arguments text) for each CMake command in order, comments dropped."""
    text = re.sub(r"(?m)#.*$", "", text)
    pos = 0
    while m := re.compile(r"(\w+)\s*\(").search(text, pos):
        depth, i = 1, m.end()
        while depth and i < len(text):
            if text[i] == '"':
                i = text.find('"', i + 1) if text.find('"', i + 1) >= 0 else len(text)
            else:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield m.group(1).lower(), text[m.end():i - 1]
        pos = i


def _words(body: str) -> list:
    try:
        return shlex.split(body.replace("\n", " "), posix=True)
    except ValueError:
        return body.split()


_SYSTEM = {"CMAKE_SYSTEM_NAME": "Linux", "CMAKE_SYSTEM_PROCESSOR": "x86_64", "CMAKE_GENERATOR": "Unix Makefiles",
           "CMAKE_CXX_COMPILER_ID": "GNU", "WIN32": "", "UNIX": "1", "APPLE": "", "CMAKE_CROSSCOMPILING": "",
           "ENABLE_CUDA_DEBUG": "", "CUDAToolkit_INCLUDE_DIRS": "/usr/local/cuda/include"}


def _value(word: str, env: dict) -> str:
    word = re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word)
    return env.get(word, word)


def _condition(words: list, env: dict) -> bool:
    """Evaluate an if() condition the way CMake would on Linux/x86_64 with every package found."""
    pos = 0

    def atom():
        nonlocal pos
        w = words[pos]
        pos += 1
        if w == "NOT":
            return not atom()
        if w == "(":
            v = expr()
            pos += 1
            return v
        left = _value(w, env)
        if pos < len(words) and words[pos] in ("STREQUAL", "EQUAL", "MATCHES", "VERSION_LESS", "VERSION_GREATER"):
            op, right = words[pos], _value(words[pos + 1], env)
            pos += 2
            if op == "STREQUAL":
                return left == right
            if op == "EQUAL":
                return str(left).strip() == str(right).strip()
            if op == "MATCHES":
                return bool(re.search(right, left))
            return False
        if re.fullmatch(r"\$\{\w+_FOUND\}|\w+_FOUND|\$\{\w+\}", w):
            name = re.sub(r"[${}]", "", w)
            return name.endswith("_FOUND") or bool(env.get(name))
        return left not in ("", "0", "OFF", "FALSE", "NO", "N", "IGNORE", "NOTFOUND") and not left.endswith("-NOTFOUND")

    def chain(op, operand):
        """``a OP b OP c`` (AND binds tighter than OR, as in CMake)."""
        nonlocal pos
        values = [operand()]
        while pos < len(words) and words[pos] == op:
            pos += 1
            values.append(operand())
        return all(values) if op == "AND" else any(values)

    def expr():
        return chain("OR", lambda: chain("AND", atom))

    return expr()


def _genex(word: str) -> str:
    """``$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>`` -> ``--extended-lambda``; other generator
    expressions (other languages, configurations) give nothing."""
    m = re.fullmatch(r"\$<\$<COMPILE_LANGUAGE:CUDA>:(.*)>", word)
    if m:
        return m.group(1)
    return "" if word.startswith("$<") else word


def read_sample(path: Path, folder: str, test_args: dict, archs: str = "") -> Sample:
    text = (path / "CMakeLists.txt").read_text()
    s = Sample(path.name, folder, path)
    env = dict(_SYSTEM, CMAKE_CURRENT_SOURCE_DIR=str(path), CMAKE_CUDA_ARCHITECTURES="75 80 86 87 89 90 100 110 120",
               CMAKE_CUDA_FLAGS="", CMAKE_CURRENT_BINARY_DIR=str(path), CMAKE_CUDA_COMPILER="@NVCC@",
               CMAKE_COMMAND="@CMAKE@")
    includes, options, libraries, packages = [], [], [], []
    defines, std, rdc, target = [], "", False, None
    stack = [True]                      # are we in a branch CMake takes?
    taken = [False]
    loop = None                         # (variable, items, [list(APPEND) bodies]) of a foreach being read
    for cmd, body in _commands(text):
        words = _words(body.replace("(", " ( ").replace(")", " ) ")) if cmd in ("if", "elseif") else _words(body)
        if cmd == "if":
            ok = stack[-1] and _condition(words, env)
            stack.append(ok)
            taken.append(ok)
            continue
        if cmd == "elseif":
            ok = stack[-2] and not taken[-1] and _condition(words, env)
            stack[-1] = ok
            taken[-1] = taken[-1] or ok
            continue
        if cmd == "else":
            stack[-1] = stack[-2] and not taken[-1]
            continue
        if cmd == "endif":
            stack.pop()
            taken.pop()
            continue
        if not stack[-1]:
            continue
        if cmd == "return":
            break
        if cmd == "foreach" and words:          # foreach(arch ${CMAKE_CUDA_ARCHITECTURES}): list(APPEND ...) inside
            loop = (words[0], " ".join(_value(w, env) for w in words[1:]).split(), [])
            continue
        if cmd == "endforeach" and loop:
            var, items, appends = loop
            for item in items:
                env[var] = item
                for name, values in appends:
                    env[name] = " ".join([*env.get(name, "").split(), *(_value(v, env) for v in values)])
            loop = None
            continue
        if cmd == "list" and words[:1] == ["APPEND"] and len(words) >= 3:
            if loop:
                loop[2].append((words[1], words[2:]))
            else:
                env[words[1]] = " ".join([*env.get(words[1], "").split(), *(_value(v, env) for v in words[2:])])
            continue
        if cmd == "list" and words[:1] == ["GET"] and len(words) == 4:
            items = _value(words[1], env).split()
            env[words[3]] = items[int(words[2])] if int(words[2]) < len(items) else ""
            continue
        if cmd == "add_custom_command":
            s.steps += _custom_steps(words, env, path)
            continue
        if cmd == "set" and words:
            env[words[0]] = " ".join(_value(w, env) for w in words[1:] if w not in ("CACHE", "STRING", "PARENT_SCOPE"))
            if words[0] == "CMAKE_CUDA_ARCHITECTURES" and archs:      # --archs: module files built for those too
                env[words[0]] = archs
        elif cmd == "string" and words[:1] == ["REPLACE"] and len(words) >= 5:
            env[words[3]] = " ".join(words[4:]).replace(words[1], words[2])
        elif cmd == "string" and words[:1] == ["FIND"] and len(words) >= 4:
            env[words[3]] = str(_value(words[1], env).find(words[2]))
        elif cmd == "find_library" and len(words) >= 3 and words[1] in ("NAME", "NAMES"):
            env[words[0]] = f"CUDA::{words[2]}"         # (jitLto's nvJitLink: a library like CMake's CUDA:: ones)
        elif cmd == "find_package" and words:
            packages.append(words[0])
        elif cmd == "include_directories":
            includes += [_value(w, env) for w in words if w not in ("BEFORE", "AFTER", "SYSTEM")]
        elif cmd == "target_include_directories":
            includes += [_value(w, env) for w in words[1:] if w not in ("PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM")]
        elif cmd == "add_executable" and target is None and words:
            target = words[0]
            s.sources = [_value(w, env) for w in words[1:]]
        elif cmd == "target_compile_options":
            options += [o for o in (_genex(_value(w, env)) for w in words[1:]) if o and o not in ("PRIVATE", "PUBLIC")]
        elif cmd == "target_compile_definitions":
            defines += [f"-D{_genex(w)}" for w in words[1:] if w not in ("PRIVATE", "PUBLIC", "INTERFACE") and _genex(w)]
        elif cmd == "target_compile_features":
            std = next((f"-std=c++{m.group(1)}" for w in words if (m := re.fullmatch(r"cuda_std_(\d+)", w))), std)
        elif cmd == "set_target_properties" and "CUDA_SEPARABLE_COMPILATION" in words:
            rdc = words[words.index("CUDA_SEPARABLE_COMPILATION") + 1].upper() in ("ON", "TRUE", "1")
        elif cmd == "target_link_libraries":
            libraries += [_value(w, env) for w in words[1:] if w not in ("PRIVATE", "PUBLIC", "INTERFACE")]
    s.name = target or path.name
    s.left_out = _left_out(s, text, packages, libraries, test_args.get(s.name, {}))
    archs = (archs or env["CMAKE_CUDA_ARCHITECTURES"]).split()
    flags = env["CMAKE_CUDA_FLAGS"].split()
    s.options = [*flags, *[f"--generate-code=arch=compute_{a},code=[compute_{a},sm_{a}]" for a in archs],
                 *[f"-I{_relative(i, path)}" for i in dict.fromkeys(includes) if i and not i.startswith("/usr/local/cuda")
                   and "$" not in i],
                 *defines, *([std] if std else []), *(["-rdc=true"] if rdc else []), *options,
                 *[f"-l{lib}" for target in libraries for lib in _libraries(target)],
                 "-o", s.name]
    config = test_args.get(s.name, {})
    s.args = ([run.get("args", []) for run in config["runs"] if not run.get("skip")] if "runs" in config
              else [config.get("args", [])])
    return s


def _custom_steps(words: list, env: dict, path: Path) -> list:
    """What an add_custom_command runs, as steps a sample's folder can repeat: an nvcc command that builds
    a module file the program loads (``-fatbin``: run as ``cudalab nvcc``, which keeps its PTX for the
    emulator) and ``cmake -E copy_if_different``/``copy_directory`` of the kernel sources and headers
    NVRTC compiles at run time. The build folder is the sample's own (it runs there), so paths in it
    become relative; the toolkit's include folder is the one cudalab builds with."""
    steps, command = [], []
    for w in [*words, "COMMAND"]:
        if w in ("COMMAND", "OUTPUT", "DEPENDS", "COMMENT", "TARGET", "POST_BUILD", "PRE_BUILD", "WORKING_DIRECTORY"):
            if command:
                steps.append(command)
            command = [] if w == "COMMAND" else None
            continue
        if command is not None:
            command += [v.replace(str(path) + "/", "").replace(str(path), ".") for v in _value(w, env).split()]
    found = []
    for c in steps:
        if c[:1] == ["@NVCC@"]:
            found.append(("nvcc", c[1:]))
        elif c[:3] in (["@CMAKE@", "-E", "copy_if_different"], ["@CMAKE@", "-E", "copy"]):
            found.append(("copy", c[3:]))
        elif c[:3] == ["@CMAKE@", "-E", "copy_directory"]:
            found.append(("copy_directory", c[3:]))
    return found


def do_steps(s: Sample, env: dict) -> str:
    """Run a sample's custom build steps in its folder; "" or the first error."""
    toolkit = ""
    for kind, words in s.steps:
        if any(w.startswith(_SYSTEM["CUDAToolkit_INCLUDE_DIRS"]) for w in words) and not toolkit:
            toolkit = subprocess.run([sys.executable, "-c", "from cudalab.programs.build import cuda_home; "
                                      "print(cuda_home() / 'include')"], env=env, capture_output=True,
                                     text=True).stdout.strip()
        words = [w.replace(_SYSTEM["CUDAToolkit_INCLUDE_DIRS"], toolkit) if toolkit else w for w in words]
        if kind == "nvcc":
            r = subprocess.run([sys.executable, "-m", "cudalab.cli", "nvcc", *words], cwd=s.path, env=env,
                               capture_output=True, text=True)
            if r.returncode:
                return "build: " + first_error(r.stderr + r.stdout)
        elif kind == "copy":
            for src in words[:-1]:
                dest = s.path / words[-1]
                target = dest / Path(src).name if dest.is_dir() else dest
                if (s.path / src).resolve() != target.resolve():
                    shutil.copy(s.path / src, target)
        elif (s.path / words[0]).resolve() != (s.path / words[1]).resolve():
            # (the build folder is the sample's own, so CMake's copy of its data/ folder into the build
            # folder is a copy onto itself: nothing to do; NV12toBGRandResize)
            shutil.copytree(s.path / words[0], s.path / words[1], dirs_exist_ok=True)
    return ""


def _libraries(target: str) -> list:
    """The libraries nvcc links for a target_link_libraries word: ``CUDA::cublas`` -> cublas,
    ``CUDA::cuda_driver`` -> cuda, ``CUDA::cufft_static`` -> cufft_static and the culibos every static
    CUDA library needs (cuFFT's callbacks need the static one: simpleCUFFT_callback, linked to the
    shared one, answered CUFFT_NOT_IMPLEMENTED on an H200); none for the runtime, which nvcc links
    itself, and for CMake's own targets."""
    name = target.removeprefix("CUDA::")
    if name.removesuffix("_static") in ("cudart", "") or not re.fullmatch(r"[a-z]\w*", name):
        return []
    if name.endswith("_static"):
        return [name, "culibos"]
    return ["cuda" if name == "cuda_driver" else name]


def _relative(folder: str, base: Path) -> str:
    return os.path.relpath(folder, base) if os.path.isabs(folder) else folder


def _left_out(s: Sample, text: str, packages, libraries, config) -> str:
    """Why cudalab leaves the sample out, or "" (see the module docstring)."""
    sources = " ".join(s.sources)
    code = " ".join((s.path / f).read_text(errors="replace") for f in s.sources if (s.path / f).exists())
    graphics = {"OpenGL", "GLUT", "Vulkan", "EGL", "GLFW", "glfw3", "X11"} & set(packages)
    if graphics or re.search(r"#include\s*[<\"](GL/|GLFW/|vulkan/|EGL/|cudaGL|cuda_gl_interop|cudaEGL)", code):
        return f"graphics ({', '.join(sorted(graphics)) or 'OpenGL/EGL interop'})"
    if config.get("min_gpus", 1) > 1:
        return f"needs {config['min_gpus']} GPUs"
    if "helper_multiprocess" in sources or "IPC" in s.name or "cudaIpc" in code:
        return "IPC (several processes)"
    if "MPI" in packages or "mpi.h" in code:
        return "MPI"
    if "OpenMP" in packages or "omp.h" in code:
        return "OpenMP"
    if "NVSCI" in packages or re.search(r"#include\s*[<\"]nvsci", code):
        return "NvSci (NVIDIA's automotive buffer and sync interop)"
    names = {re.sub(r"_static$", "", l.split("::")[1]) for l in libraries if l.startswith("CUDA::")}
    libs = sorted({"NPP" if n.startswith("npp") else LIBRARIES.get(n, LIBRARIES.get(n.lower(), n))
                   for n in names - SERVED})
    if libs:
        return f"a CUDA library cudalab does not emulate ({', '.join(libs)})"
    if config.get("skip"):
        return "marked skip in the checkout's test_args.json"
    if not s.sources:
        return "no executable for Linux in its CMakeLists.txt"
    return ""


def samples(root: Path, folders=FOLDERS, archs: str = "") -> list:
    test_args = json.loads((root / "test_args.json").read_text()) if (root / "test_args.json").exists() else {}
    found = []
    for folder in folders:
        for path in sorted((root / "Samples" / folder).iterdir()):
            if (path / "CMakeLists.txt").exists():
                found.append(read_sample(path, folder, test_args, archs))
    return found


_NOT_NEEDED = shutil.ignore_patterns("doc", "*.pdf", "*.doc", "*.docx", "*.yuv", "lib", "bin")


def stage(chosen: list, root: Path, work: Path) -> None:
    """Copy Common, test_args.json and the samples to run under ``work`` (documents and prebuilt
    Windows libraries left behind), as CMake copies each sample's data next to its build: samples
    write files where they run, and the checkout stays as it was."""
    if work.resolve() == root.resolve():
        return
    shutil.copytree(root / "Common", work / "Common", ignore=_NOT_NEEDED, dirs_exist_ok=True)
    if (root / "test_args.json").exists():
        shutil.copy(root / "test_args.json", work / "test_args.json")
    for s in chosen:
        if not s.left_out:
            dest = work / "Samples" / s.folder / s.path.name
            shutil.copytree(s.path, dest, ignore=_NOT_NEEDED, dirs_exist_ok=True)
            s.path = dest


# ---------------------------------------------------------------------------------------- running
@dataclass
class Result:
    name: str
    folder: str
    status: str                 # pass, fail, timeout, left out
    detail: str = ""            # the first error line, or why it was left out
    seconds: float = 0.0        # running, wall clock (the build is timed apart)
    build_seconds: float = 0.0
    command: str = ""
    cpu_seconds: float = 0.0    # running, CPU time of the emulator and the program
    limit: float = 0.0          # the emulator's CPU-time limit of the run (--timeout)
    figure: str = ""            # whose run: round and date (--figure)


def first_error(text: str) -> str:
    """The line that best says why a sample failed: a failure line, else one naming an error, else the last."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    found = (next((l for l in lines if FAILURE.search(l)), None)
             or next((l for l in lines if re.search(r"error|Error|ERROR|not implement|does not", l)), None))
    return (found or (lines[-1] if lines else "(no output)"))[:300]


def failed_line(text: str) -> str | None:
    for line in text.splitlines():
        if FAILURE.search(line.strip()):
            return line.strip()
    return None


def run_sample(s: Sample, device: str, timeout: float, logs: Path | None = None) -> Result:
    # the emulator's kernels get the program's time (--timeout) instead of its 10 s watchdog, the limit
    # that counts being the CPU time below; a GPU has no watchdog either
    more_time = ["--timeout", f"{timeout * WALL_PER_CPU:g}"] if device == "emu" else []
    command = [sys.executable, "-m", "cudalab.cli", "run", "--device", device, *more_time, *s.options, *s.sources]
    shown = "cudalab run " + " ".join(shlex.quote(w) for w in [*more_time, *s.options, *s.sources])
    shown = "".join(f"cudalab nvcc {' '.join(map(shlex.quote, words))} && " for kind, words in s.steps
                    if kind == "nvcc") + shown
    if s.left_out:
        return Result(s.name, s.folder, "left out", s.left_out, command=shown)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    build_seconds = 0.0
    if s.steps:                                  # the module files and headers its CMake build makes beside it
        t0 = time.perf_counter()
        failed = do_steps(s, dict(env, CUDALAB_DEVICE=device))
        build_seconds = time.perf_counter() - t0
        if failed:
            return Result(s.name, s.folder, "fail", failed, 0.0, build_seconds, shown)
    if device == "emu":                          # build first, so that the time limit is the program's
        t0 = time.perf_counter()
        b = subprocess.run([sys.executable, "-c", _BUILD, *s.options, *s.sources], cwd=s.path, env=env,
                           capture_output=True, text=True, timeout=1800)
        build_seconds += time.perf_counter() - t0
        if b.returncode:
            return Result(s.name, s.folder, "fail", "build: " + first_error(b.stderr + b.stdout),
                          0.0, build_seconds, shown)
    total, cpu, statuses, details = 0.0, 0.0, [], []
    for args in s.args:
        t0 = time.perf_counter()
        # the emulator's limit is CPU time (on a shared machine wall time says little); a GPU run
        # builds with nvcc first, so it gets more
        code, out, used = run_limited([*command, "--", *args], s.path, env, timeout if device == "emu" else None,
                                      timeout * WALL_PER_CPU if device == "emu" else timeout + 600)
        total += time.perf_counter() - t0
        cpu += used
        if logs is not None:
            with open(logs / f"{s.name}.txt", "a") as f:
                f.write(f"$ {shown} -- {' '.join(args)}\n(exit code {code}, {used:.1f} s CPU)\n{out}\n")
        if code in (-signal.SIGXCPU, -signal.SIGKILL) or STOPPED.search(out):
            statuses.append("timeout")
            wall = code == -signal.SIGKILL and device == "emu" and used < timeout
            details.append(explanation(out) or (f"stopped by the wall-clock limit of {timeout * WALL_PER_CPU:g} s at "
                                                f"{used:.1f} s of CPU" if wall else f"still running after {timeout:g} s" +
                                                (" of CPU time" if device == "emu" else "")))
            break
        bad = failed_line(out)
        if code == 0 and bad is None:
            statuses.append("pass")
        else:
            statuses.append("fail")
            why = explanation(out)
            details.append(f"exit code {code}: {bad or first_error(out)}" +
                           (f" ({why})" if why and why not in (bad or "") else ""))
            break
    status = next((st for st in ("timeout", "fail") if st in statuses), "pass")
    return Result(s.name, s.folder, status, "; ".join(details), round(total, 1), round(build_seconds, 1), shown,
                  round(cpu, 1))


def explanation(out: str) -> str:
    """cudalab's own first word on what stopped the program: its first sentence, the emulator's
    estimate of the time a kernel stopped by the watchdog needed and, for a program stopped at its
    time limit, how many launches it had run, at what rate, and what the run of launches it was in
    still needed (``cudalab.programs.stopping``)."""
    out = short_names(out)
    # (its first message may follow the program's last words on their line: a progress line without \n)
    # (a build's "cudalab: note: ..." before the program's output is advice, not what stopped it)
    why = next((m.group(1) for m in re.finditer(r"(?<![\w-])cudalab: (?!note: )(.*)", out)), "")
    first = re.match(r".*?\.(\s|$)", why)
    estimate = re.search(r"(about|between) [\d.,]+ \w+( and [\d.,]+ \w+)? on the emulator", why)
    launches = re.search(r"It had run [\d,]+ kernel launch(es)?( before it)?, [\d.]+ s of the emulator's CPU time in all"
                         r"( \([\d.,]+ a second\))?", out)
    rest = re.search(r"runs of (\d+) iterations of .*?, each run the same launches .*?; the run it was in had finished "
                     r"(\d+) of them: the rest of that run alone needs (about [\d.]+ s)", out)
    return " ".join(x for x in ((first.group(0) if first else why[:200]).strip(),
                                f"({'that launch' if 'ran out while kernel' in why else 'it'} needs "
                                f"{estimate.group(0)})" if estimate else "",
                                f"{launches.group(0)}." if launches else "",
                                f"Its launches come in runs of {rest.group(1)}; the last had done {rest.group(2)}, the "
                                f"rest of it needs {rest.group(3)}." if rest else "") if x)


def short_names(text: str) -> str:
    """Kernel names as a table can show them: ``cub::...::DeviceRadixSortOnesweepKernel<...>``
    (Thrust's and CUB's run to a thousand characters) -> ``DeviceRadixSortOnesweepKernel<...>``."""
    while True:
        shorter = re.sub(r"<[^<>\n]*>", "\x00", text)
        if shorter == text:
            break
        text = shorter
    return re.sub(r"\b(?:\w+::)+(?=\w)", "", text.replace("\x00", "<...>"))


# cudalab's own account of a program stopped at its time limit (its CPU-time limit's soft limit: run_limited)
STOPPED = re.compile(r"^cudalab: the program (used up its CPU-time limit|ran longer than)", re.M)


WALL_PER_CPU = 6          # wall-clock safety net: this many times the CPU limit (a loaded 2-core machine)
HEAD_START = 10           # CPU seconds between the soft limit (cudalab stops the program and says why) and the kill


def run_limited(command, cwd, env, cpu_limit, wall_limit):
    """Run ``command`` with at most ``cpu_limit`` seconds of CPU time (None: no limit) and
    ``wall_limit`` seconds of wall time; (exit code, stdout and stderr, CPU seconds it and the
    children it waited for used). Over a limit the code is -SIGXCPU or -SIGKILL. The CPU limit is
    ``ulimit -t``'s soft limit, at which cudalab stops the program itself and says how far it got;
    the hard limit, ``HEAD_START`` seconds later, ends a process that did not stop."""
    if cpu_limit is not None:           # ulimit in the child's shell: no preexec_fn from threads
        soft = max(1, round(cpu_limit))
        command = ["bash", "-c", f'ulimit -S -t {soft}; ulimit -H -t {soft + HEAD_START}; exec "$@"', "limited",
                   *command]
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + wall_limit
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.2)
        p.returncode = os.waitstatus_to_exitcode(status)
        try:
            os.killpg(p.pid, signal.SIGKILL)    # the program, if the emulator went first
        except ProcessLookupError:
            pass
        return p.returncode, _head_and_tail(out), usage.ru_utime + usage.ru_stime


OUTPUT_KEPT = 1 << 20       # bytes kept from each end of a program's output


def _head_and_tail(out) -> str:
    """The program's output, or its first and last ``OUTPUT_KEPT`` bytes when it wrote more: a starter
    program whose loop never ends prints "Period 5 ioc: ..." until the limit stops it (gigabytes: CME 213's
    cipher homework), and the verdict needs only its first lines and its last."""
    size = out.seek(0, os.SEEK_END)
    out.seek(0)
    if size <= 2 * OUTPUT_KEPT:
        return out.read().decode(errors="replace")
    head = out.read(OUTPUT_KEPT).decode(errors="replace")
    out.seek(size - OUTPUT_KEPT)
    tail = out.read().decode(errors="replace")
    return f"{head}\n[... {size - 2 * OUTPUT_KEPT:,} bytes of output left out ...]\n{tail}"


_BUILD = """
import sys
from cudalab.programs import build, parse_nvcc
from cudalab.programs.command import NvccUsageError
from cudalab.errors import CudaError
try:
    build(parse_nvcc(sys.argv[1:]))
except (CudaError, NvccUsageError) as e:       # (a Makefile that hands nvcc its headers: the one line cudalab run says)
    sys.exit(str(e))
"""


# what stops a sample, by the part of cudalab that would have to grow (the helpers' split of the work)
CAUSES = [
    (r"timeout|still running|watchdog|cudaErrorLaunchTimeout|time limit", "time (the emulator's speed)"),
    (r"curand_kernel\.h", "build: cuRAND's device headers (pip install cudalab[curand])"),
    (r"cudaCreateChannelDesc|Array|Texture|Surface|cudaMemcpy3D|cudaMalloc3D|\b(tex|tld4|txq|suld|sust|sured|suq)\.",
     "runtime: arrays, textures and surfaces"),
    (r"`(wmma|mma|ldmatrix|stmatrix)\.", "PTX: tensor cores (wmma/mma)"),
    (r"`(cp\.async|mbarrier|cp\.reduce\.async|bar\.(sync|arrive) .*, )", "PTX: async copies and barriers"),
    (r"__cudaCDP|cudaGetParameterBuffer|cluster|ld\.param through|elect\.sync|griddepcontrol|setmaxnreg",
     "PTX: clusters, dynamic parallelism, large parameters ..."),
    (r"cannot run the PTX instruction", "PTX: other instructions"),
    (r"does not implement cuda|cudaError|CUDA error at|'Server' object|lost the connection|code=\d+",
     "runtime API"),
    (r"^build:", "build"),
]


def cause(detail: str) -> str:
    """The kind of work a failure asks for (see CAUSES), from its first error line."""
    return next((what for pattern, what in CAUSES if re.search(pattern, detail)), "other")


# ---------------------------------------------------------------------------------------- report
# Issue 14's rule for a program too large for a CPU: "an honest estimate and the real-GPU path, not a
# silent timeout". A sample stopped for time whose stop message estimates more time than the whole
# limit (the watchdog's estimate of the launch it stopped, or of the rest of its loop of launches) is
# *GPU-sized*; one stopped with no such estimate is *time* (over the limit, but it may fit a longer one).
SECONDS = {"s": 1, "minutes": 60, "hours": 3600, "days": 86400, "years": 86400 * 365}
_UNIT = r"(s|minutes|hours|days|years)"
ESTIMATE = re.compile(rf"(about|between|more than) ([\d.,]+) {_UNIT}(?: and ([\d.,]+) {_UNIT})? on the emulator|"
                      rf"the rest of it needs (about) ([\d.,]+) {_UNIT}")
# samples whose stop message estimates only the launch it stopped (each fits the limit), though the program
# is far over it: the estimate worked out from that message and the sample's source (table round 20)
MEASURED_SIZE = {
    # stopped at 121 s in the first of its 8 kinds of memory at the last of its 7 sizes (2048): there, per kind,
    # 22 launches of matrixMultiplyKernel (30.5 billion thread-instructions, about 1.9 s each, its stop message)
    # and two reference products on the host (verifyMatrixMultiplyCorrectness, 2048^3 each)
    "UnifiedMemoryPerf": "more than 7 minutes here (at 120 s it had reached its last size, 2048, where 176 launches "
                         "of about 1.9 s each and 16 host-side reference products of 2048^3 remain)",
}


def gpu_sized(name: str, detail: str, limit: float) -> str:
    """'' or, for a sample too large for the emulator's limit, its estimate as the table says it:
    "needs about 51 minutes here" (the first estimate whose least time is over ``limit`` seconds)."""
    for m in ESTIMATE.finditer(detail):
        how, n, unit, n2, unit2 = m.group(1, 2, 3, 4, 5) if m.group(1) else (*m.group(6, 7, 8), None, None)
        least = float(n.replace(",", "")) * SECONDS[unit]
        if least >= limit:
            said = f"{n} {unit} to {n2} {unit2}" if n2 else f"{'more than' if how == 'more than' else 'about'} {n} {unit}"
            return f"needs {said} here"
    return f"needs {MEASURED_SIZE[name]}" if name in MEASURED_SIZE else ""


def verdict(r: dict, limit: float = TIMEOUT) -> tuple:
    """(status, one-line reason) of a result as the current table shows it: pass, GPU-sized (with its
    estimate), time (over the limit, no estimate beyond it), fail (the cause and the first error
    line, cut short), not run."""
    status, detail = r["status"], r.get("detail", "")
    if status == "pass" and r.get("cpu_seconds", 0) > limit:
        # a run with a longer limit (--timeout 900) that passed over the table's: over the limit all the same
        return "time", f"passes in {r['cpu_seconds']:.1f} s of CPU, over {limit:g} s"
    if status == "pass":
        return "pass", ""
    if status == "not run":
        return "not run", detail
    timed = status == "timeout" or cause(detail).startswith("time")
    sized = gpu_sized(r["name"], detail, limit)
    if sized and timed:
        return "GPU-sized", sized
    if status == "timeout" and 0 < r.get("cpu_seconds", 0) < limit and re.match(r"still running|stopped by the wall", detail):
        # the wall-clock net (WALL_PER_CPU times the limit) ended it first: a machine too loaded to judge it
        return "time", (f"stopped by the wall-clock limit after {r.get('seconds', 0):.0f} s, at {r['cpu_seconds']:.1f} s "
                        f"of CPU: the machine was too loaded to give it its {limit:g} s")
    if timed:
        stopped = re.search(r"kernel (\S+) was running|kernel (\S+) was stopped", detail)
        # (its count of launches: their CPU seconds, before ed84ad4, counted the serving thread's alone)
        launches = re.search(r"It had run ([\d,]+) kernel launch", detail)
        return "time", ", ".join(x for x in (
            f"over {limit:g} s of CPU", f"stopped in {next(g for g in stopped.groups() if g)}" if stopped else "",
            f"after {launches.group(1)} launches" if launches else "") if x)
    line = short_names(detail).replace("|", "\\|").replace("`", "'")
    line = line[:120] + " ..." if len(line) > 120 else line
    return "fail", line if line.startswith(f"{cause(detail)}:") else f"{cause(detail)}: {line}"


# one word for why a sample is left out (_left_out's reasons)
LEFT_OUT_WORDS = [(r"^graphics", "graphics"), (r"GPUs$", "multi-GPU"), (r"^IPC", "IPC"), (r"^MPI", "MPI"),
                  (r"^OpenMP", "OpenMP"), (r"^NvSci", "NvSci"), (r"cudalab does not emulate \((.*)\)", None),
                  (r"skip", "skipped"), (r"no executable for Linux", "Windows")]


def left_out_word(reason: str) -> str:
    """"graphics (GLUT, OpenGL)" -> "graphics"; "a CUDA library cudalab does not emulate (NPP)" -> "NPP"."""
    for pattern, word in LEFT_OUT_WORDS:
        m = re.search(pattern, reason)
        if m:
            return word or m.group(1)
    return reason


def seconds_cell(r) -> str:
    if r is None or r["status"] in ("not run", "left out"):
        return ""
    return f"{r['cpu_seconds']:.1f}" if r.get("cpu_seconds") else f"{r['seconds']:.1f}"


def write_table(emu: dict, gpu: dict, out: Path, figure: str = "", limit: float = TIMEOUT,
                history: str = "samples_history.md", run_note: str = "", longer: dict | None = None):
    """docs/samples.md as a reader uses it: the summary line, then one short row per sample (its
    result, CPU seconds, whose figure it is, the GPU's result and seconds, and for a non-pass one line
    saying why), the samples left out with one word each, and the commands. ``emu`` and ``gpu`` are
    result files (a row's ``figure``: the round and date of its run; ``figure`` fills those without).
    The rounds' notes live in ``history``; ``longer`` holds runs with a longer limit, whose pass a row
    over the limit names ("passes in 158.3 s of CPU with a limit of 900 s")."""
    first = {n: emu.get(n) or gpu.get(n) for n in dict.fromkeys([*emu, *gpu])}
    names = sorted(first, key=lambda n: (first[n]["folder"], n.lower()))       # as a folder listing shows them
    ran = [n for n in names if first[n]["status"] != "left out"]
    left = [n for n in names if n not in ran]
    judged = {n: verdict(emu[n], min(emu[n].get("limit") or limit, limit)) if n in emu else ("not run", "") for n in ran}
    count = {k: sum(v[0] == k for v in judged.values()) for k in ("pass", "GPU-sized", "time", "fail", "not run")}
    on_gpu = sum(gpu.get(n, {}).get("status") == "pass" for n in ran)
    summary = (f"**{count['pass']} of {len(ran)} pass on the emulator, {count['GPU-sized']} GPU-sized, "
               f"{count['time']} over the time limit, {count['fail']} fail"
               + (f", {count['not run']} not run" if count["not run"] else "")
               + f"; {on_gpu} of {len(ran)} pass on the GPU; {len(left)} left out.**")
    fresh = sum((emu[n].get("figure") or figure) == figure for n in ran if n in emu and judged[n][0] != "not run")
    if figure and fresh < len(ran):
        summary += (f" {fresh} of the {len(ran)} rows are from the run of {figure}; the figure column names "
                    f"the round of each other row.")
    lines = ["# NVIDIA cuda-samples on cudalab", "", summary, "",
             f"Written by `tools/samples_check.py --table` from the results of its runs (the emulator's in "
             f"docs/samples_emu.json, the GPU's in docs/samples_gpu.json). {run_note}".strip(), "",
             "A new figure for a row: `samples_check.py --samples ... --only NAME --figure \"ROUND\" --json new.json`, "
             "then `samples_check.py --table docs/samples_emu.json new.json --keep docs/samples_emu.json`; or the "
             "row's cells by hand (result, CPU s, figure: your round and the date), the notes in the history.", "",
             f"*emulator*: *pass* as the samples' own runner decides (exit code 0, no line saying it failed); "
             f"*GPU-sized*: stopped at the limit of {limit:g} s of CPU time with cudalab's estimate of a longer "
             f"time (issue 14: an honest estimate and the real-GPU path, `cudalab run --device gpu`); *time*: "
             f"over the limit with no estimate beyond it; *fail*: the cause and the first error line. "
             f"*CPU s*: the emulator's and the program's CPU seconds (the build apart). *figure*: whose run "
             f"the row's figures are (round, date). *GPU*: `--device gpu` with nvcc's build, on the GPU the "
             f"figure names. The rounds' notes and measurements, the sections other documents cite as "
             f"docs/samples.md's (*Over 120 s*, *sixty round 19* ...), are in [{history}]({history}).", "",
             "| sample | folder | emulator | CPU s | figure | GPU | GPU s | why not a pass |",
             "| --- | --- | --- | ---: | --- | --- | ---: | --- |"]
    for n in ran:
        status, why = judged[n]
        more = (longer or {}).get(n)
        if (status in ("GPU-sized", "time") and more and more["status"] == "pass"
                and more.get("cpu_seconds") != emu[n].get("cpu_seconds")):       # (not the row's own pass again)
            said = more.get("figure", "")
            why += (f"; passes in {more['cpu_seconds']:.1f} s of CPU" +
                    ("" if "limit" in said else f" with a limit of {more.get('limit') or 0:g} s") + f" ({said})")
        g = gpu.get(n)
        fig = (emu[n].get("figure") or figure) if n in emu and status != "not run" else ""
        gfig = (g or {}).get("figure", "")
        gcell = (g["status"] if g else "not run") + (f" ({gfig})" if gfig else "")
        lines.append(f"| {n} | {first[n]['folder']} | {status} | {seconds_cell(emu.get(n))} | {fig} | {gcell} | "
                     f"{seconds_cell(g)} | {why} |")
    lines += ["", "## Left out", "", "| sample | folder | why |", "| --- | --- | --- |"]
    lines += [f"| {n} | {first[n]['folder']} | {left_out_word(first[n]['detail'])} |" for n in left]
    lines += ["", "## Commands", "", "As `cudalab run` was given them, in the sample's folder:", ""]
    lines += [f"- {n}: `{first[n]['command']}`" for n in ran if first[n].get("command")]
    out.write_text("\n".join(lines) + "\n")


def merged(files) -> dict:
    """Result files read in order, a later file's row for a sample replacing an earlier one's."""
    rows = {}
    for f in files:
        rows.update(json.loads(Path(f).read_text()))
    return rows


def _not_in_folders(only, chosen, checkout: Path, folders) -> str:
    """'' or, for names --only gives that the folders searched do not hold, a message that names each
    one's folder where the checkout has it (a run that skipped them would say nothing of them)."""
    found = {s.name for s in chosen}
    lost = [n for n in only if n and n not in found]
    if not lost:
        return ""
    where = []
    for name in lost:
        homes = sorted(p.parent.name for p in (checkout / "Samples").glob(f"*/{name}") if p.is_dir())
        where.append(f"{name} (in {', '.join(homes)})" if homes else f"{name} (no such sample in {checkout})")
    return (f"--only names samples outside the folders searched ({', '.join(folders)}): {'; '.join(where)}. "
            f"Add their folders with --folders.")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=Path, help="a cuda-samples checkout (to run them; --table needs none)")
    p.add_argument("--device", choices=("emu", "gpu"), default="emu")
    p.add_argument("--jobs", type=int, default=2, help="samples at a time (2 is the most a 2-core machine takes)")
    p.add_argument("--timeout", type=float, default=TIMEOUT)
    p.add_argument("--only", default="", help="comma-separated sample names, run in that order")
    p.add_argument("--folders", default=",".join(FOLDERS), help="comma-separated folders of Samples/ to run (a "
                   "long run in parts)")
    p.add_argument("--json", type=Path, help="write the results here (default: samples-DEVICE.json)")
    p.add_argument("--work", type=Path, help="where the samples are copied and run (default: a new temporary "
                   "folder; give the checkout itself to run in place)")
    p.add_argument("--stage-only", action="store_true", help="copy the samples to --work and stop")
    p.add_argument("--archs", default="", help='CMAKE_CUDA_ARCHITECTURES to build instead of the samples\' own '
                   '(e.g. "90" for an H100 alone: the same program, built in a ninth of the time)')
    p.add_argument("--logs", type=Path, help="write each sample's output to LOGS/NAME.txt")
    p.add_argument("--table", type=Path, nargs="+", metavar="EMU.json",
                   help="write docs/samples.md from emulator result files (a later file's row replaces an "
                   "earlier one's: docs/samples_emu.json, then a new run of some samples)")
    p.add_argument("--gpu", type=Path, default=ROOT / "docs" / "samples_gpu.json", help="with --table: the GPU's "
                   "results")
    p.add_argument("--keep", type=Path, help="with --table: write the merged emulator results here "
                   "(docs/samples_emu.json)")
    p.add_argument("--figure", default="", help="whose run it is, for the table's figure column: a run's "
                   "rows get it with the date (\"table round 20\" -> \"table round 20, 2026-11-28\"); with "
                   "--table, rows that have none get it as it is")
    p.add_argument("--longer", type=Path, help="with --table: results of runs with a longer limit, named in "
                   "the rows of samples over this one")
    p.add_argument("--run-note", default="", help="with --table: a sentence on the whole-table run (commit, load)")
    p.add_argument("--markdown", type=Path, default=ROOT / "docs" / "samples.md")
    a = p.parse_args(argv)
    if a.table:
        emu = merged(a.table)
        for r in emu.values():
            if r["status"] not in ("not run", "left out"):
                r["figure"] = r.get("figure") or a.figure
        if a.keep:
            a.keep.write_text(json.dumps(emu, indent=1) + "\n")
        gpu = json.loads(a.gpu.read_text()) if a.gpu.exists() else {}
        longer = json.loads(a.longer.read_text()) if a.longer else None
        write_table(emu, gpu, a.markdown, figure=a.figure, run_note=a.run_note, longer=longer)
        print(f"wrote {a.markdown}")
        return 0
    if a.samples is None:
        p.error("give --samples (a cuda-samples checkout) to run them, or --table to write the table")
    only = a.only.split(",") if a.only else []
    chosen = [s for s in samples(a.samples.resolve(), a.folders.split(","), a.archs) if not only or s.name in only]
    chosen.sort(key=lambda s: only.index(s.name) if only else 0)       # in the order --only gives
    missing = _not_in_folders(only, chosen, a.samples.resolve(), a.folders.split(","))
    if missing:
        print(missing, file=sys.stderr)
        return 2
    work = a.work or Path(tempfile.mkdtemp(prefix="cuda-samples-"))
    stage(chosen, a.samples, work)
    if a.stage_only:
        print(f"copied {sum(not s.left_out for s in chosen)} samples and Common to {work}")
        return 0
    results = {}
    out = a.json or Path(f"samples-{a.device}.json")
    if a.logs:
        a.logs.mkdir(parents=True, exist_ok=True)
    order = {s.name: k for k, s in enumerate(chosen)}
    with ThreadPoolExecutor(a.jobs) as pool:
        for job in as_completed([pool.submit(run_sample, s, a.device, a.timeout, a.logs) for s in chosen]):
            r = job.result()
            r.limit = a.timeout if a.device == "emu" else 0.0
            r.figure = f"{a.figure}, {time.strftime('%Y-%m-%d', time.gmtime())}" if a.figure else ""
            results[r.name] = asdict(r)
            results = dict(sorted(results.items(), key=lambda kv: order[kv[0]]))
            out.write_text(json.dumps(results, indent=1))         # as it goes: a stopped run keeps its results
            print(f"{r.name:32s} {r.status:9s} {r.seconds:6.1f}s  {r.detail[:110]}", flush=True)
    ran = [r for r in results.values() if r["status"] != "left out"]
    print(f"{sum(r['status'] == 'pass' for r in ran)} of {len(ran)} pass; {len(results) - len(ran)} left out; "
          f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
