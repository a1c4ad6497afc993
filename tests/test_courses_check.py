"""tools/courses_check.py finds a program's build where a reader looks for it.

A book's repository keeps its code in ``chapter-10/code/`` and says how to build it in
``chapter-10/README.md``; a project keeps its sources in ``src/`` and its Makefile one folder up.
A reader runs those lines; so must the tool, or it builds the program without its second file and
reports a link error that is not cudalab's.
"""
import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from courses_check import (author_arguments, author_run, gpu_options, judge, project_companions,  # noqa: E402
                           read_program, read_programs)

MAIN = "int main() { return helper(); }\n"
PIECE = "int helper() { return 0; }\n"


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_chapter_readme_one_folder_up_builds_the_program_with_its_second_file(tmp_path):
    book = write(tmp_path, {
        "chapter-10/README.md": "Build it with\n\n    nvcc reduction_sum.cu reduction_common.cu -o reduction_sum\n",
        "chapter-10/code/reduction_sum.cu": MAIN,
        "chapter-10/code/reduction_common.cu": PIECE,
    })
    p = read_program(book / "chapter-10/code/reduction_sum.cu", book)
    assert (p.sources, p.options) == (["reduction_sum.cu", "reduction_common.cu"], ["-o", "reduction_sum"])
    assert (p.folder, p.how, p.left_out) == ("chapter-10/code", "chapter-10/README.md", "")
    # asked for both files, the tool runs the program once, as the file that has main()
    piece, program = read_programs([book / "chapter-10/code/reduction_common.cu", book / "chapter-10/code/reduction_sum.cu"], book)
    assert piece.left_out == "built with chapter-10/code/reduction_sum.cu into one program, run as that"
    assert program.left_out == ""


def test_a_file_the_readme_names_from_its_own_folder_is_found_beside_the_program(tmp_path):
    book = write(tmp_path, {
        "chapter-07/README.md": "nvcc run_conv.cu code/conv_kernels.cu -o conv\n",
        "chapter-07/code/run_conv.cu": MAIN,
        "chapter-07/code/conv_kernels.cu": PIECE,
    })
    p = read_program(book / "chapter-07/code/run_conv.cu", book)
    assert p.sources == ["run_conv.cu", "conv_kernels.cu"]


