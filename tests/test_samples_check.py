"""tools/samples_check.py reads a sample's CMakeLists.txt as CMake would: what it links, and why it is left out.

The tool runs NVIDIA's cuda-samples outside CI; these folders are made up, in the samples' own layout.
"""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("samples_check", Path(__file__).parents[1] / "tools" / "samples_check.py")
samples_check = sys.modules["samples_check"] = importlib.util.module_from_spec(_spec)     # (its dataclasses ask)
_spec.loader.exec_module(samples_check)

CMAKE = """project({name} LANGUAGES C CXX CUDA)
find_package(CUDAToolkit REQUIRED)
include_directories(../../../Common)
add_executable({name} main.cu)
target_link_libraries({name} PRIVATE {libraries})
"""


def sample(tmp_path, name, libraries, code="int main() { return 0; }\n"):
    folder = tmp_path / "Samples" / "4_CUDA_Libraries" / name
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text(CMAKE.format(name=name, libraries=libraries))
    (folder / "main.cu").write_text(code)
    return samples_check.read_sample(folder, "4_CUDA_Libraries", {}, archs="90")


@pytest.mark.parametrize("libraries, links", [
    ("CUDA::cudart CUDA::cublas", ["-lcublas"]),             # nvcc links the runtime itself
    ("CUDA::cuda_driver", ["-lcuda"]),
    ("CUDA::nvrtc CUDA::cuda_driver", ["-lnvrtc", "-lcuda"]),                # NVIDIA's NVRTC, cudalab's driver
    ("CUDA::cufft_static CUDA::curand", ["-lcufft_static", "-lculibos", "-lcurand"]),    # callbacks need it static
])
def test_a_sample_using_a_library_cudalab_serves_is_run_and_linked_as_cmake_would(tmp_path, libraries, links):
    s = sample(tmp_path, "simpleLibrary", libraries)
    assert s.left_out == ""
    assert [o for o in s.options if o.startswith("-l") and o != "-lineinfo"] == links


@pytest.mark.parametrize("libraries, reason", [
    ("CUDA::cudart CUDA::nppc CUDA::nppisu", "a CUDA library cudalab does not emulate (NPP)"),
    ("CUDA::cublas CUDA::cusolver", "a CUDA library cudalab does not emulate (cuSOLVER)"),
    ("CUDA::nvjpeg", "a CUDA library cudalab does not emulate (nvJPEG)"),
])
def test_a_sample_needing_a_library_cudalab_does_not_emulate_is_left_out_naming_it(tmp_path, libraries, reason):
    assert sample(tmp_path, "needsMore", libraries).left_out == reason


def test_a_library_found_by_find_library_counts_as_linked(tmp_path):
    """jitLto links nvJitLink through find_library(NVJITLINK_LIB NAME nvJitLink) and ${NVJITLINK_LIB}."""
    folder = tmp_path / "Samples" / "4_CUDA_Libraries" / "linksByPath"
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text(CMAKE.format(name="linksByPath", libraries="CUDA::nvrtc ${JIT_LIB}")
                                           .replace("add_executable", "find_library(JIT_LIB NAME nvJitLink)\nadd_executable"))
    (folder / "main.cu").write_text("int main() { return 0; }\n")
    s = samples_check.read_sample(folder, "4_CUDA_Libraries", {})
    assert s.left_out == "a CUDA library cudalab does not emulate (nvJitLink)"


DRIVER_SAMPLE = """project(loadsItsModule LANGUAGES C CXX CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_ARCHITECTURES 75 80 90)
add_executable(loadsItsModule main.cpp)
target_link_libraries(loadsItsModule PUBLIC CUDA::cuda_driver)
set(CUDA_FATBIN_FILE "${CMAKE_CURRENT_BINARY_DIR}/kernel64.fatbin")
set(GENCODE_FLAGS "")
foreach(arch ${CMAKE_CUDA_ARCHITECTURES})
    list(APPEND GENCODE_FLAGS "-gencode=arch=compute_${arch},code=sm_${arch}")
endforeach()
add_custom_command(
    OUTPUT ${CUDA_FATBIN_FILE}
    COMMAND ${CMAKE_CUDA_COMPILER} ${INCLUDES} -Wno-deprecated-gpu-targets ${GENCODE_FLAGS} -o ${CUDA_FATBIN_FILE} -fatbin ${CMAKE_CURRENT_SOURCE_DIR}/kernel.cu
    DEPENDS kernel.cu)
list(GET CUDAToolkit_INCLUDE_DIRS 0 CUDA_INCLUDE_DIR)
add_custom_command(TARGET loadsItsModule POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_CURRENT_SOURCE_DIR}/kernel.cu ${CMAKE_CURRENT_BINARY_DIR})
add_custom_command(TARGET loadsItsModule POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${CUDA_INCLUDE_DIR}/cooperative_groups ${CMAKE_CURRENT_BINARY_DIR}/cooperative_groups)
"""


