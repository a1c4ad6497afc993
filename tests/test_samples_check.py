"""tools/samples_check.py reads a sample's CMakeLists.txt as CMake would: what it links, and why it is left out.

The tool runs NVIDIA's cuda-samples outside CI; these folders are made up, in the samples' own layout.
"""
import importlib.util
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


def test_a_section_for_further_folders_replaces_its_older_self(tmp_path):
    doc = tmp_path / "samples.md"
    doc.write_text("# NVIDIA cuda-samples on cudalab\n\n## Left out\n\nthe main table's\n")
    emu = {"deviceQuery": {"name": "deviceQuery", "folder": "1_Utilities", "status": "pass", "detail": "",
                           "seconds": 7.1, "cpu_seconds": 1.1},
           "boxFilterNPP": {"name": "boxFilterNPP", "folder": "4_CUDA_Libraries", "status": "left out",
                            "detail": "a CUDA library cudalab does not emulate (NPP)"}}
    gpu = {"deviceQuery": dict(emu["deviceQuery"], cpu_seconds=0.0, seconds=2.2)}
    for _ in range(2):
        samples_check.write_section(emu, gpu, doc, "Further folders", "Run later.")
    text = doc.read_text()
    assert text.count("## Further folders") == 1 and "the main table's" in text
    assert "| deviceQuery | 1_Utilities | pass | 1.1 | pass | 2.2 |" in text
    assert "| boxFilterNPP | 4_CUDA_Libraries | a CUDA library cudalab does not emulate (NPP) |" in text
    assert "**1 of 1 pass on the emulator, 1 of 1 on the GPU; 1 left out.**" in text


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