def test_a_readme_beside_the_program_comes_before_the_one_above(tmp_path):
    book = write(tmp_path, {
        "lab/README.md": "nvcc -O1 main.cu -o lab\n",
        "lab/code/README.md": "nvcc -O3 main.cu -o lab\n",
        "lab/code/main.cu": "int main() { return 0; }\n",
    })
    p = read_program(book / "lab/code/main.cu", book)
    assert (p.options, p.how) == (["-O3", "-o", "lab"], "lab/code/README.md")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_one_folder_up_builds_and_runs_the_program_in_its_own_folder(tmp_path):
    project = write(tmp_path, {
        "bfs/Makefile": ("SRC = $(wildcard src/*.cu)\nOBJ = $(patsubst src/%.cu,obj/%.o,$(SRC))\n"
                         "bfs: $(OBJ)\n\tnvcc -O2 $^ -o $@\n"
                         "obj/%.o: src/%.cu\n\tnvcc -O2 -I./include -c $< -o $@\n"),
        "bfs/include/graph.h": "int helper();\n",
        "bfs/src/main.cu": '#include "graph.h"\n' + MAIN,
        "bfs/src/graph.cu": PIECE,
    })
    (project / "bfs/obj").mkdir()
    p = read_program(project / "bfs/src/main.cu", project)
    # as `make` and `./bfs` run there: from bfs/, with src/ in the paths
    assert (p.folder, p.how) == ("bfs", "bfs/Makefile")
    assert sorted(p.sources) == ["src/graph.cu", "src/main.cu"]
    assert "-I./include" in p.options and p.options[-2:] == ["-o", "bfs"]
    # graph.cu alone builds the same program, which runs when main.cu is not asked for
    assert read_program(project / "bfs/src/graph.cu", project).sources == p.sources


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_linked_from_the_folder_above_is_read_as_make_reads_it(tmp_path):
    # a workshop with one Makefile at the top, each exercise folder holding `Makefile -> ../Makefile`
    # and its own main.cu: make in the folder follows the link, so the tool must too
    course = write(tmp_path, {
        "Makefile": "a.out: main.cu\n\tnvcc $< -o $@ -arch=sm_30 -I ../common\n",
        "common/helpers.h": "",
        "02-vector-addition/main.cu": MAIN + PIECE,
    })
    (course / "02-vector-addition/Makefile").symlink_to("../Makefile")
    p = read_program(course / "02-vector-addition/main.cu", course)
    assert (p.how, p.sources) == ("02-vector-addition/Makefile", ["main.cu"])
    assert p.options == ["-o", "a.out", "-arch=sm_30", "-I", "../common"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_that_names_its_compilers_by_full_path_is_still_read(tmp_path):
    # CUDA for Engineers' Makefiles say NVCC = /usr/local/cuda/bin/nvcc, which a machine without
    # that toolkit lacks, and Caltech's CS 179 links with CC = /usr/bin/g++: the recorded make must
    # still see the lines they run
    book = write(tmp_path, {
        "dist/Makefile": "NVCC = /usr/local/cuda/bin/nvcc\nmain.exe: kernel.cu\n\t$(NVCC) -g -G $^ -o $@\n",
        "dist/kernel.cu": "int main() { return 0; }\n",
        "lab2/Makefile": ("CC = /usr/bin/g++\nNVCC ?= /opt/cuda/bin/nvcc\nt: t.cc t.o\n\t$(CC) $< -o $@ t.o -O3\n"
                          "t.o: t_cuda.cu\n\t$(NVCC) -m64 -O3 -o $@ -c $<\n"),
        "lab2/t.cc": "int helper();\n" + MAIN,
        "lab2/t_cuda.cu": PIECE,
    })
    p = read_program(book / "dist/kernel.cu", book)
    assert (p.how, p.sources, p.options) == ("dist/Makefile", ["kernel.cu"], ["-g", "-G", "-o", "main.exe"])
    p = read_program(book / "lab2/t.cc", book)
    assert (p.how, p.sources) == ("lab2/Makefile", ["t.cc", "t_cuda.cu"])


def test_a_makefile_that_finds_nvcc_through_its_own_cuda_folder_variable_is_still_read(tmp_path):
    # NTUA's lab says CUDA_PREFIX = /usr/local/cuda and GPU_CC ?= $(CUDA_PREFIX)/bin/nvcc: on a machine
    # without that folder every nvcc line failed, and only the C files' lines were seen
    lab = write(tmp_path, {
        "cuda/Makefile": ("CUDA_PREFIX = /usr/local/cuda\nGPU_CC ?= $(CUDA_PREFIX)/bin/nvcc\n"
                          "dmm: dmm.o main.o\n\t$(GPU_CC) -o $@ $^ -lm\n"
                          "main.o: main.cu\n\t$(GPU_CC) -c -DEPS=1e-4 -o $@ $<\n%.o: %.c\n\t$(CC) -c -o $@ $<\n"),
        "cuda/main.cu": "int helper();\n" + MAIN,
        "cuda/dmm.c": PIECE,
    })
    p = read_program(lab / "cuda/main.cu", lab)
    assert (p.how, p.sources) == ("cuda/Makefile", ["dmm.c", "main.cu"])
    assert "-DEPS=1e-4" in p.options


def test_a_readme_that_makes_in_a_build_folder_of_its_own_builds_the_source_folders_program(tmp_path):
    # UCSD CSE 260's GEMM assignment: sources in src/ and the student's kernel in src_todo_T4/, built by
    # "make -C build_T4 `cat src_todo_T4/OPTIONS.txt`" from the top (its Makefile names ../src/...)
    course = write(tmp_path, {
        "README": "To build:\nmake -C build_T4 `cat src_todo_T4/OPTIONS.txt`\nTo run:\n./mmpy -n 256\n",
        "src_todo_T4/OPTIONS.txt": "bx=32 by=8\n",
        "build_T4/Makefile": ("NVCCFLAGS = -O3 -DBLOCKDIM_X=$(bx) -DBLOCKDIM_Y=$(by)\nall:\n"
                              "\tnvcc $(NVCCFLAGS) -c ../src/mmpy.cu -o ../src/mmpy.o\n"
                              "\tnvcc $(NVCCFLAGS) -c ../src_todo_T4/setGrid.cu -o ../src_todo_T4/setGrid.o\n"
                              "\tnvcc -o ../mmpy ../src/mmpy.o ../src_todo_T4/setGrid.o -lcublas\n"),
        "src/mmpy.cu": "int helper();\n" + MAIN,
        "src_todo_T4/setGrid.cu": PIECE,
    })
    p = read_program(course / "src/mmpy.cu", course)
    assert (p.how, p.folder) == ("README", "build_T4")
    assert p.sources == ["../src/mmpy.cu", "../src_todo_T4/setGrid.cu"]
    assert "-DBLOCKDIM_X=32" in p.options and "-DBLOCKDIM_Y=8" in p.options


def test_a_cmake_project_builds_each_program_with_the_top_level_flags_and_include_folder(tmp_path):
    # a course whose top CMakeLists.txt sets the nvcc flags and the shared include folder, and each
    # lesson folder adds one executable (CUDA_Freshman's layout)
    course = write(tmp_path, {
        "CMakeLists.txt": ('project(course CXX CUDA)\nset(CMAKE_CUDA_FLAGS "-arch=compute_35 -O3")  # old GPUs\n'
                           'set(CMAKE_CUDA_STANDARD 17)\nset(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -lineinfo")\n'
                           "include_directories(./include)\nadd_subdirectory(3_sum)\n"),
        "include/common.h": "int helper() { return 0; }\n",
        "3_sum/CMakeLists.txt": "set(CMAKE_CUDA_ARCHITECTURES 90)\nadd_executable(sum_arrays sum_arrays.cu)\n",
        "3_sum/sum_arrays.cu": '#include "common.h"\n' + MAIN,
        "3_sum/notes.cu": MAIN,                        # in no target: built the default way
    })
    p = read_program(course / "3_sum/sum_arrays.cu", course)
    assert (p.how, p.folder, p.sources) == ("3_sum/CMakeLists.txt", "3_sum", ["sum_arrays.cu"])
    assert p.options == ["-arch=compute_35", "-O3", "-lineinfo", "-std=c++17", "-I../include", "-arch=sm_90",
                         "-o", "sum_arrays"]
    assert read_program(course / "3_sum/notes.cu", course).how.startswith("default")


def test_a_cmake_target_one_folder_up_builds_its_src_file_from_that_folder(tmp_path):
    # a tutorial whose every sample folder holds a CMakeLists.txt with add_executable(NAME src/main.cu)
    # and whose top-level one sets the C++ standard: the program is built and run where cmake's
    # target lives, its source named as the target names it
    course = write(tmp_path, {
        "CMakeLists.txt": "set(CMAKE_CUDA_STANDARD 17)\nproject(t LANGUAGES CUDA CXX)\nadd_subdirectory(09_Streams)\n",
        "09_Streams/CMakeLists.txt": "add_executable(09_Streams\n\t../shared/include/utility.h\n\tsrc/main.cu\n)\n",
        "09_Streams/src/main.cu": MAIN.replace("return helper()", "return 0"),
    })
    p = read_program(course / "09_Streams/src/main.cu", course)
    assert (p.how, p.folder, p.sources) == ("09_Streams/CMakeLists.txt", "09_Streams", ["src/main.cu"])
    assert p.options == ["-std=c++17", "-o", "09_Streams"]


def test_cmake_flags_with_escaped_quotes_over_several_lines_are_read_as_cmake_reads_them(tmp_path):
    # a Chinese video course's top CMakeLists.txt appends -gencode pairs over continued lines, each
    # code list in escaped quotes; CMake hands nvcc one word per -gencode, quotes and all
    course = write(tmp_path, {
        "CMakeLists.txt": ('set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}  -Xcompiler -Wall")\n'
                           'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}  \\\n'
                           '        -gencode=arch=compute_80,code=\\\\\\"sm_80,compute_80\\\\\\" \\\n        ")\n'
                           "add_executable(1_hello\n    1_hello.cu\n)\n"),
        "1_hello.cu": MAIN.replace("return helper()", "return 0"),
    })
    assert '\\\\\\"sm_80' in (course / "CMakeLists.txt").read_text()      # as the course writes it
    p = read_program(course / "1_hello.cu", course)
    assert p.options == ["-Xcompiler", "-Wall", '-gencode=arch=compute_80,code="sm_80,compute_80"', "-o", "1_hello"]


def test_a_cmake_target_over_a_globbed_source_list_builds_every_file_cmake_finds(tmp_path):
    # a student's notes: each lesson's CMakeLists.txt globs src/ for its .cpp and .cu files into a
    # variable, names the header folder through another, and builds one executable from them;
    # main() lives in src/main.cpp, the kernels in the .cu files beside it
    course = write(tmp_path, {
        "1.4 Matmul/CMakeLists.txt": ("set(CMAKE_CUDA_STANDARD 14)\n"
                                      "file(GLOB_RECURSE SRCS ${PROJECT_SOURCE_DIR}/src/*.cpp ${PROJECT_SOURCE_DIR}/src/*.cu)\n"
                                      'set(INC "${PROJECT_SOURCE_DIR}/inc")\n'
                                      "add_executable(matmul ${SRCS})\n"
                                      "target_include_directories(matmul PRIVATE ${INC})\n"
                                      "target_include_directories(matmul PRIVATE ${CUDA_INCLUDE_DIRS})\n"),
        "1.4 Matmul/inc/utils.hpp": "int helper();\n",
        "1.4 Matmul/src/main.cpp": '#include "utils.hpp"\n' + MAIN,
        "1.4 Matmul/src/matmul.cu": PIECE,
        "1.4 Matmul/src/timer.cpp": "int timer() { return 0; }\n",
    })
    p = read_program(course / "1.4 Matmul/src/main.cpp", course)
    assert (p.how, p.folder) == ("1.4 Matmul/CMakeLists.txt", "1.4 Matmul")
    assert p.sources == ["src/main.cpp", "src/matmul.cu", "src/timer.cpp"]     # in cmake's (sorted) order
    assert p.options == ["-std=c++14", "-Iinc", "-o", "matmul"]


def test_a_cmake_target_with_separable_compilation_is_built_with_rdc(tmp_path):
    # dynamic parallelism needs relocatable device code, which CMake asks for with a target property
    course = write(tmp_path, {
        "CMakeLists.txt": ("add_executable(child main.cu)\n"
                           "set_target_properties(child PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n"),
        "main.cu": MAIN.replace("return helper()", "return 0"),
    })
    assert read_program(course / "main.cu", course).options == ["-rdc=true", "-o", "child"]


def test_an_umbrella_cmake_function_that_makes_each_examples_target_is_expanded_for_the_example(tmp_path):
    # a Russian university course: one CMakeLists.txt at the top, a function per kind of example, each
    # call naming the example's folder; dynamic parallelism's function asks for separable compilation,
    # cuBLAS's links the library, the tensor-core one sets its own architectures
    course = write(tmp_path, {
        "CUDA/CMakeLists.txt": (
            "set(CMAKE_CUDA_ARCHITECTURES 60 61 70)\nset(CMAKE_CUDA_STANDARD 14)\n"
            "function(add_cdp_example subdir)\n"
            "    set(example_dir ${CMAKE_CURRENT_SOURCE_DIR}/${subdir})\n"
            '    string(REPLACE "/" "_" target "cuda_${subdir}")\n'
            "    add_executable(${target} ${example_dir}/main.cu)\n"
            "    set_target_properties(${target} PROPERTIES OUTPUT_NAME main\n"
            "        RUNTIME_OUTPUT_DIRECTORY ${example_dir} CUDA_SEPARABLE_COMPILATION ON)\n"
            "endfunction()\n"
            "function(add_cublas_example target subdir source)\n"
            "    add_executable(${target} ${CMAKE_CURRENT_SOURCE_DIR}/${subdir}/${source})\n"
            "    target_link_libraries(${target} PRIVATE CUDA::cublas)\n"
            "endfunction()\n"
            "function(add_wmma_example subdir)\n"
            "    add_executable(wmma ${CMAKE_CURRENT_SOURCE_DIR}/${subdir}/main.cu)\n"
            '    set_target_properties(wmma PROPERTIES OUTPUT_NAME main CUDA_ARCHITECTURES "70;75;80")\n'
            "endfunction()\n"
            "add_cdp_example(16-dynamic-parallelism/00-child-launch)\n"
            "add_cublas_example(CublasVectorAdd 06-cublas 01-vector-add.cu)\n"
            "add_wmma_example(15-tensor-cores/00-wmma)\n"),
        "CUDA/16-dynamic-parallelism/00-child-launch/main.cu": MAIN.replace("return helper()", "return 0"),
        "CUDA/06-cublas/01-vector-add.cu": MAIN.replace("return helper()", "return 0"),
        "CUDA/15-tensor-cores/00-wmma/main.cu": MAIN.replace("return helper()", "return 0"),
    })
    cdp = read_program(course / "CUDA/16-dynamic-parallelism/00-child-launch/main.cu", course)
    assert (cdp.how, cdp.folder, cdp.sources) == ("CUDA/CMakeLists.txt", "CUDA/16-dynamic-parallelism/00-child-launch",
                                                  ["main.cu"])
    assert cdp.options == ["-std=c++14", "-arch=sm_60", "-rdc=true", "-o", "main"]
    blas = read_program(course / "CUDA/06-cublas/01-vector-add.cu", course)
    assert blas.options == ["-std=c++14", "-arch=sm_60", "-lcublas", "-o", "CublasVectorAdd"]
    wmma = read_program(course / "CUDA/15-tensor-cores/00-wmma/main.cu", course)
    assert wmma.options == ["-std=c++14", "-arch=sm_70", "-o", "main"]


def test_a_notebook_line_that_takes_the_architecture_from_python_variables_builds_for_the_gpu_at_hand(tmp_path):
    # a Vietnamese course's notebook reads the GPU's compute capability into `major` and `minor`
    # with numba, then builds with "!nvcc -arch=sm_{major}{minor} ...", which IPython expands
    cells = [{"cell_type": "code", "source": ["major, minor = cuda.get_current_device().compute_capability"]},
             {"cell_type": "code", "source": ["!nvcc -arch=sm_{major}{minor} HW1_P1.cu -o HW1_P1"]}]
    course = write(tmp_path, {"HW1/HW1.ipynb": json.dumps({"cells": cells}),
                              "HW1/HW1_P1.cu": MAIN.replace("return helper()", "return 0")})
    p = read_program(course / "HW1/HW1_P1.cu", course)
    assert p.how == "HW1/HW1.ipynb"
    assert p.options == ["-arch=native", "-o", "HW1_P1"]


def test_a_bash_cell_that_sets_the_architecture_in_a_shell_variable_builds_with_its_value(tmp_path):
    # a Polish course's %%bash cells: "CUDA_SUFF=70 # or 35 for older GPUs", then an nvcc line that
    # names it twice; the shell expands both before nvcc runs, so the tool must too
    cells = [{"cell_type": "code", "source": ["%%bash\n", "CUDA_SUFF=70 # or CUDA_SUFF=35 for older GPUs\n",
                                              "nvcc -gencode arch=compute_${CUDA_SUFF},code=sm_${CUDA_SUFF} "
                                              "./vector_add.cu -o vector_add\n", "./vector_add\n"]}]
    course = write(tmp_path, {"20_vector_add/20_vector_add.ipynb": json.dumps({"cells": cells}),
                              "20_vector_add/vector_add.cu": MAIN.replace("return helper()", "return 0")})
    p = read_program(course / "20_vector_add/vector_add.cu", course)
    assert p.how == "20_vector_add/20_vector_add.ipynb"
    assert p.options == ["-gencode", "arch=compute_70,code=sm_70", "-o", "vector_add"]


def test_a_shell_variable_the_note_never_sets_is_left_as_written(tmp_path):
    course = write(tmp_path, {"lab/README.md": "Build: `nvcc -arch=$ARCH lab.cu -o lab`\n",
                              "lab/lab.cu": MAIN.replace("return helper()", "return 0")})
    p = read_program(course / "lab/lab.cu", course)
    assert p.options[0] == "-arch=$ARCH"


def test_executables_a_cmake_foreach_loop_adds_are_built_as_the_loop_says(tmp_path):
    # a Spanish-language Jetson project: one loop over a set() list adds every matrix product, each
    # separately compiled; the one that calls cuBLAS links it after the loop
    lists = ("set(EXECUTABLES\n    gemm_cublas\n    00_mat_mul\n)\n"
             "foreach(EXE IN LISTS EXECUTABLES)\n    add_executable(${EXE} ${EXE}.cu)\n"
             "    set_target_properties(${EXE} PROPERTIES\n        CUDA_SEPARABLE_COMPILATION ON\n    )\nendforeach()\n"
             "target_link_libraries(gemm_cublas PRIVATE CUDA::cublas CUDA::cudart)\n")
    source = MAIN.replace("return helper()", "return 0")
    course = write(tmp_path, {"04_matmul/CMakeLists.txt": lists, "04_matmul/00_mat_mul.cu": source,
                              "04_matmul/gemm_cublas.cu": source})
    p = read_program(course / "04_matmul/00_mat_mul.cu", course)
    assert (p.how, p.sources, p.options) == ("04_matmul/CMakeLists.txt", ["00_mat_mul.cu"], ["-rdc=true", "-o", "00_mat_mul"])
    p = read_program(course / "04_matmul/gemm_cublas.cu", course)
    assert "-lcublas" in p.options and p.options[-2:] == ["-o", "gemm_cublas"]


def test_a_rule_that_calls_nvcc_by_its_full_path_is_read_with_its_options(tmp_path):
    # a Warsaw lab's Makefile names the toolkit's nvcc in the rule itself and links with g++; no toolkit
    # lives at /usr/local/cuda here, so make used to fail and the lab was built without -O2 -DUNIX
    course = write(tmp_path, {
        "lab1/Makefile": ("all: stencil\n\nstencil: stencil.o\n\tg++ -fPIC -o $@ $< -L /usr/local/cuda/lib64 -lcudart\n\n"
                          "stencil.o: stencil.cu\n\t/usr/local/cuda/bin/nvcc --compiler-options -fno-strict-aliasing \\\n"
                          "          -DUNIX -O2 -o $@ -c $<\n"),
        "lab1/stencil.cu": MAIN.replace("return helper()", "return 0"),
    })
    p = read_program(course / "lab1/stencil.cu", course)
    assert (p.how, p.sources) == ("lab1/Makefile", ["stencil.cu"])
    assert "-DUNIX" in p.options and "-O2" in p.options and p.options[p.options.index("-o") + 1] == "stencil"


def test_a_makefile_that_links_with_the_cray_wrapper_is_read(tmp_path):
    # an HPC centre's makefile compiles with nvcc and links with Cray's C++ wrapper, CC
    course = write(tmp_path, {
        "miniapp/makefile": ("CXX=CC\nCUDA=nvcc\nmain: data.o main.o\n\t$(CXX) -O3 -fopenmp data.o main.o -o main -lcublas\n"
                             "data.o: data.cu\n\t$(CUDA) -O3 -arch=sm_60 -c data.cu\n"
                             "main.o: main.cu\n\t$(CUDA) -O3 -arch=sm_60 -c main.cu\n"),
        "miniapp/data.cu": PIECE,
        "miniapp/main.cu": "int helper();\n" + MAIN,
    })
    p = read_program(course / "miniapp/main.cu", course)
    assert (p.how, p.sources) == ("miniapp/makefile", ["data.cu", "main.cu"])
    assert "-lcublas" in p.options and "-fopenmp" in p.options


def test_a_c_standard_that_gcc_compiles_one_host_file_with_is_left_to_gccs_default(tmp_path):
    # a Russian course's multi-GPU examples (2011): main() in a C99 file compiled by gcc, the kernels
    # by nvcc, linked by gcc; nvcc refuses -std=c99 as its own option, and the timing file beside it,
    # compiled without it, needs POSIX's clock_gettime, which strict C99 hides: gcc's default dialect
    # builds both
    course = write(tmp_path, {
        "serial_cuda/makefile": ("all: serial_cuda.o pattern2d.o\n\tgcc serial_cuda.o pattern2d.o -o serial_cuda -lcudart -lm\n"
                                 "serial_cuda.o: serial_cuda.c\n\tgcc -g -O3 -std=c99 -c $< -o $@\n"
                                 "pattern2d.o: pattern2d.cu\n\tnvcc -g -O3 -c $< -o $@\n"),
        "serial_cuda/serial_cuda.c": "int helper();\n" + MAIN,
        "serial_cuda/pattern2d.cu": PIECE,
    })
    p = read_program(course / "serial_cuda/serial_cuda.c", course)
    assert p.sources == ["serial_cuda.c", "pattern2d.cu"]
    assert "-std=c99" not in p.options and "-O3" in p.options


def test_a_notebooks_nvcc_cell_builds_the_file_an_earlier_cell_wrote(tmp_path):
    # NVIDIA's accelerated-computing course: a cell %%writefile's Sources/NAME.cpp, the next one builds
    # it with "!nvcc ... # comment" or "!nvcc ... && /tmp/a.out"; main() lives in the lesson's header
    import json
    cells = [{"cell_type": "code", "source": ["%%writefile Sources/simple-kernel.cpp\n", "..."]},
             {"cell_type": "code", "source": ["!nvcc --extended-lambda -o /tmp/a.out Sources/simple-kernel.cpp "
                                              "-x cu -arch=native # build executable\n", "!/tmp/a.out\n"]},
             {"cell_type": "code", "source": ["!nvcc -o /tmp/a.out Sources/launch.cpp -x cu && /tmp/a.out"]}]
    course = write(tmp_path, {
        "03.02-Kernels/03.02.01-Kernels.ipynb": json.dumps({"cells": cells}),
        "03.02-Kernels/Sources/ach.h": "void simulate();\nint main() { simulate(); }\n",
        "03.02-Kernels/Sources/simple-kernel.cpp": '#include "ach.h"\nvoid simulate() {}\n',
        "03.02-Kernels/Sources/launch.cpp": MAIN + PIECE,
    })
    p = read_program(course / "03.02-Kernels/Sources/simple-kernel.cpp", course)
    assert p.how == "03.02-Kernels/03.02.01-Kernels.ipynb" and p.left_out == ""
    assert (p.sources, p.options) == (["simple-kernel.cpp"],
                                      ["--extended-lambda", "-o", "/tmp/a.out", "-x", "cu", "-arch=native"])
    p = read_program(course / "03.02-Kernels/Sources/launch.cpp", course)
    assert (p.sources, p.options) == (["launch.cpp"], ["-o", "/tmp/a.out", "-x", "cu"])


def test_options_given_for_a_course_that_builds_in_a_helper_script(tmp_path):
    # the same course builds some programs only from Python (ach.py: nvcc -x cu --extended-lambda FILE)
    course = write(tmp_path, {"03.04/Sources/sync.cpp": MAIN + PIECE, "03.04/Sources/ach.py": "subprocess.run(...)\n"})
    from courses_check import main
    out = tmp_path / "dry.txt"
    import contextlib
    with out.open("w") as f, contextlib.redirect_stdout(f):
        main(["--checkout", str(course), "03.04/Sources/*.cpp", "--options", "03.04/*=-x cu --extended-lambda",
              "--dry-run", "--json", str(tmp_path / "r.json")])
    assert out.read_text() == ("03.04/Sources/sync.cpp: cudalab run -x cu --extended-lambda -o sync sync.cpp"
                               "  [given (--options)]\n")


@pytest.mark.parametrize("code, left_out", [
    ("#include <cuda.h>\nCUdeviceptr p;\n" + MAIN + PIECE, ""),         # its types only: builds and runs
    ("#include <cuda.h>\nint f() { return cuCtxCreate(0, 0, 0); }\n" + MAIN + PIECE, ""),  # the driver API runs too
    ('#include "mpi.h"\n' + MAIN + PIECE, "MPI"),
    ("#include <npp.h>\n" + MAIN + PIECE, "NPP"),
    ('#include "cufile.h"\n' + MAIN + PIECE, "cuFile (GPUDirect Storage: reads a file straight into GPU memory)"),
    ("#include <nvToolsExt.h>\n" + MAIN + PIECE, ""),                               # NVTX 2 builds over NVTX 3
    ("#include <nvtx3/nvToolsExt.h>\n" + MAIN + PIECE, ""),                         # NVTX 3 is headers only
    # cuBLASXt's gemm runs (shim/cublasXt.c); its other routines do not
    ("#include <cublasXt.h>\nint g(cublasXtHandle_t h) { cublasXtCreate(&h); return cublasXtSgemm(h); }\n"
     + MAIN + PIECE, ""),
    ("#include <cublasXt.h>\nint g(cublasXtHandle_t h) { return cublasXtSsyrk(h); }\n" + MAIN + PIECE,
     "cuBLASXt beyond its gemm"),
    ('#ifndef NO_MPI\n#include "mpi.h"\n#endif\n' + MAIN + PIECE, ""),     # built as its readme says, without
])
def test_what_a_program_uses_that_cudalab_does_not_emulate(tmp_path, code, left_out):
    write(tmp_path, {"prog.cu": code, "README.md": "nvcc -DNO_MPI prog.cu -o prog\n" if "NO_MPI" in code else ""})
    found = read_program(tmp_path / "prog.cu", tmp_path).left_out
    assert (left_out in found) if left_out else found == ""


@pytest.mark.parametrize("printed, status", [("Result is correct!\n", "pass"), ("usage: prog N\n", "fail")])
def test_a_program_passes_with_its_success_line_and_not_with_a_warning_that_says_correct(printed, status):
    source = 'printf("Warning: n > 2^24, timing still correct\\n"); printf("Result is correct!\\n");'
    assert judge(0, printed, source, 120)[0] == status
    # a warning alone is not a success line the program owes us
    assert judge(0, "usage: prog N\n", 'printf("Warning: timing results still correct\\n");', 120)[0] == "pass"
    # nor is a Vietnamese homework's complaint about its reference image
    source = 'printf("The shape of the correct output image is invalid\\n");'
    assert judge(0, "Error: 0.000703\n", source, 120)[0] == "pass"


def test_a_note_on_what_is_passed_to_a_kernel_is_no_success_line():
    # a book's edge detector prints "Everything is passed into the kernel" for one of its kernel choices
    source = 'printf("BWKernel:  Everything is passed into the kernel\\n"); printf("done\\n");'
    assert judge(0, "done\n", source, 120)[0] == "pass"
    assert judge(0, "done\n", 'printf("All tests passed\\n");', 120)[0] == "fail"


def test_a_usage_line_that_says_options_can_be_passed_is_no_success_line():
    # a heat-equation homework's usage text: "-g -s -b ... Both options can be passed"
    source = 'printf("\\n\\nBoth options can be passed\\n"); printf("L2Err %g\\n", e);'
    assert judge(0, "L2Err 4.4e-08\n", source, 120)[0] == "pass"


def test_a_quoted_word_in_a_comment_is_no_success_line_the_program_owes():
    # CSC's stencil demo: `// run the basic case once to get the "correct" results`, and it prints only rates
    source = '// run once to get the "correct" results\n/* a "PASS" here too */\nprintf("%g updates/s\\n", r);'
    assert judge(0, "4.6e+06 updates/s\n", source, 120)[0] == "pass"
    assert judge(0, "4.6e+06 updates/s\n", source + '\nputs("Result correct");', 120)[0] == "fail"
    assert judge(0, "done\n", 'printf("see http://x.org // \\"correct\\" later");', 120)[0] == "fail"


def test_a_matrix_named_correct_in_a_debugging_dump_is_no_success_line():
    # CSU's (and NYU's) matmult lab prints its reference matrix as printMatrix(correct, "correct") when
    # verbose, and says nothing when the check passes: silence is its pass
    source = ('if (verbose) { printMatrix(correct, "correct"); printMatrix(M, "result"); }\n'
              'if (errCnt > 0) printf("TEST FAILED: %d errors\\n", errCnt);')
    assert judge(0, "Time: 0.7 (sec)\n", source, 120)[0] == "pass"
    assert judge(0, "TEST FAILED: 3 errors\n", source, 120)[0] == "fail"
    verdict = 'printf("result %s\\n", ok ? "correct" : "wrong");'
    assert judge(0, "result wrong\n", verdict, 120)[0] == "fail"
    assert judge(0, "done\n", 'printf("%s\\n", "correct");', 120)[0] == "fail"


def test_outputs_that_did_not_match_are_a_failure():
    # Stanford CS193G's assignment skeletons print this and exit 0 while the student's kernels are empty
    out = "gpu shift cypher took 0.0 ms\nOutput of CUDA version and normal version didn't match! \n"
    assert judge(0, out, 'printf("done\\n");', 120)[0] == "fail"
    assert judge(0, "Results do not match at 3\n", "", 120)[0] == "fail"
    assert judge(0, "All 1024 results match\n", "", 120)[0] == "pass"


def test_an_output_folder_git_could_not_keep_is_made_before_the_run(tmp_path):
    # Caltech CS 179's n-body project writes ./output/data_N.dat; git keeps no empty folder, so no clone has it
    from courses_check import missing_output_folders
    course = write(tmp_path, {
        "sim.cc": 'int main() { char f[64]; sprintf(f, "./output/data_%d.dat", 1); FILE *o = fopen(f, "w"); }\n',
        "plot.cc": 'int main() { fopen("inputs/a.txt", "r"); /* "build/x" */ }\n',
        "inputs/a.txt": "1 2 3\n",
    })
    p = read_program(course / "sim.cc", course)
    assert missing_output_folders(p, course) == ["output"]
    p = read_program(course / "plot.cc", course)
    assert missing_output_folders(p, course) == []      # inputs/ is there; a comment's path is no path


def test_a_check_that_answers_false_is_a_failure():
    # NVIDIA's DLI exercises end with "All elements were doubled? TRUE" (or FALSE, before the fix)
    source = 'printf("All elements were doubled? %s\\n", areDoubled ? "TRUE" : "FALSE");'
    assert judge(0, "All elements were doubled? FALSE\n", source, 120)[0] == "fail"
    assert judge(0, "All elements were doubled? TRUE\n", source, 120)[0] == "pass"


def test_a_count_of_no_mismatches_is_not_a_failure():
    # the CUDA Handbook's corrBankTC: "SumIT vs baseline: 0 mismatches (maxdiff 0)", as on the H200
    assert judge(0, "SumIT vs baseline: 0 mismatches (maxdiff 0)\n", "", 120)[0] == "pass"
    assert judge(0, "no mismatches\n", "", 120)[0] == "pass"
    assert judge(0, "3 mismatches\n", "", 120)[0] == "fail"
    assert judge(0, "Mismatch at i==4\n", "", 120)[0] == "fail"


def test_a_tiny_mean_error_that_a_program_reports_is_not_a_failure():
    # a Vietnamese course's demos print the mean difference between the device's and the host's
    # float results; the GPU's fused multiply-adds make it about 1e-6 there too
    assert judge(0, "Error between device result and host result: 0.000001\n", "", 120)[0] == "pass"
    assert judge(0, "Error: 2.5e-07\n", "", 120)[0] == "pass"
    assert judge(0, "Error between device result and host result: 0.031250\n", "", 120)[0] == "fail"
    assert judge(0, "Error: 1.5e-02\n", "", 120)[0] == "fail"
    # a Russian course's cuBLAS example says all went well so
    assert judge(0, "Error not occured\n", "", 120)[0] == "pass"


def test_a_count_of_errors_after_failed_is_a_failure_without_a_success_line_to_miss():
    # CSCS's exercises print "passed with 0 errors" or "failed with 65536 errors"; a GPU run is judged
    # without asking for the success line, so the count itself must tell
    assert judge(0, "failed with 65536 errors\n", "", 120)[0] == "fail"
    assert judge(0, "passed with 0 errors\n", "", 120)[0] == "pass"


def test_cudalabs_last_word_is_given_once_when_it_is_the_line_shown():
    said = ("Dot product is : 0\ncudalab: the program was ended by SIGTERM, a signal to stop (from kill, a job's "
            "time limit or the program itself), not a crash.\n")
    assert judge(-15, said, "", 120) == ("fail", "exit code -15: cudalab: the program was ended by SIGTERM, a signal "
                                                 "to stop (from kill, a job's time limit or the program itself), not a crash.")


def test_a_build_note_before_the_output_is_not_taken_for_what_stopped_the_program():
    said = ("cudalab: note: the program calls cuBLAS (cublasCreate_v2) but its build does not link it: ...\n"
            "cudalab: The kernel k was stopped by the watchdog early: it would run far beyond its limit of 120 s. "
            "It had finished 4 of its 65,536 blocks (0.0061%) after 1.1 s: 185 million thread-instructions at 166 "
            "million a second. The whole grid needs about 3.03 trillion thread-instructions: about 5.1 hours on "
            "the emulator.\n")
    assert judge(1, said, "", 120) == ("GPU-sized", "The kernel k was stopped by the watchdog early: it would run far "
                                                    "beyond its limit of 120 s. (it needs about 5.1 hours on the emulator)")


def test_a_program_cudalab_stopped_at_its_cpu_time_limit_is_over_the_limit_not_failing():
    said = ("cudalab: the program used up its CPU-time limit (ulimit -t, 120 s) and was stopped. It had made "
            "590,512 runtime calls, about 1,000 a second (cudaMemcpy/cudaMemcpyAsync 590,510, cudaMalloc(Host) 2)")
    assert judge(247, said, "", 120)[0] == "time"


@pytest.mark.parametrize("estimate, status", [("between 0.0036 s and 0.21 s", "time"), ("about 6.5 s", "time"),
                                              ("about 2.5 minutes", "GPU-sized"), ("between 3.8 s and 3.1 hours", "GPU-sized")])
def test_a_kernel_stopped_by_the_programs_limit_is_gpu_sized_only_if_it_alone_needs_more(estimate, status):
    # the CUDA Handbook's radixSort ran out of CPU time in its 194th launch of a short histogram kernel: the
    # program as a whole is over the limit; sgemm5Wmma's one product needs more than the limit by itself
    said = ("cudalab: The program's CPU-time limit (ulimit -t, 120 s) ran out while kernel hist<4> was running, so the "
            "kernel was stopped, and then the program. It had finished 8 of its 1,500 blocks (0.53%) after 0.1 s: "
            f"140 million thread-instructions at 1.49 billion a second. The whole grid needs about 216 million "
            f"thread-instructions: {estimate} on the emulator.")
    assert judge(247, said, "", 120)[0] == status
    early = ("cudalab: The kernel scan<int> was stopped early: it would run far beyond the 2.8 s left of the "
             f"CPU-time limit (ulimit -t). (it needs {estimate} on the emulator)")
    assert judge(247, early, "", 120)[0] == status
    # (books14: a limit the program's earlier launches used up is named as the program's)
    used_up = ("cudalab: The kernel hs_kernel_global was stopped early: it would run far beyond the 0.0011 s left of "
               "the program's CPU-time limit (ulimit -t, 120 s), which its work before this launch used up. "
               f"(it needs {estimate} on the emulator)")
    assert judge(-9, used_up, "", 120)[0] == status
    # the watchdog's own stop is a grid sized for a GPU whatever the estimate
    assert judge(1, "cudalab: The kernel k ran for more than 10 s and was stopped by the watchdog. It had finished "
                    f"1 of its 9 blocks: {estimate} on the emulator.", "", 120)[0] == "GPU-sized"


@pytest.mark.parametrize("needs, status", [("about 5.7 s", "time"), ("between 0.59 s and 48 s", "time"),
                                            ("about 9.5 minutes", "GPU-sized")])
def test_a_program_stopped_at_its_cpu_limit_in_a_kernel_that_would_fit_is_over_the_limit(needs, status):
    # Fan Zheyong's bank.cu transposes 10^8 elements twenty times, 5.9 s a launch here: its many launches
    # are over the limit, not one kernel too large for a CPU (that one would need more than the 120 s)
    said = ("cudalab: The program's CPU-time limit (ulimit -t, 120 s) ran out while kernel transpose2 was running, "
            "so the kernel was stopped, and then the program. It had finished 30,212 of its 97,969 blocks (31%) "
            f"after 1.9 s: ... The whole grid needs about 4.31 billion thread-instructions: {needs} on the emulator.\n"
            "cudalab: the program used up its CPU-time limit (ulimit -t, 120 s) and was stopped. It had run 18 "
            "kernel launches before it, 106.3 s of the emulator's CPU time in all")
    assert judge(247, said, "", 120)[0] == status


def test_the_gpu_build_gives_a_device_query_back_the_fields_cuda_13_removed(tmp_path):
    # CUDA by Practice's streams lessons stop unless `prop.deviceOverlap`: the staged GPU build (NVIDIA's
    # nvcc 13) gets cudalab's patched driver_types.h and a cudaGetDeviceProperties that fills the field
    from courses_check import stage_gpu
    from cudalab.programs.build import cuda_home
    course = write(tmp_path / "course", {"streams.cu": "int main() { cudaDeviceProp p; return !p.deviceOverlap; }\n"})
    stage_gpu([read_program(course / "streams.cu", course)], course, tmp_path / "stage")
    toolkit = tmp_path / "cuda"                 # the GPU machine's toolkit: its nvcc and headers
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (toolkit / "bin" / "nvcc").chmod(0o755)
    (toolkit / "include").symlink_to(cuda_home() / "include")
    run_gpu = (tmp_path / "stage" / "run_gpu.py").read_text()
    found = {"__file__": str(tmp_path / "stage" / "run_gpu.py")}
    path = sys.path.copy()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", str(toolkit / "bin"))
        exec(run_gpu[:run_gpu.index("def build")], found)        # what run_gpu.py does before building
    sys.path[:] = path
    include, _, forced = found["LEGACY_PROPS"][1:]
    assert "int deviceOverlap;" in (Path(include) / "driver_types.h").read_text()
    wrapper = Path(forced).read_text()
    assert "cudaDeviceGetAttribute(&p->deviceOverlap, cudaDevAttrGpuOverlap, device)" in wrapper
    assert "#define cudaGetDeviceProperties cudalab_legacy_props" in wrapper


def test_the_gpu_runner_records_an_nvcc_message_that_quotes_a_gbk_line(tmp_path):
    # a Chinese Visual Studio course's sources are GBK, and the GPU machine's nvcc quotes the line it
    # stops at: run_gpu.py must record that message as the program's build failure, not stop reading it
    import subprocess
    from courses_check import stage_gpu
    course = write(tmp_path / "course", {"lesson.cu": "int main() { return 0; }\n"})
    stage_gpu([read_program(course / "lesson.cu", course)], course, tmp_path / "stage")
    toolkit = tmp_path / "cuda" / "bin"
    toolkit.mkdir(parents=True)
    (toolkit / "nvcc").write_text("#!/bin/sh\nprintf 'lesson.cu(3): error: \\272\\313\\320\\304\\n' >&2\nexit 2\n")
    (toolkit / "nvcc").chmod(0o755)
    r = subprocess.run([sys.executable, str(tmp_path / "stage" / "run_gpu.py")], capture_output=True, text=True,
                       env={"PATH": f"{toolkit}:/usr/bin:/bin", "OUT": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    recorded = json.loads((tmp_path / "gpu.json").read_text())["course/lesson.cu"]
    assert recorded["code"] == "build" and "lesson.cu(3): error:" in recorded["out"]


def test_a_program_that_prints_only_its_failure_message_passes_when_it_prints_nothing_of_it():
    # Pawsey's vector add stays silent on success and says "Sum is not correct." when its check fails:
    # that message is no success line the program owes us
    source = 'if (bad) { fprintf(stderr, "Sum is not correct.\\n"); return 1; } printf("All good.\\n");'
    assert judge(0, "All good.\n", source, 120)[0] == "pass"
    # a source that does print a success line still owes it
    assert judge(0, "All good.\n", source + ' puts("Result is correct");', 120)[0] == "fail"


def test_an_exercise_with_an_expression_left_blank_is_left_out(tmp_path):
    # "int row = ;  // TODO": the student writes the expression; nvcc stops at the blank as cudalab does
    code = ("__global__ void t(float *a, float *b, int n) {\n    int row = ;\n    int col = ;  // TODO: complete here\n"
            "    b[row] = a[col];\n}\n" + MAIN + PIECE)
    write(tmp_path, {"transpose.cu": code, "solution.cu": code.replace("= ;", "= 0;")})
    assert read_program(tmp_path / "transpose.cu", tmp_path).left_out.startswith(
        "an exercise with blanks for the student ('int row = ;'")
    # comparisons and compound assignments are not blanks, and the solution runs
    assert read_program(tmp_path / "solution.cu", tmp_path).left_out == ""


def test_a_program_linked_with_lcuda_that_calls_only_the_runtime_is_run(tmp_path):
    # a Makefile's CUDA_FLAGS = -O2 -lcudart -lcuda: cudalab links its own libcuda, so nothing is missing
    write(tmp_path, {"README.md": "nvcc -O2 -lcudart -lcuda vadd.cu -o vadd\n",
                     "vadd.cu": "#include <cuda_runtime.h>\nint f() { return cudaDeviceSynchronize(); }\n" + MAIN + PIECE})
    p = read_program(tmp_path / "vadd.cu", tmp_path)
    assert (p.left_out, p.options) == ("", ["-O2", "-lcudart", "-lcuda", "-o", "vadd"])


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_makefile_that_asks_nvidia_smi_for_the_gpu_builds_the_cuda_programs(tmp_path):
    # a tutorial's Makefile builds its CUDA examples only where nvidia-smi answers, for the compute
    # capability it reports; the recorded make must see the GPU machine's build
    course = write(tmp_path, {
        "m1/Makefile": ("HAVE_GPU := $(shell nvidia-smi > /dev/null 2>&1 && echo 1 || echo 0)\n"
                        "ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -dc '0-9')\n"
                        "ifeq ($(HAVE_GPU),1)\nall: build/vadd\nelse\nall:\n\t@echo no GPU\nendif\n"
                        "build/%: %.cu\n\tnvcc -O2 -arch=sm_$(ARCH) $< -o $@\n"),
        "m1/vadd.cu": MAIN + PIECE,
    })
    p = read_program(course / "m1/vadd.cu", course)
    assert (p.how, p.sources, p.options) == ("m1/Makefile", ["vadd.cu"], ["-O2", "-arch=sm_90", "-o", "build/vadd"])


def test_a_notebook_in_another_folder_that_builds_the_program_by_its_path(tmp_path):
    # a workshop keeps its notebooks in material/ and its programs in src/: a cell runs
    # !nvcc -O3 -o ../build/inc/inc-cuda ../src/inc/inc-cuda.cu; the program builds as that, from its folder
    import json
    cells = [{"cell_type": "code", "source": ["!nvcc -O3 -std=c++17 -o ../build/inc/inc-cuda ../src/inc/inc-cuda.cu\n"]},
             {"cell_type": "code", "source": ["!../build/inc/inc-cuda\n"]}]
    course = write(tmp_path, {"material/cuda.ipynb": json.dumps({"cells": cells}),
                              "src/inc/inc-cuda.cu": MAIN + PIECE, "src/inc/other.cu": MAIN + PIECE})
    p = read_program(course / "src/inc/inc-cuda.cu", course)
    assert (p.how, p.folder, p.sources) == ("material/cuda.ipynb", "src/inc", ["inc-cuda.cu"])
    assert p.options == ["-O3", "-std=c++17", "-o", "../../build/inc/inc-cuda"]
    # a file no line names is built the default way
    assert read_program(course / "src/inc/other.cu", course).how.startswith("default")


def test_a_library_call_refused_as_too_large_for_the_cpu_is_gpu_sized():
    # freeCodeCamp's cuBLASXt comparison multiplies 16384-square matrices: cudalab's cuBLAS refuses the
    # product at once with its estimate, and the program stops at its own status check
    said = ("cudalab: cublasSgemm: 1 product of 16384 x 16384 by 16384 x 16384 is 8,796 GFLOP, about 1,759 s of "
            "this CPU, beyond the 120 s a kernel may run here, so cudalab does not compute it (it is GPU-sized) and "
            "returns an error.\nCUBLAS error: 13, line 69\n")
    assert judge(1, said, "", 120)[0] == "GPU-sized"


def test_a_success_line_under_an_ifdef_the_build_leaves_out_is_not_owed():
    # CSCS's 2011 matmul exercises print PASSED only when built with -DCOMPARE_RESULTS, which their
    # compilation line does not give
    from courses_check import built_text
    source = ('printf("%f\\n", c[0]);\n#ifdef COMPARE_RESULTS\nputs(ok ? "PASSED" : "FAILED");\n#else\n'
              'puts("no check");\n#endif\n#if 0\nputs("correct");\n#endif\n')
    assert judge(0, "0.33\nno check\n", built_text(source, ["-o", "matmul"]), 120)[0] == "fail"   # "correct" under #if 0 counts
    source = source.replace("#if 0\nputs(\"correct\");\n#endif\n", "")
    assert judge(0, "0.33\nno check\n", built_text(source, ["-o", "matmul"]), 120)[0] == "pass"
    assert judge(0, "0.33\n", built_text(source, ["-DCOMPARE_RESULTS"]), 120)[0] == "fail"
    assert judge(0, "0.33\n", built_text(source, ["-D", "COMPARE_RESULTS=1"]), 120)[0] == "fail"
    assert judge(0, "0.33\nPASSED\n", built_text("#define COMPARE_RESULTS\n" + source, []), 120)[0] == "pass"


def test_an_exercise_whose_arguments_are_a_question_in_a_comment_is_left_out(tmp_path):
    # Trieste's copies of NVIDIA's labs: "cudaMemcpy( /* FIXME */ );" and "int temp[/* WHAT SIZE? */];"
    write(tmp_path, {"copy.cu": "int main() {\n    cudaMemcpy( /* FIXME */ );\n}\n",
                     "stencil.cu": "__global__ void s() { __shared__ int temp[/* WHAT SIZE? */]; }\nint main() {}\n",
                     "fine.cu": "int main() {\n    cudaMemcpy(d, h, n /* bytes */, cudaMemcpyHostToDevice);\n}\n"})
    assert read_program(tmp_path / "copy.cu", tmp_path).left_out == (
        "an exercise with blanks for the student ('cudaMemcpy( /* FIXME */ );'; nvcc does not build it either)")
    assert "WHAT SIZE?" in read_program(tmp_path / "stencil.cu", tmp_path).left_out
    assert read_program(tmp_path / "fine.cu", tmp_path).left_out == ""


def test_a_cmake_program_linked_to_a_library_target_of_a_subfolder_is_built_with_its_sources(tmp_path):
    # a course project (UPenn CIS 565's stream compaction): the kernels are add_library(scan ...) in
    # scan/CMakeLists.txt, the test program is add_executable(${CMAKE_PROJECT_NAME} src/main.cpp) linked
    # to it; cmake builds all of them into one program named after the project
    course = write(tmp_path, {
        "CMakeLists.txt": ("project(scan_test LANGUAGES CUDA CXX)\nadd_subdirectory(scan)\ninclude_directories(.)\n"
                           "add_executable(${CMAKE_PROJECT_NAME} src/main.cpp)\n"
                           "target_link_libraries(${CMAKE_PROJECT_NAME} scan CUDA::cublas)\n"),
        "scan/CMakeLists.txt": 'set(sources\n  "naive.cu"\n  "cpu.cu"\n)\nadd_library(scan ${sources} naive.h)\n',
        "scan/naive.cu": PIECE, "scan/cpu.cu": "int cpu() { return 0; }\n", "scan/naive.h": "",
        "src/main.cpp": MAIN,
    })
    p = read_program(course / "src/main.cpp", course)
    assert (p.how, p.folder) == ("CMakeLists.txt", ".")
    assert p.sources == ["src/main.cpp", "scan/naive.cu", "scan/cpu.cu"]
    assert p.options == ["-I.", "-lcublas", "-o", "scan_test"]


def test_a_cmake_include_folder_named_by_its_variable_and_separable_compilation_are_read(tmp_path):
    # a workshop's solutions: include_directories(${CMAKE_CURRENT_SOURCE_DIR}) at the top for a shared
    # header, CMAKE_CUDA_SEPARABLE_COMPILATION ON, each exercise an add_executable of its folder
    course = write(tmp_path, {
        "CMakeLists.txt": ("project(w LANGUAGES CUDA CXX)\nset(CMAKE_CUDA_SEPARABLE_COMPILATION ON)\n"
                           "include_directories(${CMAKE_CURRENT_SOURCE_DIR})\nadd_subdirectory(0a_vec_add)\n"),
        "wrapper.hpp": "int helper() { return 0; }\n",
        "0a_vec_add/CMakeLists.txt": "add_executable(0a_vec_add main.cu)\n",
        "0a_vec_add/main.cu": '#include "wrapper.hpp"\n' + MAIN,
    })
    p = read_program(course / "0a_vec_add/main.cu", course)
    assert p.options == ["-rdc=true", "-I..", "-o", "0a_vec_add"]


def test_a_solution_is_built_as_the_makefile_above_builds_the_exercise_of_its_name(tmp_path):
    # the GPU Bootcamp's multi-GPU lab: cuda/Makefile builds jacobi_memcpy.cu with -fopenmp and NVTX;
    # cuda/solutions/jacobi_memcpy.cu is the same program completed, built the same way where it lies
    course = write(tmp_path, {
        "cuda/Makefile": ("NVCC_FLAGS = -Xcompiler -fopenmp -DUSE_NVTX -lnvToolsExt -std=c++14\n"
                          "jacobi_memcpy: jacobi_memcpy.cu\n\tnvcc $(NVCC_FLAGS) jacobi_memcpy.cu -o jacobi_memcpy\n"
                          "jacobi_streams: jacobi_streams.cu\n\tnvcc $(NVCC_FLAGS) jacobi_streams.cu -o jacobi_streams\n"),
        "cuda/jacobi_memcpy.cu": MAIN + PIECE,
        "cuda/jacobi_streams.cu": MAIN + PIECE,
        "cuda/solutions/jacobi_memcpy.cu": MAIN + PIECE,
        "cuda/solutions/jacobi_streams.cu": MAIN + PIECE,
    })
    p = read_program(course / "cuda/solutions/jacobi_memcpy.cu", course)
    assert (p.how, p.folder, p.sources) == ("cuda/Makefile", "cuda/solutions", ["jacobi_memcpy.cu"])
    assert "-fopenmp" in p.options and "-lnvToolsExt" in p.options
    # the second program, which only `make jacobi_streams` builds (the first target is jacobi_memcpy)
    p = read_program(course / "cuda/solutions/jacobi_streams.cu", course)
    assert (p.how, p.sources) == ("cuda/Makefile", ["jacobi_streams.cu"]) and "-fopenmp" in p.options


def test_a_makefile_that_builds_a_helper_from_the_folder_beside_it_gives_both_files(tmp_path):
    # a book's chapter folders share ../common/pgm.cpp: each Makefile compiles it to pgm.o and links
    # it with the chapter's program; make finds the prerequisite only where the folder has its neighbours
    book = write(tmp_path, {
        "ch6/common/pgm.cpp": PIECE,
        "ch6/histogram/Makefile": ("histogram: histogram.cu pgm.o\n\tnvcc -arch=sm_20 histogram.cu pgm.o -o histogram\n"
                                   "pgm.o: ../common/pgm.cpp\n\tg++ -c ../common/pgm.cpp -o ./pgm.o\n"),
        "ch6/histogram/histogram.cu": MAIN,
    })
    p = read_program(book / "ch6/histogram/histogram.cu", book)
    assert (p.how, p.sources, p.options) == ("ch6/histogram/Makefile", ["histogram.cu", "../common/pgm.cpp"],
                                             ["-arch=sm_20", "-o", "histogram"])


def test_a_makefile_that_puts_the_cuda_folder_first_on_its_path_is_still_recorded(tmp_path):
    # "export PATH := /usr/local/cuda/bin:$(PATH)" in a Korean course's Makefiles: the nvcc found first
    # must be the tool's stand-in, not whatever that folder holds
    toolkit = tmp_path / "toolkit/bin"
    toolkit.mkdir(parents=True)
    (toolkit / "nvcc").write_text("#!/bin/sh\nexit 1\n")
    (toolkit / "nvcc").chmod(0o755)
    course = write(tmp_path / "course", {
        "chapter03/Makefile": f"export PATH := {toolkit}:$(PATH)\nall: mat_mul\nmat_mul: mat_mul.cu\n"
                              "\tnvcc -O2 -o mat_mul mat_mul.cu\n",
        "chapter03/mat_mul.cu": MAIN + PIECE,
    })
    p = read_program(course / "chapter03/mat_mul.cu", course)
    assert (p.how, p.options) == ("chapter03/Makefile", ["-O2", "-o", "mat_mul"])


def test_the_build_line_in_the_programs_own_header_comment_is_taken(tmp_path):
    # a book's listings say in their header how to build them; dynamic parallelism needs its -rdc=true
    course = write(tmp_path, {
        "ch6/quicksort.cu": ("/*\n Author : someone\n To build use  : nvcc quicksort.cu -arch=compute_35 -code=sm_35 "
                             "-rdc=true -o quicksort\n */\n" + MAIN + PIECE),
        "ch6/hello.cu": "// nvcc hello.cu -o hello -arch=sm_20\n" + MAIN + PIECE,
        "ch6/other.cu": "// this file is not built with nvcc other_file.cu\n" + MAIN + PIECE,
    })
    p = read_program(course / "ch6/quicksort.cu", course)
    assert (p.how, p.sources) == ("quicksort.cu's own comment", ["quicksort.cu"])
    assert p.options == ["-arch=compute_35", "-code=sm_35", "-rdc=true", "-o", "quicksort"]
    assert read_program(course / "ch6/hello.cu", course).options == ["-o", "hello", "-arch=sm_20"]
    assert read_program(course / "ch6/other.cu", course).how.startswith("default")


def test_a_program_drawn_with_qt_is_left_out_with_the_reason(tmp_path):
    course = write(tmp_path, {"m/main.cpp": "#include <QImage>\n" + MAIN, "m/kernel.cu": PIECE,
                              "m/README.md": "nvcc -rdc=true main.cpp kernel.cu -lQt5Gui -lQt5Core -o mandel\n"})
    assert read_program(course / "m/kernel.cu", course).left_out.startswith("uses Qt")


def test_a_cmake_targets_compile_options_and_libraries_reach_the_build(tmp_path):
    # a Chinese university lab times its GEMM against cuBLAS and an OpenMP loop: without the target's
    # -Xcompiler=-fopenmp and -lcublas it stops at its link (undefined omp_set_num_threads)
    lab = write(tmp_path, {
        "lab10/CMakeLists.txt": ("project(lab10)\nenable_language(CUDA)\nfile(GLOB_RECURSE SOURCES \"src/*.cu\")\n"
                                 "find_package(OpenMP REQUIRED)\nadd_executable(test ${SOURCES})\n"
                                 "target_compile_options(test PUBLIC\n    -O3  # nvcc\n    -Xcompiler=-fopenmp\n)\n"
                                 "target_link_libraries(test\n    -lcublas\n    OpenMP::OpenMP_CXX\n    CUDA::curand\n)\n"),
        "lab10/src/main.cu": MAIN, "lab10/src/gemm.cu": PIECE,
    })
    p = read_program(lab / "lab10/src/main.cu", lab)
    assert p.options == ["-O3", "-Xcompiler=-fopenmp", "-lcublas", "-Xcompiler", "-fopenmp", "-lcurand", "-o", "test"]
    assert p.sources == ["src/gemm.cu", "src/main.cu"]


def test_a_cmake_variable_of_generator_expressions_is_not_given_to_nvcc_as_written(tmp_path):
    # Luxembourg's GEMM project keeps its flags in "set(compile_options $<$<CONFIG:Release>: -O3 >)": CMake
    # evaluates that per configuration; the literal "${compile_options}" would stop nvcc before it starts
    lab = write(tmp_path, {
        "gemm/CMakeLists.txt": ("project(GEMM LANGUAGES CUDA CXX)\nset(compile_options\n  $<$<CONFIG:Release>:\n"
                                "    -O3\n  >\n)\nadd_executable(gpu_gemm src/gemm.cu)\n"
                                "target_compile_options(gpu_gemm PRIVATE ${compile_options} -lineinfo)\n"),
        "gemm/src/gemm.cu": MAIN,
    })
    p = read_program(lab / "gemm/src/gemm.cu", lab)
    assert p.options == ["-lineinfo", "-o", "gpu_gemm"]


def test_a_readme_that_builds_a_cuda_library_first_builds_it_before_the_program_that_links_it(tmp_path):
    # Princeton's GPU primer: the library from one nvcc line, the program that links it from the next
    course = write(tmp_path, {
        "lib/README.md": ("First the library:\n\n    $ nvcc -Xcompiler -fPIC -o libgreet.so -shared greet.cu\n\n"
                          "then the program:\n\n    $ nvcc -I. -o app app.cu -L. -lgreet\n"),
        "lib/greet.cu": PIECE,
        "lib/app.cu": MAIN,
    })
    p = read_program(course / "lib/app.cu", course)
    assert p.options == ["-I.", "-o", "app", "-L.", "-lgreet"]
    assert p.libraries == [["-Xcompiler", "-fPIC", "-o", "libgreet.so", "-shared", "greet.cu"]]


def test_a_cmake_target_that_links_curses_is_built_with_ncurses(tmp_path):
    # a student workshop's game of life: find_package(Curses) and target_link_libraries(... Curses::Curses)
    course = write(tmp_path, {
        "life/CMakeLists.txt": ("find_package(Curses REQUIRED)\nadd_executable(life main.cu kernel.cu)\n"
                                "target_link_libraries(life PRIVATE Curses::Curses m CUDA::cublas stb::stb)\n"),
        "life/main.cu": MAIN,
        "life/kernel.cu": PIECE,
    })
    p = read_program(course / "life/main.cu", course)
    assert p.options == ["-lncurses", "-lm", "-lcublas", "-o", "life"]
    assert p.sources == ["main.cu", "kernel.cu"]


def test_the_programs_a_notebook_writes_with_writefile_are_run_from_its_cells(tmp_path):
    # a Colab workshop keeps each program as a %%writefile cell and builds it with !nvcc in the next
    import json
    from courses_check import with_notebook_files
    cells = [{"cell_type": "code", "source": ["%%writefile vecAdd.cu\n", MAIN, PIECE]},
             {"cell_type": "code", "source": ["!nvcc -O2 -o vecAdd vecAdd.cu\n"]},
             {"cell_type": "code", "source": ["!./vecAdd\n"]}]
    course = write(tmp_path / "course", {"lab1/05_vectorAdd.ipynb": json.dumps({"cells": cells})})
    copy = with_notebook_files(course, tmp_path / "work")
    assert (copy / "lab1/05_vectorAdd/vecAdd.cu").read_text() == MAIN + PIECE
    p = read_program(copy / "lab1/05_vectorAdd/vecAdd.cu", copy)
    assert (p.how, p.options) == ("lab1/05_vectorAdd/05_vectorAdd.ipynb", ["-O2", "-o", "vecAdd"])
    assert not (course / "lab1/05_vectorAdd").exists()          # the checkout stays as it was


def test_a_job_script_below_the_program_builds_it_with_its_second_file_and_gives_its_arguments(tmp_path):
    # an HPC course's homework: "make task1" runs "sbatch ./scripts/task1.sh" from the homework's folder,
    # and the job compiles there, then runs the program at the sizes the assignment asks for
    course = write(tmp_path, {
        "HW06/Makefile": "task1:\n\tsbatch ./scripts/task1.sh\n",
        "HW06/scripts/task1.sh": "#!/usr/bin/env bash\n#SBATCH --gres=gpu:1\nmodule load cuda\n"
                                 "nvcc ./task1.cu matmul.cu -O3 -std=c++17 -o task1\n./task1 1024 64\nrm task1\n",
        "HW06/scripts/task1_sweep.slurm": "nvcc task1.cu matmul.cu -o task1\nfor n in 32 64; do ./task1 $n 64; done\n",
        "HW06/task1.cu": MAIN,
        "HW06/matmul.cu": PIECE,
    })
    p = read_program(course / "HW06/task1.cu", course)
    assert (p.sources, p.how) == (["task1.cu", "matmul.cu"], "HW06/scripts/task1.sh")
    assert author_arguments(p, course) == ["1024", "64"]


def test_a_run_line_that_the_shell_expands_or_redirects_gives_no_arguments(tmp_path):
    course = write(tmp_path, {
        "lab/run.sh": "nvcc sweep.cu -o sweep\n./sweep $N >> out/sweep.txt\n",
        "lab/sweep.cu": "int main() { return 0; }\n",
    })
    p = read_program(course / "lab/sweep.cu", course)
    assert p.how == "lab/run.sh"
    assert author_arguments(p, course) == []


def test_the_gpu_build_drops_every_spelling_of_the_programs_own_architecture():
    # a lecture's Makefile: --gpu-architecture=compute_75 --gpu-code=sm_75, which nvcc refuses beside -arch=native
    words = ["-O3", "-Icuda_helper", "--gpu-architecture=compute_75", "--gpu-code=sm_75", "-o", "transpose",
             "-gencode", "arch=compute_60,code=sm_60", "-arch", "sm_20", "-lineinfo"]
    assert gpu_options(words) == ["-O3", "-Icuda_helper", "-lineinfo"]

def test_the_gpu_build_drops_a_host_compiler_folder_no_machine_here_has():
    # CSU's CS475 Makefiles build with --compiler-bindir /usr/local/gcc-6.4.0/bin, their lab's own gcc
    words = ["-O3", "--compiler-bindir", "/usr/local/gcc-6.4.0/bin", "-std=c++11", "-ccbin=/opt/none/g++", "x.cu"]
    assert gpu_options(words) == ["-O3", "-std=c++11", "x.cu"]
    assert gpu_options(["-ccbin", "g++", "x.cu"]) == ["-ccbin", "g++", "x.cu"]


def test_a_makefiles_run_target_gives_the_arguments_its_author_runs_the_program_with(tmp_path):
    # an HPC centre's multi-GPU exercise: "make run" runs the Jacobi solver on 2 GPUs; another folder's run target
    # submits the program to the batch system with no arguments
    course = write(tmp_path, {
        "jacobi/Makefile": "NVCC = nvcc\nJACOBI_CUDA = jacobi_cuda\n$(JACOBI_CUDA): main.cu\n\t$(NVCC) main.cu -o $@\n"
                           "run: $(JACOBI_CUDA)\n\t./$(JACOBI_CUDA) 2\n",
        "jacobi/main.cu": "int main() { return 0; }\n",
        "scale/Makefile": "scale: scale.cu\n\tnvcc -o scale scale.cu\nrun: scale\n\tbsub -I -R \"rusage[ngpus_shared=1]\" ./scale\n",
        "scale/scale.cu": "int main() { return 0; }\n",
    })
    jacobi, scale = read_program(course / "jacobi/main.cu", course), read_program(course / "scale/scale.cu", course)
    assert (jacobi.how, author_arguments(jacobi, course)) == ("jacobi/Makefile", ["2"])
    assert (scale.how, author_arguments(scale, course)) == ("scale/Makefile", [])


VCXPROJ = """<?xml version="1.0" encoding="utf-8"?>
<Project DefaultTargets="Build" ToolsVersion="15.0" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <ItemDefinitionGroup Condition="'$(Configuration)|$(Platform)'=='Debug|x64'">
    <Link><AdditionalDependencies>cublas.lib;cudart_static.lib;kernel32.lib;%(AdditionalDependencies)</AdditionalDependencies></Link>
    <CudaCompile>
      <GenerateRelocatableDeviceCode>true</GenerateRelocatableDeviceCode>
      <AdditionalOptions>--extended-lambda %(AdditionalOptions)</AdditionalOptions>
    </CudaCompile>
  </ItemDefinitionGroup>
  <ItemGroup>
    <CudaCompile Include="quicksort.cu" />
    <CudaCompile Include="partition.cu" />
    <CudaCompile Include="old_attempt.cu">
      <ExcludedFromBuild Condition="'$(Configuration)|$(Platform)'=='Debug|x64'">true</ExcludedFromBuild>
    </CudaCompile>
  </ItemGroup>
</Project>
"""


def test_a_visual_studio_projects_files_and_nvcc_settings_build_the_program(tmp_path):
    # a Windows student's lab: kernels launching kernels need the project's relocatable device code
    lab = write(tmp_path, {"lab6/cuda-lab6.vcxproj": VCXPROJ, "lab6/quicksort.cu": MAIN,
                           "lab6/partition.cu": PIECE, "lab6/old_attempt.cu": PIECE})
    p = read_program(lab / "lab6/quicksort.cu", lab)
    assert p.sources == ["quicksort.cu", "partition.cu"]          # the excluded file stays out
    assert p.options == ["-rdc=true", "--extended-lambda", "-lcublas", "-o", "quicksort"]
    assert (p.folder, p.how) == ("lab6", "cuda-lab6.vcxproj")


def test_a_makefile_that_runs_its_gpu_version_in_a_target_of_its_own_gives_those_arguments(tmp_path):
    # a locality lab with a CPU and a GPU build: `make run_gpu` runs the GPU program at the lab's sizes
    course = write(tmp_path, {
        "mmm/Makefile": "EXEC_GPU=mmm-gpu\nSRC_GPU=main-gpu.cu\ndefault: compile_gpu run_gpu\n"
                        "compile_gpu: $(EXEC_GPU)\n$(EXEC_GPU): $(SRC_GPU)\n\tnvcc -O3 -o $(EXEC_GPU) $(SRC_GPU)\n"
                        "run_gpu: $(EXEC_GPU)\n\t./$(EXEC_GPU) 2048 4096 2048\n",
        "mmm/main-gpu.cu": "int main() { return 0; }\n",
    })
    p = read_program(course / "mmm/main-gpu.cu", course)
    assert (p.how, author_arguments(p, course)) == ("mmm/Makefile", ["2048", "4096", "2048"])


def test_a_readme_that_runs_a_program_it_never_builds_gives_its_arguments_to_the_default_build(tmp_path):
    # a lab text that shows how to build the first exercise only, then runs the second on the cluster
    course = write(tmp_path, {
        "lab_1/README.md": "Build it:\n\n    nvcc -arch=sm_30 ex1.cu -o ex1.out\n\nThen, for exercise 2:\n\n"
                           "    srun -n 1 ./ex2.out 2.0\n",
        "lab_1/C/ex1.cu": "int main() { return 0; }\n",
        "lab_1/C/ex2.cu": "int main(int argc, char **argv) { return argc == 2 ? 0 : 1; }\n",
    })
    p = read_program(course / "lab_1/C/ex2.cu", course)
    assert p.how.startswith("default") and author_arguments(p, course) == ["2.0"]


def test_a_lab_makefile_that_includes_the_sdks_rules_two_folders_up_is_read(tmp_path):
    # an NVIDIA SDK-style course tree: labs/src/lab1/Makefile names its files and includes
    # ../../common/common.mk, which holds the compile and link rules
    course = write(tmp_path, {
        "labs/common/common.mk": "OBJS := $(CUFILES:%.cu=%.o) $(CCFILES:%.cpp=%.o)\n"
                                 "$(EXECUTABLE): $(OBJS)\n\tg++ -o $@ $(OBJS) -lcudart\n"
                                 "%.o: %.cu\n\tnvcc -I../../common/inc -c $< -o $@\n"
                                 "%.o: %.cpp\n\tg++ -I../../common/inc -c $< -o $@\n",
        "labs/common/inc/util.h": "",
        "labs/src/lab1/Makefile": "EXECUTABLE := lab1\nCUFILES := matrixmul.cu\nCCFILES := matrixmul_gold.cpp\n"
                                  "include ../../common/common.mk\n",
        "labs/src/lab1/matrixmul.cu": MAIN,
        "labs/src/lab1/matrixmul_gold.cpp": PIECE,
    })
    p = read_program(course / "labs/src/lab1/matrixmul.cu", course)
    assert p.how == "labs/src/lab1/Makefile"
    assert sorted(p.sources) == ["matrixmul.cu", "matrixmul_gold.cpp"] and "-I../../common/inc" in p.options


def test_a_launch_shape_left_as_a_question_for_the_student_is_left_out(tmp_path):
    # a lecture's fill-in copy of its transpose: "gDim.x = ;//?" is for the student to answer
    code = "int main() {\n    dim3 gDim;\n    gDim.x = ;//?\n    gDim.y = ;//?\n    return 0;\n}\n"
    write(tmp_path, {"transposeFillin.cu": code})
    assert read_program(tmp_path / "transposeFillin.cu", tmp_path).left_out.startswith(
        "an exercise with blanks for the student ('gDim.x = ;'")


def test_a_library_that_the_courses_own_makefile_archives_is_built_before_the_lab_that_links_it(tmp_path):
    # an SDK-style course: each lab links -L../../lib -lcutil, the archive that common/Makefile makes from the
    # helper sources the course ships (its top Makefile makes it too, with everything else, by make -C common)
    course = write(tmp_path, {
        "labs/Makefile": "all:\n\t$(MAKE) -C common\n",
        "labs/common/Makefile": "../lib/libcutil.a: src/cutil.o\n\tmkdir -p ../lib\n\tar rucv ../lib/libcutil.a src/cutil.o\n"
                                "src/cutil.o: src/cutil.cpp\n\tg++ -c src/cutil.cpp -o src/cutil.o\n",
        "labs/common/src/cutil.cpp": PIECE,
        "labs/src/lab1/Makefile": "lab1: main.cu\n\tnvcc -o lab1 main.cu -L../../lib -lcutil -lcudart -lm\n",
        "labs/src/lab1/main.cu": MAIN,
    })
    p = read_program(course / "labs/src/lab1/main.cu", course)
    assert p.host_libraries == ["labs/common"]
    assert "-lcutil" in p.options and p.sources == ["main.cu"]


def test_an_sdk_project_makefile_without_the_sdks_rules_builds_the_files_it_names(tmp_path):
    # a lab copied out of the GPU Computing SDK's tree: its Makefile names the program and its files, and
    # includes ../../common/common.mk, which the course does not ship, so make cannot run it
    course = write(tmp_path, {
        "labs/lab2-sol/Makefile": "EXECUTABLE\t:= vector_reduction \nCUFILES\t\t:= vector_reduction.cu\n"
                                  "CCFILES\t\t:= \\\n\tvector_reduction_gold.cpp\n\ninclude ../../common/common.mk\n",
        "labs/lab2-sol/vector_reduction.cu": MAIN,
        "labs/lab2-sol/vector_reduction_gold.cpp": PIECE,
        "labs/lab2-sol/vector_reduction_kernel.cu": "__global__ void k() {}\n",
    })
    p = read_program(course / "labs/lab2-sol/vector_reduction.cu", course)
    assert p.how == "labs/lab2-sol/Makefile"
    assert p.options == ["-o", "vector_reduction"] and p.sources == ["vector_reduction.cu", "vector_reduction_gold.cpp"]


def test_the_text_of_cuda_success_printed_after_a_launch_is_not_a_failure():
    # a lab prints cudaGetErrorString(cudaGetLastError()) after its kernel: "error: no error" on a good run
    assert judge(0, " -- Waiting for Kernel to complete\n\nerror: no error\n -- Kernel complete\nTest PASSED\n",
                 'printf("Test %s\\n", "PASSED");', 120)[0] == "pass"
    assert judge(0, "error: invalid configuration argument\nTest PASSED\n", "", 120)[0] == "fail"


def test_a_readme_beside_a_makefile_that_only_builds_gives_the_example_run_not_the_usage(tmp_path):
    # a student's project: the Makefile builds, README.txt shows the usage and then an example
    course = write(tmp_path, {
        "p7/Makefile": "blur_filter: blur_filter.cu\n\tnvcc -o blur_filter blur_filter.cu\n",
        "p7/README.txt": "To run the code:\n\t$ ./blur_filter {size}\n\nFor example:\n\t$ ./blur_filter 4096\n",
        "p7/blur_filter.cu": "int main() { return 0; }\n",
    })
    p = read_program(course / "p7/blur_filter.cu", course)
    assert (p.how, author_arguments(p, course)) == ("p7/Makefile", ["4096"])


def test_a_program_that_prints_without_end_is_judged_from_the_first_and_last_of_its_output(tmp_path):
    # a homework starter whose loop never ends prints a line a turn until the limit ends it: gigabytes the
    # tool must not hold in memory to find its verdict
    import samples_check
    script = tmp_path / "chatty.py"
    script.write_text("import sys\nsys.stdout.write('Period 4 ioc: 0.9\\n' * 300000)\nprint('the end')\n")
    code, out, _ = samples_check.run_limited([sys.executable, str(script)], tmp_path, None, None, 60)
    assert code == 0 and out.startswith("Period 4 ioc: 0.9\n") and out.endswith("the end\n")
    assert "bytes of output left out" in out and len(out) < 2 * samples_check.OUTPUT_KEPT + 200


def test_a_visual_studio_folders_timer_source_is_built_with_the_program_as_its_project_lists_it(tmp_path):
    # a textbook's chapter folder: the program with void main, its timer's header and source beside it, and
    # a lecture folder that finds the same timer in a shared Common folder through the course's include path
    book = write(tmp_path, {
        "Chap3/vecAdd/vecAdd.cu": '#include "timer.h"\nvoid main(void) { tick(); }\n',
        "Chap3/vecAdd/timer.h": "void tick();\n",
        "Chap3/vecAdd/timer.cpp": "void tick() {}\n",
        "Lecture3/VectorSum/VectorSum.cu": '#include "timer.h"\n#include "helper.h"\nint main() { tick(); }\n',
        "Common/timer.h": "void tick();\n",
        "Common/timer.cpp": "void tick() {}\n",
    })
    chapter = read_program(book / "Chap3/vecAdd/vecAdd.cu", book)
    assert chapter.left_out == ""                  # void main is a program, as Visual Studio builds it
    assert project_companions(chapter, book) == ["timer.cpp"]
    lecture = read_program(book / "Lecture3/VectorSum/VectorSum.cu", book)
    lecture.options = ["-I../../Common", *lecture.options]
    assert project_companions(lecture, book) == ["../../Common/timer.cpp"]    # helper.h has no source: none
    # a program whose build line comes from its course names its files itself: nothing is added
    made = write(tmp_path / "made", {"x/Makefile": "all:\n\tnvcc -o x x.cu\n", "x/x.cu": '#include "timer.h"\nint main() { tick(); }\n',
                                     "x/timer.h": "void tick();\n", "x/timer.cpp": "void tick() {}\n"})
    assert project_companions(read_program(made / "x/x.cu", made), made) == []


def test_a_build_comment_with_no_space_after_the_slashes_is_the_authors_build(tmp_path):
    # "//nvcc -rdc=true x.cu -o x -lcudadevrt" heads a dynamic-parallelism listing: without -rdc=true nvcc
    # refuses its device-side launch, so the comment is the build, however it is spaced
    book = write(tmp_path, {
        "ch3/nested.cu": "//nvcc -rdc=true nested.cu -o nested -lcudadevrt\nint main() { return 0; }\n",
        "ch3/block.cu": "/*nvcc -O2 block.cu -o block*/\nint main() { return 0; }\n",
    })
    nested = read_program(book / "ch3/nested.cu", book)
    assert (nested.how, nested.options) == ("nested.cu's own comment", ["-rdc=true", "-o", "nested", "-lcudadevrt"])
    block = read_program(book / "ch3/block.cu", book)
    assert (block.how, block.options) == ("block.cu's own comment", ["-O2", "-o", "block"])


def test_build_and_run_lines_in_backticks_are_read_as_a_reader_types_them(tmp_path):
    # a lab sheet in Markdown quotes its commands: "Compile with `nvcc -O3 saxpy.cu -o saxpy` and run
    # `./saxpy 1048576`"; a source's comment may quote its build the same way
    course = write(tmp_path, {
        "lab2/README.md": "Compile with `nvcc -O3 saxpy.cu -o saxpy` and run `./saxpy 1048576`.\n",
        "lab2/saxpy.cu": "int main() { return 0; }\n",
        "lab3/stencil.cu": "// Build: `nvcc -arch=sm_70 -o stencil stencil.cu`, then run it.\nint main() { return 0; }\n",
    })
    saxpy = read_program(course / "lab2/saxpy.cu", course)
    assert (saxpy.how, saxpy.options, author_arguments(saxpy, course)) == ("lab2/README.md", ["-O3", "-o", "saxpy"],
                                                                         ["1048576"])
    stencil = read_program(course / "lab3/stencil.cu", course)
    assert (stencil.how, stencil.options) == ("stencil.cu's own comment", ["-arch=sm_70", "-o", "stencil"])


def test_a_kernel_chosen_by_the_environment_runs_as_the_authors_job_script_first_runs_it(tmp_path):
    # NTUA's matrix-multiply lab: the Makefile only builds dmm_main; the program reads GPU_KERNEL with getenv,
    # and a PBS script kept in results/ loops over kernels and sizes: its first turn is the author's run
    course = write(tmp_path, {
        "cuda/Makefile": "dmm_main: dmm_main.cu\n\tnvcc -O3 -o dmm_main dmm_main.cu\n",
        "cuda/dmm_main.cu": 'int main() { return getenv("GPU_KERNEL") == 0; }\n',
        "results/perf/dmm.sh": "#!/bin/bash\n#PBS -l nodes=1:cuda\ngpu_kernels=\"1 2\"\nsizes=\"256 512\"\n"
                               "gpu_prog=\"./dmm_main\"\nfor i in $gpu_kernels; do\n  for m in $sizes; do\n"
                               "    GPU_KERNEL=$i $gpu_prog $m $m $m\n  done\ndone\n",
    })
    p = read_program(course / "cuda/dmm_main.cu", course)
    assert p.how == "cuda/Makefile"
    assert author_run(p, course) == (["256", "256", "256"], {"GPU_KERNEL": "1"})
    # a readme's run line sets the variable the same way
    write(course, {"cuda/README.md": "Run the tiled kernel:\n\n    $ GPU_KERNEL=2 ./dmm_main 1024 1024 1024\n"})
    assert author_run(p, course) == (["1024", "1024", "1024"], {"GPU_KERNEL": "2"})
    # nvcc's default name says nothing of which program a script runs: "./a.out 64" elsewhere is no one's run
    write(course, {"other/Makefile": "all: sum.cu\n\tnvcc -o a.out sum.cu\n", "other/sum.cu": MAIN,
                   "results/other.sh": "for n in 64 128; do ./a.out $n; done\n"})
    assert author_run(read_program(course / "other/sum.cu", course), course) == ([], {})


def test_a_build_script_that_loops_over_sizes_builds_the_program_as_its_first_turn_does(tmp_path):
    # a Warsaw lab's timing script rebuilds the program for each length: "nvcc -DLEN=$i -o task2 task2.cu"
    # in "for i in 32 64 96 ...": the first turn's -DLEN=32, never the literal "$i"
    course = write(tmp_path, {
        "lab5/conduct3.sh": "#!/bin/bash\nfor i in 32 64 96 ; do\n    nvcc -DLEN=$i -o task2 task2.cu\n"
                            "    { time ./task2; } 2>>result\ndone\n",
        "lab5/task2.cu": "int main() { return LEN == 32 ? 0 : 1; }\n",
    })
    p = read_program(course / "lab5/task2.cu", course)
    assert (p.how, p.options) == ("lab5/conduct3.sh", ["-DLEN=32", "-o", "task2"])


def test_an_allocation_beyond_the_emulated_device_is_gpu_sized_even_mid_line():
    # a benchmark table prints each size before it allocates: "1000000000" and no newline, then asks
    # for 4 GB twice; cudalab's message lands on the same line, and the program stops at its next check
    out = ("sz\t1\t2\n100000000\t6.947\t4.118\n1000000000cudalab: out of device memory: asked for 4,000,000,000 "
           "bytes, but the largest allocation that fits in the emulated device's 4,294,967,296 bytes is now "
           "294,964,736 bytes.\n\"cudaGetLastError()\" at 70 in driver.cu\n\treturned 2\n-> out of memory\n")
    status, _ = judge(1, out, 'int main() { printf("sz"); }', 120)
    assert status == "GPU-sized"


def test_a_lab_that_fills_root_histograms_is_left_out_with_the_reason(tmp_path):
    # a particle-physics CUDA course (2012) draws its results with CERN's ROOT: its headers and -lCore -lHist
    # are not on this machine, and a build error would read as cudalab's
    course = write(tmp_path, {
        "lab7/Makefile": "lab7a: lab7a.cu\n\tnvcc -arch=sm_20 -I$(ROOTSYS)/include lab7a.cu -lCore -lHist -o lab7a\n",
        "lab7/lab7a.cu": '#include "TROOT.h"\n#include "TH1F.h"\nint main() { return 0; }\n',
    })
    assert read_program(course / "lab7/lab7a.cu", course).left_out.startswith("uses ROOT")


def test_a_program_with_no_run_line_runs_with_the_example_its_usage_message_gives(tmp_path):
    # Luxembourg's demos take three sizes and print "example: ./grid_min 1000000000 256 256" without them;
    # nothing else in the course says how they run
    course = write(tmp_path, {
        "demo/grid_min.cu": ('int main(int argc, char** argv) {\n  if (argc != 4) {\n'
                             '    std::cout << "usage: " << argv[0] << " <vector size> <threads> <blocks>" << std::endl;\n'
                             '    std::cout << "example: " << argv[0] << " 1000000000 256 256" << std::endl;\n'
                             '    return 1;\n  }\n}\n'),
        "demo/scan.cu": ('int main(int argc, char** argv) {\n  if (argc < 2) { printf("Example: %s 1024\\n", argv[0]); '
                         'return 1; }\n}\n'),
    })
    assert author_run(read_program(course / "demo/grid_min.cu", course), course) == (["1000000000", "256", "256"], {})
    assert author_run(read_program(course / "demo/scan.cu", course), course) == (["1024"], {})


def test_a_script_that_gives_the_sizes_a_programs_error_lines_demand_wins_over_a_bare_makefile(tmp_path):
    # Warsaw's lab 4: the Makefile builds task2_1.cu with no -D at all, which stops at "#error THREADS is not
    # defined"; the timing script beside it builds it as its author ran it
    course = write(tmp_path, {
        "lab4/Makefile": "task2_1: task2_1.cu\n\tnvcc -o task2_1 task2_1.cu\n",
        "lab4/conduct2.sh": "for i in 100 1000; do\n    nvcc -DLEN=$i -DBLOCKS=2 -DTHREADS=10 -o task2_1 task2_1.cu\n"
                            "    ./task2_1\ndone\n",
        "lab4/task2_1.cu": "#ifndef THREADS\n#error THREADS is not defined\n#endif\n#ifndef BLOCKS\n#error BLOCKS is not"
                           " defined\n#endif\nint main() { return 0; }\n",
        "lab4/task1_1.cu": "int main() { return 0; }\n",
    })
    p = read_program(course / "lab4/task2_1.cu", course)
    assert (p.how, p.options) == ("lab4/conduct2.sh", ["-DLEN=100", "-DBLOCKS=2", "-DTHREADS=10", "-o", "task2_1"])
    # a program that needs nothing from the script keeps its Makefile's build, and so does one that
    # defines the macro itself above the check (lab 5's "#define LEN 8192", then "#ifndef LEN / #error")
    write(course, {"lab4/Makefile": "task1_1: task1_1.cu\n\tnvcc -o task1_1 task1_1.cu\n",
                   "lab4/conduct1.sh": "for i in 32 64; do nvcc -DLEN=$i -o task1_1 task1_1.cu; done\n",
                   "lab4/task1_1.cu": "#define LEN 8192\n#ifndef LEN\n#error LEN is not defined\n#endif\nint main() {}\n"})
    assert read_program(course / "lab4/task1_1.cu", course).how == "lab4/Makefile"


def test_a_library_the_top_cmakelists_adds_beside_the_programs_joins_their_build(tmp_path):
    # a 2010 workshop's layout: the top CMakeLists.txt adds cutil/ and src/; src/matrixMul's target links
    # "cutil", the project's own library, whose sources cmake would build first: one nvcc build of all of them
    course = write(tmp_path, {
        "CMakeLists.txt": "project(workshop)\nadd_subdirectory(cutil)\nadd_subdirectory(src)\n",
        "cutil/CMakeLists.txt": "ADD_LIBRARY (cutil\n  src/cutil.cpp\n  src/stopwatch.cpp\n)\n",
        "cutil/src/cutil.cpp": PIECE, "cutil/src/stopwatch.cpp": "int stopwatch() { return 0; }\n",
        "src/CMakeLists.txt": "add_subdirectory(matrixMul)\n",
        "src/matrixMul/CMakeLists.txt": ("CUDA_ADD_EXECUTABLE (matrixMul\n  matrixMul.cu\n)\n"
                                         "TARGET_LINK_LIBRARIES (matrixMul\n  cutil\n  ${CUDA_CUBLAS_LIBRARIES}\n)\n"),
        "src/matrixMul/matrixMul.cu": MAIN,
    })
    p = read_program(course / "src/matrixMul/matrixMul.cu", course)
    assert p.sources == ["matrixMul.cu", "../../cutil/src/cutil.cpp", "../../cutil/src/stopwatch.cpp"]
    assert "-lcutil" not in p.options and "-lcublas" in p.options      # (FindCUDA's ${CUDA_CUBLAS_LIBRARIES})


def test_a_static_librarys_drawing_and_duplicate_objects_stay_out_of_a_program_that_needs_neither(tmp_path):
    # the same workshop's shrutil library holds rendercheckGL.cpp (its header includes <GL/glew.h>) and a second
    # cmd_arg_reader.cpp; a static library gives the linker only the members a program needs, cutil's first
    course = write(tmp_path, {
        "CMakeLists.txt": "add_subdirectory(cutil)\nadd_subdirectory(shrutil)\nadd_subdirectory(src)\n",
        "cutil/CMakeLists.txt": "ADD_LIBRARY (cutil src/cutil.cpp src/cmd_arg_reader.cpp)\n",
        "cutil/src/cutil.cpp": PIECE, "cutil/src/cmd_arg_reader.cpp": "int reader() { return 0; }\n",
        "shrutil/CMakeLists.txt": "ADD_LIBRARY (shrutil src/shrUtils.cpp src/rendercheckGL.cpp src/cmd_arg_reader.cpp)\n",
        "shrutil/src/shrUtils.cpp": "int shr() { return 0; }\n",
        "shrutil/src/rendercheckGL.cpp": '#include "rendercheckGL.h"\nint check() { return 0; }\n',
        "shrutil/inc/rendercheckGL.h": "#include <GL/glew.h>\n",
        "shrutil/src/cmd_arg_reader.cpp": "int reader() { return 0; }\n",
        "src/quadFloat/CMakeLists.txt": "CUDA_ADD_EXECUTABLE (quadFloat quadFloat.cu)\n"
                                        "TARGET_LINK_LIBRARIES (quadFloat cutil shrutil)\n",
        "src/quadFloat/quadFloat.cu": MAIN,
    })
    p = read_program(course / "src/quadFloat/quadFloat.cu", course)
    assert p.sources == ["quadFloat.cu", "../../cutil/src/cutil.cpp", "../../cutil/src/cmd_arg_reader.cpp",
                         "../../shrutil/src/shrUtils.cpp"]


def test_an_exercise_whose_calls_are_left_open_over_blank_lines_is_left_out_as_a_blank(tmp_path):
    # UCL's CUDA week: "// HANDSON 1.1 Allocate the memory for the array on the device" over "myCudaCheck(" and
    # ");" with empty lines between, which nvcc refuses; its solution fills them in
    course = write(tmp_path, {
        "intro/intro.cu": ("#define myCudaCheck(x) (x)\nint main() {\n  float* d;\n  // HANDSON 1.1 Allocate the memory\n"
                           "  myCudaCheck(\n\n             );\n  return 0;\n}\n"),
        "intro/solution/intro.cu": ("#define myCudaCheck(x) (x)\nvoid sync();\nint main() {\n  float* d;\n"
                                    "  myCudaCheck(cudaMalloc(&d, 4));\n  sync();\n  return 0;\n}\n"),
    })
    assert read_program(course / "intro/intro.cu", course).left_out.startswith("an exercise with blanks")
    assert read_program(course / "intro/solution/intro.cu", course).left_out == ""


def test_a_build_that_hands_nvcc_a_header_reports_cudalabs_one_line_not_a_traceback(tmp_path):
    # Warsaw's lab 6 Makefile passes "reduce.h limit.h" to nvcc with its sources: nvcc and cudalab both refuse,
    # and the table's reason is that sentence, where it was the last line of a Python traceback
    import subprocess
    from samples_check import _BUILD
    write(tmp_path, {"reduce.h": "int reduce();\n", "main.cu": MAIN})
    r = subprocess.run([sys.executable, "-c", _BUILD, "reduce.h", "-o", "task1", "main.cu"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().startswith("don't know what to do with 'reduce.h'")


def test_a_cmake_include_folder_under_a_folder_with_a_space_in_its_name_stays_one_path(tmp_path):
    # a student's assignment folders are "Assignment III", "Assignment IV": the include folder that
    # ${CMAKE_SOURCE_DIR} names lies under a name with a space, and must reach nvcc as one -I
    course = write(tmp_path, {
        "Assignment III/CMakeLists.txt": ("project(a3 CUDA CXX)\ninclude_directories(${CMAKE_SOURCE_DIR}/ex_2/include)\n"
                                          "add_executable(exercise1 ex_1/histogram.cu)\n"),
        "Assignment III/ex_2/include/helper.h": PIECE,
        "Assignment III/ex_1/histogram.cu": '#include "helper.h"\n' + MAIN,
    })
    p = read_program(course / "Assignment III/ex_1/histogram.cu", course)
    assert p.options == ["-Iex_2/include", "-o", "exercise1"]
    assert p.folder == "Assignment III"


def test_a_notebook_that_runs_the_program_by_the_path_it_built_it_to_gives_its_arguments(tmp_path):
    # a summer school's notebook, at the top of the checkout, builds each exercise into its folder and
    # runs it there by path: the 512 of "./matrix_multiplication/matrix_multiply 512" is the program's size
    import json
    cells = [{"cell_type": "code", "source": ["!nvcc -arch=sm_80 -o matrix_multiplication/matrix_multiply "
                                              "matrix_multiplication/matrix_multiply.cu\n"]},
             {"cell_type": "code", "source": ["!./matrix_multiplication/matrix_multiply 512\n"]}]
    course = write(tmp_path, {"exercises.ipynb": json.dumps({"cells": cells}),
                              "matrix_multiplication/matrix_multiply.cu": MAIN + PIECE})
    p = read_program(course / "matrix_multiplication/matrix_multiply.cu", course)
    assert p.how == "exercises.ipynb"
    assert author_arguments(p, course) == ["512"]


def test_a_solution_beside_the_exercise_its_makefile_builds_is_built_with_that_line(tmp_path):
    # a bootcamp's lab folder: the Makefile builds jacobi.cu with OpenMP and NVTX; jacobi_solution.cu and
    # jacobi_orig.cu lie beside it and need the same flags to link
    course = write(tmp_path, {
        "lab/Makefile": ("NVCC_FLAGS = -Xcompiler -fopenmp -DUSE_NVTX -lnvToolsExt -std=c++14\n"
                         "jacobi: Makefile jacobi.cu\n\tnvcc $(NVCC_FLAGS) jacobi.cu -o jacobi\n"),
        "lab/jacobi.cu": MAIN + PIECE,
        "lab/jacobi_solution.cu": MAIN + PIECE,
        "lab/jacobi_orig.cu": MAIN + PIECE,
        "lab/other.cu": MAIN + PIECE,
    })
    for name in ("jacobi_solution.cu", "jacobi_orig.cu"):
        p = read_program(course / "lab" / name, course)
        assert (p.how, p.sources) == ("lab/Makefile", [name])
        assert "-fopenmp" in p.options and "-lnvToolsExt" in p.options
    # a file that is no version of a built exercise keeps nvcc's default
    assert read_program(course / "lab/other.cu", course).how.startswith("default")


def test_a_header_only_interface_library_a_cmake_program_links_gives_its_include_folder(tmp_path):
    # a PMPP reader's book code: utils/ is add_library(utils INTERFACE) with its folder as the include
    # directory, and each chapter's benchmark links it; cmake then compiles with -I utils, it links nothing
    course = write(tmp_path, {
        "CMakeLists.txt": "project(book LANGUAGES CXX CUDA)\nadd_subdirectory(utils)\nadd_subdirectory(ch10)\n",
        "utils/CMakeLists.txt": ("add_library(utils INTERFACE)\n"
                                 "target_include_directories(utils INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})\n"),
        "utils/utils.hpp": "",
        "ch10/CMakeLists.txt": ("add_executable(reduction benchmark.cu kernels.cu)\n"
                                "target_link_libraries(reduction PRIVATE utils m)\n"),
        "ch10/benchmark.cu": '#include "utils.hpp"\n' + MAIN, "ch10/kernels.cu": PIECE,
    })
    p = read_program(course / "ch10/benchmark.cu", course)
    assert p.sources == ["benchmark.cu", "kernels.cu"]
    assert "-I../utils" in p.options and "-lutils" not in p.options
    assert "-lm" in p.options


def test_the_build_type_of_a_cmake_preset_the_readme_names_reaches_the_build(tmp_path):
    # a book reader's project says "cmake --preset linux-release": that preset's CMAKE_BUILD_TYPE, Release,
    # makes CMake compile with -O3 -DNDEBUG, which a CPU reference of billions of steps needs to end in time
    presets = {"version": 6, "configurePresets": [
        {"name": "base", "hidden": True, "cacheVariables": {"CMAKE_BUILD_TYPE": "Debug"}},
        {"name": "linux-debug", "inherits": "base"},
        {"name": "linux-release", "inherits": "base", "cacheVariables": {"CMAKE_BUILD_TYPE": "Release"}}]}
    course = write(tmp_path, {
        "CMakeLists.txt": "project(book LANGUAGES CXX CUDA)\nadd_subdirectory(ch03)\n",
        "CMakePresets.json": json.dumps(presets),
        "README.md": "```\ncmake --preset linux-release\ncmake --build --preset linux-release\n```\n",
        "ch03/CMakeLists.txt": "add_executable(matmul matmul.cu)\n", "ch03/matmul.cu": MAIN,
    })
    p = read_program(course / "ch03/matmul.cu", course)
    assert p.options[:2] == ["-O3", "-DNDEBUG"]
    # without the README's word the first preset shown is taken, with what it inherits: a debug build
    (course / "README.md").write_text("build with cmake\n")
    assert "-O3" not in read_program(course / "ch03/matmul.cu", course).options
    assert "-g" in read_program(course / "ch03/matmul.cu", course).options


def test_a_readmes_cmake_build_type_reaches_the_build_and_none_adds_no_flags(tmp_path):
    course = write(tmp_path, {
        "CMakeLists.txt": "project(lab LANGUAGES CUDA)\nadd_executable(lab lab.cu)\n", "lab.cu": MAIN,
        "README.md": "mkdir build && cd build && cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo .. && make\n"})
    assert read_program(course / "lab.cu", course).options[:3] == ["-O2", "-g", "-DNDEBUG"]
    (course / "README.md").write_text("mkdir build && cd build && cmake .. && make\n")
    options = read_program(course / "lab.cu", course).options
    assert not [o for o in options if o.startswith("-O") or o in ("-g", "-DNDEBUG")]


def test_a_job_scripts_flags_variable_continued_over_lines_is_given_to_nvcc_whole(tmp_path):
    # a cluster lab's sbatch script: the flags are one quoted value over three lines, joined by
    # backslash-newline, then "nvcc $NVCC_FLAGS lab1.cu -o lab1"; the shell gives nvcc each flag
    course = write(tmp_path, {
        "lab1.cu": MAIN,
        "lab1.sbatch": ('#!/bin/bash\n#SBATCH --job-name=lab1\nNVCC_FLAGS="-O3 -lineinfo -Xcompiler -fPIC \\\n'
                        ' -gencode=arch=compute_70,code=sm_70 \\\n -gencode=arch=compute_75,code=sm_75"\n'
                        'nvcc $NVCC_FLAGS lab1.cu -o lab1 || exit 10\n./lab1 ${1:-100}\n'),
    })
    p = read_program(course / "lab1.cu", course)
    assert p.how == "lab1.sbatch"
    assert p.options[:4] == ["-O3", "-lineinfo", "-Xcompiler", "-fPIC"]
    assert not [o for o in p.options if '"' in o or "\\" in o]


def test_a_job_scripts_argument_default_is_what_the_program_runs_with(tmp_path):
    # "N_ARG=${1:-10000000}" then "./lab1 ${N_ARG}": sbatch runs the script without arguments, so 10000000
    course = write(tmp_path, {
        "lab1.cu": MAIN,
        "lab1.sbatch": ("#!/bin/bash\nnvcc -O3 lab1.cu -o lab1\nN_ARG=${1:-10000000}\n"
                        'echo "Running with N=${N_ARG}"\n./lab1 ${N_ARG}\n'),
    })
    p = read_program(course / "lab1.cu", course)
    assert author_arguments(p, course) == ["10000000"]


def test_cmake_add_compile_options_for_cuda_reach_the_build_and_those_for_cxx_do_not(tmp_path):
    # the top CMakeLists.txt of a book reader's project: "--expt-relaxed-constexpr" for CUDA files only,
    # "-Wall;-Wextra" for C++ ones; its kernels call std::ceil, which needs the first
    course = write(tmp_path, {
        "CMakeLists.txt": ('project(book LANGUAGES CXX CUDA)\nadd_compile_options(\n'
                           '  "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra>"\n'
                           '  "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>"\n)\nadd_subdirectory(ch12)\n'),
        "ch12/CMakeLists.txt": "add_compile_options(-lineinfo)\nadd_executable(merge merge.cu)\n",
        "ch12/merge.cu": MAIN,
    })
    options = read_program(course / "ch12/merge.cu", course).options
    assert "--expt-relaxed-constexpr" in options and "-lineinfo" in options
    assert "-Wall" not in options and not [o for o in options if o.startswith("$")]


# courses17

def test_a_makefile_that_starts_the_program_in_the_background_gives_it_no_ampersand_argument(tmp_path):
    # a systems exercise's test target: "./solution_producer &", then the consumer; "&" is the shell's
    course = write(tmp_path, {
        "ipc/Makefile": ("solution_producer: solution_producer.cu\n\tnvcc $< -o $@\n"
                         "test: solution_producer\n\t./solution_producer &\n\t@sleep 1\n\t./solution_consumer\n"),
        "ipc/solution_producer.cu": "int main() { return 0; }\n",
    })
    producer = read_program(course / "ipc/solution_producer.cu", course)
    assert producer.how == "ipc/Makefile"
    assert author_arguments(producer, course) == []


def test_a_build_scripts_comment_that_quotes_a_shell_prompt_gives_the_nvcc_line(tmp_path):
    # a workshop's SConstruct: "# $ nvcc -I. exercise.cu -o exercise" for those without scons; the -I.
    # matters, the workshop ships its own Thrust beside the exercises
    course = write(tmp_path, {
        "points/SConstruct": ("# If you don't want to mess with scons, build on the command line:\n"
                              "# $ nvcc -I. exercise.cu -o exercise\n# $ nvcc -I. spoilers.cu -o spoilers\n"
                              "env.Program(\"exercise.cu\")\n"),
        "points/exercise.cu": MAIN,
        "points/spoilers.cu": MAIN,
    })
    exercise = read_program(course / "points/exercise.cu", course)
    assert exercise.how == "points/SConstruct"
    assert "-I." in exercise.options


# ------------------------------------------------------------------ books13

def test_a_makefile_project_whose_main_has_a_trailing_return_type_is_run_not_left_out(tmp_path):
    # a Warsaw course's project: main.cu declares `auto main() -> int`, its Makefile builds it with three pieces
    course = write(tmp_path, {
        "hamming/Makefile": "hamming: main.cu host.cu\n\tnvcc -o $@ main.cu host.cu -std=c++17 -O3\n",
        "hamming/main.cu": "int helper();\nauto main() -> int { return helper(); }\n",
        "hamming/host.cu": PIECE,
    })
    p = read_program(course / "hamming/main.cu", course)
    assert p.left_out == ""
    assert (p.sources, p.how) == (["main.cu", "host.cu"], "hamming/Makefile")
    assert "-std=c++17" in p.options


def test_a_cmake_folder_computed_from_the_labs_own_is_an_include_folder(tmp_path):
    # a Zhejiang course's lab: the shared CUDA by Example headers lie in ../common, named through the folder above
    # the lab's, computed when cmake configures
    course = write(tmp_path, {
        "common/book.h": "#define HANDLE_ERROR(x) x\n",
        "A3/CMakeLists.txt": (
            'project(streams LANGUAGES CXX CUDA)\n'
            'string(REGEX REPLACE "/$" "" CURRENT_FOLDER_ABSOLUTE ${CMAKE_CURRENT_SOURCE_DIR})\n'
            'get_filename_component(SECOND_FOLDER_ABSOLUTE ${CURRENT_FOLDER_ABSOLUTE} DIRECTORY)\n'
            'set(COMMON_DIR_HEADERS\n    ${SECOND_FOLDER_ABSOLUTE}/common\n    ${SECOND_FOLDER_ABSOLUTE}/common/GL\n    )\n'
            'cuda_add_executable(two_streams two_streams.cu ${COMMON_DIR_HEADERS})\n'
            'target_include_directories(two_streams PRIVATE ${CUDA_INCLUDE_DIRS} ${CMAKE_CURRENT_SOURCE_DIR}\n'
            '    ${COMMON_DIR_HEADERS})\n'),
        "A3/two_streams.cu": '#include "book.h"\n' + MAIN,
    })
    p = read_program(course / "A3/two_streams.cu", course)
    assert p.how == "A3/CMakeLists.txt" and p.sources == ["two_streams.cu"]
    assert "-I../common" in p.options and "-I../common/GL" in p.options
    assert not [o for o in p.options if "$" in o]


def test_a_visual_studio_projects_openmp_support_reaches_the_host_compiler(tmp_path):
    # a Russian course's axpy: main.cpp times an OpenMP loop against axpy.cu's kernel; the project turns on
    # MSVC's /openmp for its C++ files
    ns = 'xmlns="http://schemas.microsoft.com/developer/msbuild/2003"'
    course = write(tmp_path, {
        "axpy/axpy.vcxproj": (f'<Project {ns}><ItemDefinitionGroup><ClCompile><OpenMPSupport>true</OpenMPSupport>'
                              '</ClCompile></ItemDefinitionGroup><ItemGroup><ClCompile Include="main.cpp" />'
                              '<CudaCompile Include="axpy.cu" /></ItemGroup></Project>'),
        "axpy/main.cpp": "#include <omp.h>\n" + MAIN,
        "axpy/axpy.cu": PIECE,
        "plain/plain.vcxproj": f'<Project {ns}><ItemGroup><CudaCompile Include="plain.cu" /></ItemGroup></Project>',
        "plain/plain.cu": MAIN + PIECE,
    })
    p = read_program(course / "axpy/main.cpp", course)
    assert p.sources == ["main.cpp", "axpy.cu"] and p.how == "axpy.vcxproj"
    assert p.options[:2] == ["-Xcompiler", "-fopenmp"]
    assert "-fopenmp" not in read_program(course / "plain/plain.cu", course).options


def test_a_usage_line_that_counts_the_arguments_to_pass_is_no_success_line():
    # a reader's reduction from Ansorge's book: "You should pass 4 CLI arguments: ... You've passed 1 arguments."
    source = ('std::cout << "You should pass 4 CLI arguments: Array length (int)" << std::endl;\n'
              'std::cout << "You\'ve passed " << argc << " arguments." << std::endl;\n'
              'std::cout << "gpu_sum:\\t" << sum << std::endl;')
    assert judge(0, "host_sum:\t8.38982e+06\ngpu_sum:\t8.38982e+06\n", source, 120)[0] == "pass"
    assert judge(0, "done\n", 'printf("Test passed\\n");', 120)[0] == "fail"       # a verdict still owed


def test_the_gpu_runner_gives_cuffts_dropped_status_codes_back_as_cudalab_does(tmp_path):
    # Oxford's cuFFT practical: its helper_cuda.h names CUFFT_INCOMPLETE_PARAMETER_LIST, which CUDA 13's cufft.h
    # lacks; the staged GPU build tries again with legacy_cufft.h, as cudalab's build does
    import subprocess
    from courses_check import stage_gpu
    course = write(tmp_path / "course", {"fft.cu": "int main() { return 0; }\n"})
    stage_gpu([read_program(course / "fft.cu", course)], course, tmp_path / "stage")
    assert "CUFFT_INCOMPLETE_PARAMETER_LIST" in (tmp_path / "stage" / "legacy_cufft.h").read_text()
    toolkit = tmp_path / "cuda" / "bin"
    toolkit.mkdir(parents=True)
    (toolkit / "nvcc").write_text(
        '#!/bin/sh\ncase "$*" in *legacy_cufft.h*) ;; *) echo \'helper_cuda.h(512): error: identifier '
        '"CUFFT_INCOMPLETE_PARAMETER_LIST" is undefined\' >&2; exit 2;; esac\n'
        'while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n'
        'printf "#!/bin/sh\\necho transformed\\n" > "$out"; chmod +x "$out"\n')
    (toolkit / "nvcc").chmod(0o755)
    r = subprocess.run([sys.executable, str(tmp_path / "stage" / "run_gpu.py")], capture_output=True, text=True,
                       env={"PATH": f"{toolkit}:/usr/bin:/bin", "OUT": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    recorded = json.loads((tmp_path / "gpu.json").read_text())["course/fft.cu"]
    assert (recorded["code"], recorded["out"].strip()) == (0, "transformed")


# ---------------------------------------------------------------------------------------- courses18
from courses_check import (Program, judge_without_verdict_c18, no_verdict_c18, reference_c18,  # noqa: E402
                           result_lines_c18)

SKELETON_C18 = ('__global__ void sum(int *x) {\n    // TODO: add the warp\'s values with __shfl_down_sync\n}\n'
                'int main() { printf("sum = %d\\n", total); }\n')


def test_a_skeleton_that_prints_numbers_and_no_verdict_ran_but_did_not_pass():
    # an unfilled warp reduction runs, prints a wrong sum and checks nothing: the tool counted it a pass
    status, why = no_verdict_c18("sum = 1572\n", SKELETON_C18, "", None)
    assert status == "ran" and why.startswith("ran, no verdict") and "TODO: add the warp's values" in why
    # the same output from a finished program (no comment leaves work) is a pass, as a hello world is
    assert no_verdict_c18("sum = 49776\n", SKELETON_C18.replace("TODO", "Done"), "", None) == ("pass", "")
    # a skeleton whose own check speaks is judged by its check
    assert no_verdict_c18("sum = 49776\nThe Results match!\n", SKELETON_C18, "", None) == ("pass", "")
    assert no_verdict_c18("Test PASSED\n", SKELETON_C18, "", None) == ("pass", "")


def test_a_skeleton_is_compared_with_its_courses_solution_where_that_ran_too():
    solution_out = "kernel time 0.31 ms\nsum = 49776\n"
    status, why = no_verdict_c18("kernel time 0.02 ms\nsum = 1572\n", SKELETON_C18, "ex/solution.cu", solution_out)
    assert status == "ran" and "'sum = 1572' where ex/solution.cu prints 'sum = 49776'" in why
    # the same results pass, whatever the timings say
    assert no_verdict_c18("kernel time 0.02 ms\nsum = 49776\n", SKELETON_C18, "ex/solution.cu", solution_out) == \
        ("pass", "prints the numbers ex/solution.cu prints (no check of its own)")
    # (timings, bandwidths and addresses are no results)
    assert result_lines_c18("Elapsed 3 ms\n12.5 GB/s\nptr 0x7f00\nN = 1024\n") == [("N = 1024", ("1024",))]


def test_the_courses_answer_is_found_where_courses_keep_it(tmp_path):
    course = write(tmp_path / "course", {
        "practice/ex02/warp.cu": MAIN, "practice/ex02/solution.cu": MAIN,
        "Lab02/saxpy/main.cpp": MAIN, "Lab02/solutions/saxpy/main.cpp": MAIN,
        "exercises/hw1/add.cu": MAIN, "solutions/hw1/add.cu": MAIN,
        "alone/x.cu": MAIN, "points/exercise.cu": MAIN, "points/spoilers.cu": MAIN,
    })
    assert reference_c18("practice/ex02/warp.cu", course) == "practice/ex02/solution.cu"
    assert reference_c18("Lab02/saxpy/main.cpp", course) == "Lab02/solutions/saxpy/main.cpp"
    assert reference_c18("exercises/hw1/add.cu", course) == "solutions/hw1/add.cu"
    assert reference_c18("alone/x.cu", course) == ""
    assert reference_c18("points/exercise.cu", course) == "points/spoilers.cu"     # the Thrust workshop
    assert reference_c18("practice/ex02/solution.cu", course) == ""        # an answer has no answer


def test_rows_are_judged_again_once_the_skeletons_answer_has_run(tmp_path):
    course = write(tmp_path / "course", {"ex/warp.cu": SKELETON_C18, "ex/solution.cu": SKELETON_C18.replace(
        "// TODO: add the warp's values with __shfl_down_sync\n", ""), "hello/hello.cu": MAIN})
    programs = [Program("ex/warp.cu", "ex", sources=["warp.cu"]), Program("ex/solution.cu", "ex", sources=["solution.cu"]),
                Program("hello/hello.cu", "hello", sources=["hello.cu"])]
    results = {f"course/{p.name}": {"status": "pass", "detail": ""} for p in programs}
    outputs = {"ex/warp.cu": "sum = 1572\n", "ex/solution.cu": "sum = 49776\n", "hello/hello.cu": "Hello from 3\n"}
    judge_without_verdict_c18(programs, results, outputs, course, "course/")
    assert results["course/ex/warp.cu"]["status"] == "ran"
    assert results["course/ex/solution.cu"] == {"status": "pass", "detail": ""}
    assert results["course/hello/hello.cu"] == {"status": "pass", "detail": ""}


def test_a_makefile_whose_first_target_prints_help_builds_with_the_target_its_help_names(tmp_path):
    # CINECA's course: `make` only echoes "make cuda  compile all CUDA sources"; `make cuda` builds
    # `binary` from the folder's .cu with -arch=sm_70 -Xcompiler=-O3
    course = write(tmp_path / "course", {
        "hello/Makefile": 'NVCCFLAG = -arch=sm_70 -Xcompiler=-O3\n\ndummy:\n'
                          '\t@echo -e "make cuda\\t\\tcompile all CUDA sources"\n'
                          '\t@echo -e "make clean\\t\\trm -f *.x"\n\ncuda: binary\n\n'
                          'binary: *.cu\n\tnvcc $(NVCCFLAG) $< -o $@\n\nclean:\n\trm -f binary\n',
        "hello/hello.cu": MAIN + PIECE,
    })
    p = read_program(course / "hello/hello.cu", course)
    assert p.how == "hello/Makefile" and p.options[:2] == ["-arch=sm_70", "-Xcompiler=-O3"]
    assert p.sources == ["hello.cu"]


def test_a_compiled_program_committed_under_a_cu_name_is_no_source(tmp_path):
    course = tmp_path / "course"
    (course / "hello").mkdir(parents=True)
    (course / "hello/binary.cu").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\0" * 64 + b"<GL/gl.h>")
    (course / "hello/hello.cu").write_text(MAIN + PIECE)
    p = read_program(course / "hello/binary.cu", course)
    assert p.left_out.startswith("no source: a compiled program")
    assert not read_program(course / "hello/hello.cu", course).left_out


def test_results_said_to_be_different_are_a_failure():
    # Politecnico di Torino's debugging lab prints the differing elements, then "The Results are Different!"
    assert judge(0, "3 0.95 0.18 1.13\n\nThe Results are Different!\n\nProgramm Finished!\n", "", 120)[0] == "fail"
    assert judge(0, "Output is not the same as the CPU's\n", "", 120)[0] == "fail"
    assert judge(0, "Timing with different block sizes:\n256: 1.2 ms\n", "", 120)[0] == "pass"
    assert judge(0, "The Results match!\n", "", 120)[0] == "pass"


def test_cudalabs_own_notes_are_no_results_to_compare():
    out = ("cudalab memcheck warning (240 threads): Invalid __global__ read of size 4 bytes\n"
           "    at line 17 in kernel VectorAdd\n    by thread (272,0,0) in block (19,0,0)\nsum = 7\n")
    assert result_lines_c18(out) == [("sum = 7", ("7",))]


COURSERA_MAKEFILE_C18 = (
    "COMPILER_FLAGS=-I./ --std c++17\n\n"
    "build-copy: copy.cu\n\tnvcc $(COMPILER_FLAGS) copy.cu -o copy.exe\n\n"
    "build-broken-mapped: broken_mapped.cu\n\tnvcc $(COMPILER_FLAGS) broken_mapped.cu -o broken_mapped.exe\n\n"
    "build: build-copy build-broken-mapped\n\n"
    "run-copy:\n\t./copy.exe $(ARGS)\n\nrun-broken-mapped:\n\t./broken_mapped.exe $(ARGS)\n")


def test_a_program_that_makes_first_target_does_not_build_is_built_by_the_rule_that_names_it(tmp_path):
    # the Coursera CUDA course: `make` builds only build-copy; build-broken-mapped names broken_mapped.cu
    course = write(tmp_path / "course", {"lab/Makefile": COURSERA_MAKEFILE_C18, "lab/copy.cu": MAIN + PIECE,
                                         "lab/broken_mapped.cu": MAIN + PIECE})
    p = read_program(course / "lab/broken_mapped.cu", course)
    assert p.how == "lab/Makefile" and p.sources == ["broken_mapped.cu"]
    assert "--std" in p.options and p.options[p.options.index("-o") + 1] == "broken_mapped.exe"


def test_a_scripts_make_call_gives_the_run_target_its_arguments(tmp_path):
    # run.sh: make run-broken-mapped ARGS="-p avffI -n 128 -t 128"; the recipe runs ./broken_mapped.exe $(ARGS)
    course = write(tmp_path / "course", {
        "lab/Makefile": COURSERA_MAKEFILE_C18, "lab/copy.cu": MAIN + PIECE, "lab/broken_mapped.cu": MAIN + PIECE,
        "lab/run.sh": '#!/usr/bin/env bash\nmake clean build\n\nmake run-copy ARGS="-p IYn5V -n 128"\n'
                      'make run-broken-mapped ARGS="-p avffI -n 128 -t 128 "\n'})
    assert author_arguments(read_program(course / "lab/broken_mapped.cu", course), course) == \
        ["-p", "avffI", "-n", "128", "-t", "128"]
    assert author_arguments(read_program(course / "lab/copy.cu", course), course) == ["-p", "IYn5V", "-n", "128"]


def test_a_program_that_reads_its_images_with_opencv_is_left_out_as_the_machine_has_no_opencv(tmp_path):
    course = write(tmp_path / "course", {"blur/blur.hpp": "#include <opencv2/core.hpp>\n",
                                         "blur/blur.cu": '#include "blur.hpp"\n' + MAIN + PIECE})
    import courses_check
    left_out = read_program(course / "blur/blur.cu", course).left_out
    assert left_out.startswith("uses OpenCV") if not courses_check._OPENCV_B14 else not left_out


def test_a_launch_cudalab_refused_fails_a_program_that_checks_no_error():
    # SJTU's tiled matmul launches <<<dimGrid, dimBlock>>> with the two swapped: blocks of 63 x 63 threads
    out = ("Generated matrix A of size 1001 * 1001\ncudalab: mat_mult_tiled_kernel<double>: a block may have at most "
           "1024 threads, but block (63, 63, 1) has 3969. Use smaller blocks and more of them.\n"
           "Product calculated. Elapsed time: 1.95 seconds\n")
    status, why = judge(0, out, "", 120)
    assert status == "fail" and "refused" in why and "block (63, 63, 1) has 3969" in why
    assert judge(0, "cudalab memcheck warning (2 threads): Invalid __global__ read\nsum = 3\n", "", 120)[0] == "pass"


# ------------------------------------------------------------------ books14
def test_a_windows_makefile_two_folders_up_builds_the_program_with_its_options(tmp_path):
    # an SJTU homework: hw2/Makefile makes build/ with PowerShell, then builds 1_MatrixMul/src/MatrixMul.cu with
    # -O2 -arch=sm_50; make stopped at powershell here, and the tool fell back to nvcc's default build
    course = write(tmp_path, {
        "hw2/Makefile": ("NVCC = nvcc\nNVCCFLAGS = -O2 -arch=sm_50\nBUILD_DIR = build\n"
                         "all: $(BUILD_DIR)/MatrixMul.exe\n"
                         "$(BUILD_DIR):\n\t@powershell -Command \"New-Item -ItemType Directory -Path '$(BUILD_DIR)'\"\n"
                         "$(BUILD_DIR)/MatrixMul.exe: 1_MatrixMul/src/MatrixMul.cu | $(BUILD_DIR)\n"
                         "\t$(NVCC) $(NVCCFLAGS) -o $@ 1_MatrixMul/src/MatrixMul.cu\n"),
        "hw2/1_MatrixMul/src/MatrixMul.cu": MAIN + PIECE,
    })
    p = read_program(course / "hw2/1_MatrixMul/src/MatrixMul.cu", course)
    assert p.how == "hw2/Makefile" and p.folder == "hw2"
    assert p.options[:2] == ["-O2", "-arch=sm_50"] and p.sources == ["1_MatrixMul/src/MatrixMul.cu"]


def test_a_program_that_reads_its_image_with_opencv_is_left_out_where_opencv_is_not_installed(tmp_path):
    # a Russian course's bilateral filter: cv::imread, then a kernel; books6 to 12 left such programs out by hand
    import courses_check
    course = write(tmp_path, {"filter/kernel.cu": "#include <opencv2/opencv.hpp>\n" + MAIN + PIECE,
                              "plain/kernel.cu": MAIN + PIECE})
    p = read_program(course / "filter/kernel.cu", course)
    if courses_check._OPENCV_B14:
        assert not p.left_out                       # (a machine that has OpenCV builds it)
    else:
        assert "OpenCV (a host image library, not installed here)" in p.left_out
    assert not read_program(course / "plain/kernel.cu", course).left_out


# ---------------------------------------------------------------------------------------- courses20
def test_the_programs_a_notebook_runs_with_nvcc4jupyters_cu_magic_are_files_named_after_their_cells(tmp_path):
    # a Colab course's weekly notebooks: install nvcc4jupyter, load it, then one whole program per %%cu cell
    from courses_check import with_notebook_files
    cells = [{"cell_type": "code", "source": ["!pip install git+https://github.com/andreinechaev/nvcc4jupyter.git\n",
                                              "%load_ext nvcc_plugin\n"]},
             {"cell_type": "markdown", "source": ["%%cu cells below\n"]},
             {"cell_type": "code", "source": ["%%cu \n", MAIN, PIECE]},
             {"cell_type": "code", "source": "%%cuda\n__global__ void k() {}\n"},      # kernels only: no program
             {"cell_type": "code", "source": "%%cuda --compiler-args \"-O2\"\n" + MAIN + PIECE}]
    course = write(tmp_path / "course", {"Week6/ReductionSum.ipynb": json.dumps({"cells": cells})})
    copy = with_notebook_files(course, tmp_path / "work")
    assert sorted(f.name for f in (copy / "Week6/ReductionSum").iterdir()) == ["cell2.cu", "cell4.cu"]
    assert (copy / "Week6/ReductionSum/cell2.cu").read_text() == MAIN + PIECE
    p = read_program(copy / "Week6/ReductionSum/cell2.cu", copy)
    assert (p.sources, p.options) == (["cell2.cu"], ["-o", "cell2"])       # nvcc cell2.cu -o cell2, as the plugin


def test_an_object_file_the_makefile_compiles_without_o_and_moves_to_bin_is_built_from_its_source(tmp_path):
    # a lab's Makefile: "nvcc ./src/reader.cu -c" leaves reader.o where make runs, "mv" puts it in bin/,
    # and the program links ./bin/reader.o; the program is one folder down, in src/
    course = write(tmp_path / "course", {
        "lab1/c/makefile": "parallel: bin reader\n\tnvcc -I ./inc ./bin/reader.o ./src/parallel.cu -o parallel\n\n"
                           "reader: bin\n\tnvcc ./src/reader.cu -c\n\tmv ./reader.o ./bin\n\nbin:\n\tmkdir ./bin\n",
        "lab1/c/src/parallel.cu": MAIN,
        "lab1/c/src/reader.cu": PIECE,
        "lab1/c/inc/reader.h": "int helper();\n",
    })
    p = read_program(course / "lab1/c/src/parallel.cu", course)
    assert p.sources == ["./src/reader.cu", "./src/parallel.cu"]
    assert p.options == ["-I", "./inc", "-o", "parallel"]


def test_a_makefile_written_on_windows_links_obj_files_built_from_the_programs_sources(tmp_path):
    # a GPU course's assignments: "%.obj: %.cu" compiles main.cu and kernel.cu, and the program links both
    course = write(tmp_path / "course", {
        "histogram/Makefile": "NVCC = nvcc\nNVCC_FLAGS = -O3\nOBJ = main.obj kernel.obj\nEXE = histogram\n\n"
                              "default: $(EXE)\n\n%.obj: %.cu\n\t$(NVCC) $(NVCC_FLAGS) -c -o $@ $<\n\n"
                              "$(EXE): $(OBJ)\n\t$(NVCC) $(NVCC_FLAGS) $(OBJ) -o $(EXE)\n",
        "histogram/main.cu": MAIN,
        "histogram/kernel.cu": PIECE,
    })
    p = read_program(course / "histogram/main.cu", course)
    assert (p.options, p.sources) == (["-O3", "-o", "histogram"], ["main.cu", "kernel.cu"])


def test_a_comment_that_says_what_the_next_loop_fills_in_leaves_no_work_to_the_student():
    # CUDA by Example's "// fill in the host memory with data", above the loop that does it, as a course's
    # notebooks copy it: a finished program, not a skeleton; "fill in the kernel" still is one
    from courses_check import student_work_c18
    done = "int main() {\n    // fill in the host memory with data\n    for (int i = 0; i < N; i++) a[i] = i;\n}\n"
    assert student_work_c18(done) == ""
    assert no_verdict_c18("dot = 42\n", done, "", None) == ("pass", "")
    assert student_work_c18("__global__ void k() {\n    // fill in the kernel\n}\n") == "// fill in the kernel"
    assert student_work_c18("// Fill in with your code\n") == "// Fill in with your code"


def test_a_clean_target_that_removes_the_program_gives_no_arguments_the_run_target_gives_them(tmp_path):
    # a lab's Makefile lists "clean_x: rm ./x" before "run_x: ./x 35 64 64 ./input1.raw ...", and builds "-o ./x"
    course = write(tmp_path / "course", {
        "lab3/makefile": "queuing:\n\tnvcc -I ./c/inc ./c/queuing.cu -o ./queuing\n\n"
                         "clean_queuing:\n\trm ./queuing\n\trm ./output/out.raw\n\n"
                         "run_queuing: queuing\n\t./queuing 35 64 64 ./input1.raw ./output/out.raw\n",
        "lab3/c/queuing.cu": MAIN,
    })
    p = read_program(course / "lab3/c/queuing.cu", course)
    assert p.options == ["-I", "./c/inc", "-o", "./queuing"]
    assert author_run(p, course) == (["35", "64", "64", "./input1.raw", "./output/out.raw"], {})


def test_a_usage_messages_correct_format_is_no_success_line_the_program_owes():
    # a lab prints "Correct Format: ./grid_4_4 <number of iterations>" only when its arguments are wrong
    source = ('if (argc != 2) { printf("RuntimeError: Wrong inputs\\n");\n'
              '  printf("Correct Format: ./grid_%d_%d <number of iterations>\\n", 4, 4); return 1; }\n'
              'printf("#%d (%d,%d): %f\\n", i, 2, 2, v);\n')
    assert judge(0, "#0 (2,2): 0.000000\n#1 (2,2): 0.000000\n", source, 120)[0] == "pass"
    assert judge(0, "#0 (2,2): 0.0\n", source + 'puts("The result is correct");\n', 120)[0] == "fail"


# ------------------------------------------------------------------ books15
def test_a_bazel_chapter_builds_its_kernels_with_the_binary_that_calls_them(tmp_path):
    # a PMPP reader's Bazel workspace: each chapter a cuda_library of kernels and a cc_binary whose main calls
    # them, headers included from the workspace's root, C++17 and opt from .bazelrc
    book = write(tmp_path, {
        "WORKSPACE": "",
        ".bazelrc": "build --cxxopt='-std=c++17'\nbuild --compilation_mode=opt\n",
        "common/BUILD": 'cc_library(\n    name = "timer",\n    hdrs = ["timer.h"],\n)\n',
        "common/timer.h": "",
        "chapter_4/BUILD": ('load("@rules_cuda//cuda:defs.bzl", "cuda_library")\n\n'
                            'cuda_library(\n    name = "matmul",\n    srcs = ["matmul.cu"],  # the kernels\n'
                            '    hdrs = ["matmul.h"],\n)\n\n'
                            'cc_binary(\n    name = "matmul_main",\n    srcs = ["matmul_main.cc"],\n'
                            '    deps = [":matmul", "//common:timer", "@local_cuda//:cuda_runtime"],\n)\n'),
        "chapter_4/matmul.cu": PIECE,
        "chapter_4/matmul_main.cc": '#include "chapter_4/matmul.h"\n' + MAIN,
        "chapter_4/matmul.h": "int helper();\n",
    })
    p = read_program(book / "chapter_4/matmul.cu", book)
    assert (p.how, p.folder, p.left_out) == ("chapter_4/BUILD", ".", "")
    assert p.sources == ["chapter_4/matmul_main.cc", "chapter_4/matmul.cu"]
    assert p.options == ["-std=c++17", "-O2", "-DNDEBUG", "-I.", "-o", "matmul_main"]
    # the binary's own source is the same program, run once
    main, kernels = read_programs([book / "chapter_4/matmul_main.cc", book / "chapter_4/matmul.cu"], book)
    assert not main.left_out and kernels.left_out == "built with chapter_4/matmul_main.cc into one program, run as that"


def test_a_vscode_build_task_builds_each_file_as_the_student_does(tmp_path):
    # a learner's notes: Ctrl+Shift+B runs "nvcc build active file" on the open file, from its folder
    notes = write(tmp_path, {
        ".vscode/tasks.json": """{
            // VS Code's JSON has comments
            "version": "2.0.0",
            "tasks": [
                {"label": "g++ build", "command": "/usr/bin/g++", "args": ["${file}"]},
                {
                    "type": "cppbuild",
                    "label": "C/C++: nvcc build active file",
                    "command": "/home/me/conda/bin/nvcc",
                    "args": [
                        "-std=c++17", // C++17 for the standard-library lesson
                        "--relocatable-device-code=true",
                        "${file}", "-o", "${fileDirname}/../bin/${fileBasenameNoExtension}.out",
                        "-lcublas", "-I${workspaceFolder}/third_party/include",
                    ],
                    "options": {"cwd": "${fileDirname}"},
                    "group": {"kind": "build", "isDefault": true}
                }
            ]
        }""",
        "src/dot.cu": MAIN + PIECE,
    })
    p = read_program(notes / "src/dot.cu", notes)
    assert (p.how, p.folder, p.sources) == (".vscode/tasks.json", "src", ["dot.cu"])
    assert p.options == ["-std=c++17", "--relocatable-device-code=true", "-o", "./../bin/dot.out", "-lcublas",
                         "-I../third_party/include"]
    # a readme's nvcc line for the file still comes first
    write(notes, {"src/README.md": "nvcc -O3 dot.cu -o dot\n"})
    assert read_program(notes / "src/dot.cu", notes).how == "src/README.md"