def test_the_module_file_a_driver_sample_loads_is_built_as_its_custom_command_says(tmp_path):
    """The fat binary's nvcc line, with one -gencode per architecture of the foreach, runs in the sample's
    folder (as cudalab nvcc, which keeps its PTX); copies of kernel sources and toolkit headers follow."""
    folder = tmp_path / "Samples" / "0_Introduction" / "loadsItsModule"
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text(DRIVER_SAMPLE)
    s = samples_check.read_sample(folder, "0_Introduction", {})
    assert s.left_out == ""
    kinds = [kind for kind, _ in s.steps]
    assert kinds == ["nvcc", "copy", "copy_directory"]
    assert s.steps[0][1] == ["-Wno-deprecated-gpu-targets", "-gencode=arch=compute_75,code=sm_75",
                             "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                             "-o", "kernel64.fatbin", "-fatbin", "kernel.cu"]
    assert s.steps[2][1] == ["/usr/local/cuda/include/cooperative_groups", "cooperative_groups"]
    only_h100 = samples_check.read_sample(folder, "0_Introduction", {}, archs="90")     # --archs 90: the module too
    assert [w for w in only_h100.steps[0][1] if w.startswith("-gencode")] == ["-gencode=arch=compute_90,code=sm_90"]


def test_a_data_folder_copied_into_the_build_folder_is_already_there(tmp_path):
    """The tool builds a sample in its own folder, so CMake's `copy_directory data -> build/data` (the
    image-processing samples' inputs) copies a folder onto itself: nothing to do, not an error."""
    folder = tmp_path / "Samples" / "5_Domain_Specific" / "readsItsData"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "frame.nv12").write_bytes(b"\x10" * 16)
    (folder / "CMakeLists.txt").write_text("""project(readsItsData LANGUAGES C CXX CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(readsItsData main.cu)
add_custom_command(TARGET readsItsData POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy_directory
    ${CMAKE_CURRENT_SOURCE_DIR}/data
    ${CMAKE_CURRENT_BINARY_DIR}/data)
""")
    (folder / "main.cu").write_text("int main() { return 0; }\n")
    s = samples_check.read_sample(folder, "5_Domain_Specific", {})
    assert s.steps == [("copy_directory", ["data", "data"])]
    assert samples_check.do_steps(s, {}) == ""
    assert (folder / "data" / "frame.nv12").read_bytes() == b"\x10" * 16


def test_a_name_given_to_only_outside_the_folders_searched_is_named_with_its_folder(tmp_path, capsys):
    # BlackScholes lives in 5_Domain_Specific: asked for with the default folders, the tool had run the
    # other names and said nothing of it
    folder = tmp_path / "Samples" / "5_Domain_Specific" / "BlackScholes"
    folder.mkdir(parents=True)
    (folder / "CMakeLists.txt").write_text(CMAKE.format(name="BlackScholes", libraries="CUDA::cudart"))
    (folder / "main.cu").write_text("int main() { return 0; }\n")
    (tmp_path / "Samples" / "0_Introduction").mkdir()
    rc = samples_check.main(["--samples", str(tmp_path), "--only", "BlackScholes,noSuchSample",
                             "--folders", "0_Introduction"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "BlackScholes (in 5_Domain_Specific)" in err
    assert "noSuchSample (no such sample in" in err and "--folders" in err


# ---- the current table (table round 20): one short row a sample, GPU-sized by the rule
WATCHDOG_STOP = ("exit code 1: CUDA error at probe.cu:12 code=702(cudaErrorLaunchTimeout) \"cudaDeviceSynchronize()\" "
                 "(The kernel sweep was stopped by the watchdog early: it would run far beyond its limit of 720 s. "
                 "(it needs about 51 minutes on the emulator))")
LIMIT_STOP = ("The program's CPU-time limit (ulimit -t, 120 s) ran out while kernel tile was running, so the kernel "
              "was stopped, and then the program. (that launch needs between 0.04 s and 0.7 s on the emulator) It "
              "had run 943 kernel launches before it, 110.0 s of the emulator's CPU time in all (8.6 a second).")


def row(name, status, detail="", cpu=1.5, folder="0_Introduction", seconds=None, **more):
    return {"name": name, "folder": folder, "status": status, "detail": detail,
            "seconds": cpu * 3 if seconds is None else seconds,
            "cpu_seconds": cpu, "command": f"cudalab run -o {name} {name}.cu", **more}


def test_a_sample_whose_kernel_needs_longer_than_the_whole_limit_is_gpu_sized_with_its_estimate():
    assert samples_check.verdict(row("probe", "fail", WATCHDOG_STOP)) == ("GPU-sized", "needs about 51 minutes here")
    between = "stopped early (it needs between 4.0 minutes and 72 minutes on the emulator)"
    assert samples_check.verdict(row("gemm", "timeout", between)) == ("GPU-sized", "needs 4.0 minutes to 72 minutes here")


def test_a_sample_over_the_limit_in_launches_that_each_fit_it_is_time_not_gpu_sized():
    status, why = samples_check.verdict(row("manyLaunches", "timeout", LIMIT_STOP))
    assert status == "time"
    assert why == "over 120 s of CPU, stopped in tile, after 943 launches"
    # with a longer limit the same estimate of 51 minutes is still beyond it; of 4 minutes, not
    assert samples_check.verdict(row("probe", "fail", WATCHDOG_STOP), limit=900)[0] == "GPU-sized"
    assert samples_check.verdict(row("gemm", "timeout", "(it needs about 4.0 minutes on the emulator)"),
                                 limit=900)[0] == "time"


def test_a_sample_whose_size_was_worked_out_by_hand_is_gpu_sized_with_that_estimate():
    status, why = samples_check.verdict(row("UnifiedMemoryPerf", "timeout", LIMIT_STOP, folder="6_Performance"))
    assert status == "GPU-sized" and why.startswith("needs more than 7 minutes here")
    # the hand estimate is of its size: a failure of another kind is still a failure
    assert samples_check.verdict(row("UnifiedMemoryPerf", "fail", "exit code 1: Test failed!"))[0] == "fail"


def test_a_failure_is_one_line_naming_its_cause_and_cut_short():
    long = "exit code 1: CUDA error at main.cpp:283 code=10 \"cusparseSpMatSetAttribute(m, A | B)\" " + "x" * 200
    status, why = samples_check.verdict(row("precond", "fail", long))
    assert status == "fail" and why.startswith("runtime API: exit code 1: CUDA error at main.cpp:283")
    assert "A \\| B" in why and why.endswith(" ...") and len(why) < 160
    # a build's failure says "build:" once
    assert samples_check.verdict(row("callback", "fail", "build: no cufftXt here"))[1] == "build: no cufftXt here"


@pytest.mark.parametrize("reason, word", [
    ("graphics (GLUT, OpenGL)", "graphics"), ("needs 2 GPUs", "multi-GPU"), ("IPC (several processes)", "IPC"),
    ("a CUDA library cudalab does not emulate (NPP)", "NPP"), ("marked skip in the checkout's test_args.json", "skipped"),
    ("no executable for Linux in its CMakeLists.txt", "Windows"), ("OpenMP", "OpenMP"),
])
def test_a_left_out_sample_gets_one_word(reason, word):
    assert samples_check.left_out_word(reason) == word


def test_the_table_has_the_summary_first_one_row_a_sample_and_the_history_linked(tmp_path):
    emu = {"vectorAdd": row("vectorAdd", "pass", cpu=3.4, figure="table round 20, 2026-11-28"),
           "probe": row("probe", "fail", WATCHDOG_STOP, cpu=6.1),
           "manyLaunches": row("manyLaunches", "timeout", LIMIT_STOP, cpu=120.4, folder="6_Performance"),
           "cudaOpenMP": row("cudaOpenMP", "left out", "OpenMP", cpu=0),
           "unreached": row("unreached", "not run", "not reached by the run", cpu=0)}
    gpu = {"vectorAdd": row("vectorAdd", "pass", cpu=0, seconds=5.9, figure="H100, 2026-11-24"),
           "probe": row("probe", "pass", cpu=0, seconds=7.2, figure="H100, 2026-11-24")}
    doc = tmp_path / "samples.md"
    samples_check.write_table(emu, gpu, doc, figure="later round, 2026-11-29")
    lines = doc.read_text().splitlines()
    assert lines[2] == ("**1 of 4 pass on the emulator, 1 GPU-sized, 1 over the time limit, 0 fail, 1 not run; "
                        "2 of 4 pass on the GPU; 1 left out.** 2 of the 4 rows are from the run of later round, "
                        "2026-11-29; the figure column names the round of each other row.")
    assert "| unreached | 0_Introduction | not run |  |  | not run |  | not reached by the run |" in lines
    assert "| vectorAdd | 0_Introduction | pass | 3.4 | table round 20, 2026-11-28 | pass (H100, 2026-11-24) | 5.9 |  |" \
        in lines
    assert ("| probe | 0_Introduction | GPU-sized | 6.1 | later round, 2026-11-29 | pass (H100, 2026-11-24) | 7.2 | "
            "needs about 51 minutes here |") in lines
    assert any(l.startswith("| manyLaunches | 6_Performance | time | 120.4 |") and "| not run |  |" in l for l in lines)
    assert "| cudaOpenMP | 0_Introduction | OpenMP |" in lines
    assert "[samples_history.md](samples_history.md)" in doc.read_text()
    assert "- vectorAdd: `cudalab run -o vectorAdd vectorAdd.cu`" in lines


def test_a_later_result_file_replaces_a_sample_s_row_and_keeps_the_rest(tmp_path):
    whole, again = tmp_path / "whole.json", tmp_path / "again.json"
    whole.write_text(json.dumps({"a": row("a", "timeout", LIMIT_STOP), "b": row("b", "pass")}))
    again.write_text(json.dumps({"a": row("a", "pass", cpu=80.0, figure="sixty round 20, 2026-11-28")}))
    rows = samples_check.merged([whole, again])
    assert list(rows) == ["a", "b"] and rows["a"]["status"] == "pass" and rows["a"]["figure"].startswith("sixty")


def test_a_row_over_the_limit_names_its_pass_in_a_longer_run(tmp_path):
    emu = {"gemm": row("gemm", "fail", WATCHDOG_STOP.replace("about 51 minutes", "between 4.0 minutes and 72 minutes"),
                       cpu=16.0)}
    longer = {"gemm": row("gemm", "pass", cpu=158.3, limit=900.0, figure="dmma round 15")}
    doc = tmp_path / "samples.md"
    samples_check.write_table(emu, {}, doc, longer=longer)
    assert ("| gemm | 0_Introduction | GPU-sized | 16.0 |  | not run |  | needs 4.0 minutes to 72 minutes here; passes in "
            "158.3 s of CPU with a limit of 900 s (dmma round 15) |") in doc.read_text().splitlines()


def test_a_sample_the_wall_clock_net_stopped_under_its_cpu_limit_says_so():
    # on a machine too loaded to give it its CPU time, the 6-times wall-clock limit ends the run first
    killed = row("gemm", "timeout", "still running after 120 s of CPU time", cpu=99.4, seconds=722.2)
    status, why = samples_check.verdict(killed)
    assert status == "time" and why.startswith("stopped by the wall-clock limit after 722 s, at 99.4 s of CPU")


def test_a_pass_with_a_longer_limit_is_over_the_tables_limit_all_the_same():
    # globalToShmemAsyncCopy run with --timeout 900 passes in 153 s: the table's limit is 120 s, so the row
    # says it is over the limit and that it passes given longer; one under 120 s is a pass however it was run
    assert samples_check.verdict(row("gemm", "pass", cpu=153.1, limit=900.0)) == (
        "time", "passes in 153.1 s of CPU, over 120 s")
    assert samples_check.verdict(row("gemm", "pass", cpu=119.2, limit=900.0)) == ("pass", "")
