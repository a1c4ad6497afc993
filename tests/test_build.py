"""Programs in several files, built as nvcc builds them: `cudalab run [nvcc options] FILES... -- ARGS`.

Each test writes a small program into a temporary folder, the way a student's project folder looks,
and builds it with nvcc's own command line. Builds are cached, so the first run of this file calls
nvcc a dozen times and later runs almost never.
"""
import textwrap

import pytest

from cudalab.cli import main
from cudalab.errors import CompileError
from cudalab.programs import has_main, run_program
from cudalab.programs.build import cuda_home
from cudalab.programs.command import NvccUsageError, parse_nvcc
from cudalab.ptx import parse
from cudalab.ptx.link import link


def write(folder, files: dict):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


# ------------------------------------------------------------------ reading nvcc's command line
@pytest.mark.parametrize("argv, sources, compile_options, rdc, archs, output", [
    ("-I../Common main.cpp kernel.cu", ["main.cpp", "kernel.cu"], ["-I../Common"], False, [], None),
    ("-I ../inc -DN=4 -D FAST -UDEBUG k.cu", ["k.cu"], ["-I../inc", "-DN=4", "-DFAST", "-UDEBUG"], False, [], None),
    ("-rdc=true -std=c++17 -O3 a.cu b.cu", ["a.cu", "b.cu"], ["-std", "c++17", "-O3"], True, [], None),
    ("-dc -lineinfo -o prog a.cu", ["a.cu"], ["-lineinfo"], True, [], "prog"),
    ("-arch=sm_90a --relocatable-device-code true a.cu", ["a.cu"], [], True, ["90a"], None),
    ("-gencode arch=compute_75,code=sm_75 --generate-code=arch=compute_80,code=[compute_80,sm_80] a.cu",
     ["a.cu"], [], False, ["75", "80"], None),
    ("-Xcompiler -fopenmp --extended-lambda -w a.cu", ["a.cu"], ["-Xcompiler", "-fopenmp", "--extended-lambda", "-w"],
     False, [], None),
    # nvcc -run builds the program and runs it, as cudalab run does: nothing to hand on
    ("-arch=native atomic.cpp -x cu -o /tmp/a.out -run", ["atomic.cpp"], ["-x", "cu"], False, [], "/tmp/a.out"),
])
def test_nvcc_options_are_read_as_nvcc_reads_them(argv, sources, compile_options, rdc, archs, output):
    cmd = parse_nvcc(argv.split())
    assert (cmd.sources, cmd.compile_options, cmd.rdc, cmd.archs, cmd.output) == (
        sources, compile_options, rdc, archs, output)


def test_libraries_go_to_the_link_and_the_program_is_named_as_nvcc_names_it():
    cmd = parse_nvcc("-lm -L/opt/lib -Xlinker -rpath=/x -o bin/app a.cu lib.a".split())
    assert cmd.link_options == ["-lm", "-L/opt/lib", "-Xlinker", "-rpath=/x"]
    assert cmd.linked == ["lib.a"] and cmd.executable_name() == "bin/app"
    assert parse_nvcc(["a.cu"]).executable_name() == "./a.out"
    assert parse_nvcc(["-o", "vectorAdd", "a.cu"]).executable_name() == "./vectorAdd"


@pytest.mark.parametrize("argv, kept", [
    ("-arch=sm_20 a.cu", []),                                   # a 2014 book's Makefile
    ("-gencode arch=compute_35,code=sm_35 -gencode arch=compute_80,code=sm_80 a.cu",
     ["-gencode=arch=compute_80,code=sm_80"]),
    ("-arch=native a.cu", ["-arch=native"]),
])
def test_architectures_older_than_nvcc_builds_are_left_to_the_device(argv, kept):
    cmd = parse_nvcc(argv.split()).without_archs_before(75)
    assert cmd.arch_options == kept
    assert all(int(a) >= 75 for a in cmd.archs)


def test_a_word_nvcc_would_not_understand_is_named():
    with pytest.raises(NvccUsageError, match="don't know what to do with 'notes.txt'"):
        parse_nvcc(["a.cu", "notes.txt"])
    with pytest.raises(NvccUsageError, match="-I needs a value"):
        parse_nvcc(["a.cu", "-I"])



def test_a_host_compiler_this_machine_lacks_is_left_to_nvccs_default(tmp_path, monkeypatch):
    # a 2019 course's Makefile: nvcc -ccbin g++-4.9 sincos.cu (the lab's compiler, long gone here)
    cmd = parse_nvcc("-ccbin g++-4.9-from-the-lab -O2 -o sincos sincos.cu".split())
    assert cmd.compile_options == ["-O2"] and cmd.link_options == []
    assert parse_nvcc("-ccbin g++ a.cu".split()).compile_options == ["-ccbin", "g++"]   # one it has stays
    write(tmp_path, {"sincos.cu": """\
        #include <cstdio>
        __global__ void half(float *x) { x[threadIdx.x] = 0.5f * threadIdx.x; }
        int main() {
            float *x, h[4];
            cudaMalloc(&x, sizeof h);
            half<<<1, 4>>>(x);
            cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
            printf("%g %g\\n", h[1], h[3]);
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["sincos.cu"], options=["-ccbin", "g++-4.9-from-the-lab", "-o", "sincos"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0.5 1.5\n"


def test_device_lambdas_build_without_their_flag_and_the_student_is_told_what_nvcc_needs(tmp_path, monkeypatch):
    # a seminar's program: a kernel template applied to a __device__ lambda, built as plain "nvcc -o twice twice.cu"
    write(tmp_path, {"twice.cu": """\
        #include <cstdio>
        template <typename F> __global__ void apply(int *x, F f) { x[threadIdx.x] = f(threadIdx.x); }
        int main() {
            int *x, h[4];
            cudaMalloc(&x, sizeof h);
            apply<<<1, 4>>>(x, [] __device__ (int i) { return 2 * i + 1; });
            cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d %d\\n", h[0], h[3]);
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["twice.cu"], options=["-o", "twice"], capture=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1 7\n"
    assert "twice.cu has __device__ lambdas" in r.stderr and "Add --extended-lambda" in r.stderr
    again = run_program(["twice.cu"], options=["-o", "twice"], capture=True)     # built before: still said
    assert "Add --extended-lambda" in again.stderr
    flagged = run_program(["twice.cu"], options=["--extended-lambda", "-o", "twice"], capture=True)
    assert flagged.stdout == "1 7\n" and "--extended-lambda" not in flagged.stderr


def test_a_visual_studio_void_main_builds_as_msvc_builds_it_and_the_student_is_told(tmp_path, monkeypatch):
    # a textbook written in Visual Studio: a byte-order mark, void main, a timer header beside the file
    write(tmp_path, {"lab/timer.h": "#define REPEAT 3\n", "lab/add.cu": """\
        \ufeff#include <cstdio>
        #include "timer.h"
        __global__ void add(int *x) { x[threadIdx.x] += REPEAT * threadIdx.x; }
        void main(void)
        {
            int *x, h[8] = {0};
            cudaMalloc(&x, sizeof h);
            cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
            add<<<1, 8>>>(x);
            cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d %d\\n", h[1], h[7]);
        }
        """})
    monkeypatch.chdir(tmp_path / "lab")
    assert main(["run", "-o", "add", "add.cu"]) == 0          # a whole program, not a file of kernels
    r = run_program(["add.cu"], options=["-o", "add"], capture=True)
    assert (r.returncode, r.stdout) == (0, "3 21\n"), r.stderr
    assert "add.cu declares void main()" in r.stderr and "Write int main()" in r.stderr
    assert "declares void main()" in run_program(["add.cu"], capture=True).stderr     # built before: still said
    # the kernel's lines are the student's own: a bad line is named as it is in add.cu
    (tmp_path / "lab" / "add.cu").write_text((tmp_path / "lab" / "add.cu").read_text()
                                             .replace("printf(", "undeclared = 1; printf("))
    with pytest.raises(CompileError, match=r"add\.cu\(11\).*undeclared"):
        run_program(["add.cu"], capture=True)

def test_a_main_with_a_trailing_return_type_is_a_whole_program(tmp_path, monkeypatch, capfd):
    # C++11's `auto main() -> int` (a Warsaw course's projects): one .cu file with it is a program to build and
    # run, as nvcc builds it, not a file of kernels that NVRTC would refuse for its host code
    write(tmp_path, {"triple.cu": """\
        #include <cstdio>
        __global__ void triple(int *x) { x[threadIdx.x] = 3 * threadIdx.x; }
        auto main() -> int
        {
            int *x, h[4];
            cudaMalloc(&x, sizeof h);
            triple<<<1, 4>>>(x);
            cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d %d\\n", h[1], h[3]);
            return h[3] == 9 ? 0 : 1;
        }
        """})
    monkeypatch.chdir(tmp_path)
    assert has_main((tmp_path / "triple.cu").read_text())
    assert not has_main("__global__ void k(int *x) { auto mainly = 2; x[0] = mainly; }")
    assert main(["run", "triple.cu"]) == 0
    assert capfd.readouterr().out == "3 9\n"


def test_headers_named_in_another_case_are_found_as_windows_finds_them_and_the_student_is_told(tmp_path, monkeypatch):
    # a Visual Studio project: main.cpp includes "kernelCall.h" for KernelCall.h, which includes "config.H", and
    # declares void main, which g++ meets only once the headers are found
    write(tmp_path, {
        "KernelCall.h": '#pragma once\n#include "config.H"\nvoid launch(int *h);\n',
        "Config.h": "#define SCALE 5\n",
        "main.cpp": '#include <cstdio>\n#include "kernelCall.h"\n'
                    'void main() { int h[4]; launch(h); printf("%d\\n", h[3]); }\n',
        "DeviceCode.cu": """\
            #include "KernelCall.h"
            __global__ void scale(int *p) { p[threadIdx.x] = SCALE * threadIdx.x; }
            void launch(int *h) {
                int *d;
                cudaMalloc(&d, 4 * sizeof(int));
                scale<<<1, 4>>>(d);
                cudaMemcpy(h, d, 4 * sizeof(int), cudaMemcpyDeviceToHost);
            }
            """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cpp", "DeviceCode.cu"], options=["-o", "app"], capture=True)
    assert (r.returncode, r.stdout) == (0, "15\n"), r.stderr
    assert 'includes "kernelCall.h", but the file is KernelCall.h' in r.stderr
    assert 'includes "config.H", but the file is Config.h' in r.stderr and "main.cpp declares void main()" in r.stderr
    # a header that exists in no case at all is still nvcc's missing file
    (tmp_path / "main.cpp").write_text('#include "nowhere.h"\nint main() { return 0; }\n')
    with pytest.raises(CompileError, match="nowhere.h"):
        run_program(["main.cpp"], capture=True)


def test_a_header_kept_in_another_labs_folder_is_pointed_at_not_guessed(tmp_path, monkeypatch):
    # a course keeps one gputimer.h in its histogram lab; the atomics lab includes it by name and stops nvcc
    # too: the student is told where a file of that name is, and the program builds once given that -I
    write(tmp_path, {
        "course/histogram/timer_of_ours.h": "#pragma once\n#define TICKS 3\n",
        "course/atomics/count.cu": """\
            #include <cstdio>
            #include "timer_of_ours.h"
            int main() { printf("%d\\n", TICKS); return 0; }
            """})
    monkeypatch.chdir(tmp_path / "course" / "atomics")
    with pytest.raises(CompileError) as e:
        run_program(["count.cu"], capture=True)
    assert ("hint: timer_of_ours.h is not beside count.cu nor on the include path, but there is one in "
            "../histogram: build with -I../histogram") in str(e.value)
    r = run_program(["count.cu"], options=["-I../histogram"], capture=True)
    assert (r.returncode, r.stdout) == (0, "3\n"), r.stderr
    (tmp_path / "course" / "atomics" / "count.cu").write_text('#include "not_in_the_course.h"\nint main() { return 0; }\n')
    with pytest.raises(CompileError) as e:
        run_program(["count.cu"], capture=True)
    assert "not_in_the_course.h" in str(e.value) and "there is one in" not in str(e.value)


def test_headers_old_toolkits_had_are_given_back_and_the_student_is_told(tmp_path, monkeypatch):
    # Stanford CS193G's tutorials bundle NVIDIA's cuPrintf.cu, which includes <sm_11_atomic_functions.h>
    # in its device pass; a 2010 lab includes the double intrinsics' header too. CUDA 13 has neither
    write(tmp_path, {"count.cu": """\
        #include <cstdio>
        #if __CUDA_ARCH__ > 100
        #include <sm_11_atomic_functions.h>
        #endif
        #include <sm_13_double_functions.h>
        __global__ void count(int *n, long long *bits) {
            atomicAdd(n, 1);
            if (threadIdx.x == 0) *bits = __double_as_longlong(1.0);
        }
        int main() {
            int *n, got; long long *bits, b;
            cudaMalloc(&n, sizeof(int)); cudaMalloc(&bits, sizeof(long long));
            cudaMemset(n, 0, sizeof(int));
            count<<<3, 64>>>(n, bits);
            cudaMemcpy(&got, n, sizeof got, cudaMemcpyDeviceToHost);
            cudaMemcpy(&b, bits, sizeof b, cudaMemcpyDeviceToHost);
            printf("%d %llx\\n", got, b);
            return 0;
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["count.cu"], capture=True)
    assert (r.returncode, r.stdout) == (0, "192 3ff0000000000000\n"), r.stderr
    assert "<sm_11_atomic_functions.h>, <sm_13_double_functions.h>" in r.stderr or (
        "sm_11_atomic_functions.h" in r.stderr and "sm_13_double_functions.h" in r.stderr), r.stderr
    assert "CUDA 13 no longer has" in r.stderr
    # a header no toolkit ever had is still the preprocessor's error
    (tmp_path / "count.cu").write_text("#include <sm_99_nowhere.h>\nint main() { return 0; }\n")
    with pytest.raises(CompileError, match="sm_99_nowhere"):
        run_program(["count.cu"], capture=True)


def test_thrusts_pinned_allocator_of_cuda_12_is_given_back(tmp_path, monkeypatch):
    # a course's group-by project keeps its host buffers in page-locked memory through Thrust's experimental
    # pinned_allocator, whose header CUDA 13's Thrust no longer has
    write(tmp_path, {"pinned.cu": """\
        #include <cstdio>
        #include <thrust/host_vector.h>
        #include <thrust/device_vector.h>
        #include <thrust/reduce.h>
        #include <thrust/system/cuda/experimental/pinned_allocator.h>
        int main() {
            thrust::host_vector<float, thrust::system::cuda::experimental::pinned_allocator<float>> h(1000, 0.5f);
            thrust::device_vector<float> d = h;
            cudaPointerAttributes a;
            cudaPointerGetAttributes(&a, thrust::raw_pointer_cast(h.data()));
            printf("%g %d\\n", thrust::reduce(d.begin(), d.end()), a.type == cudaMemoryTypeHost);
            return 0;
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["pinned.cu"], capture=True)
    assert (r.returncode, r.stdout) == (0, "500 1\n"), r.stderr
    assert "<thrust/system/cuda/experimental/pinned_allocator.h>" in r.stderr


def test_a_string_literal_glued_to_a_macro_parameter_builds_as_the_c03_it_was_written_in(tmp_path, monkeypatch):
    # the Illinois/Parboil labs' support.h: FATAL(msg, ...) prints "[%s:%d] "msg"\n"; C++11 reads "..."msg as
    # one literal with the suffix msg, so nvcc 13 (and g++) stop at every FATAL, on a GPU too
    write(tmp_path, {"support.h": """\
        #include <cstdio>
        #include <cstdlib>
        #define FATAL(msg, ...) do { fprintf(stderr, "[%s:%d] "msg"\\n", __FILE__, __LINE__, ##__VA_ARGS__); \\
                                     exit(-1); } while (0)
        """, "main.cu": """\
        #include "support.h"
        __global__ void fill(int *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 2 * i; }
        int main(int argc, char **argv) {
            int n = argc > 1 ? atoi(argv[1]) : 8, *x, h[8];
            if (n > 8) FATAL("at most 8 elements, asked for %d", n);
            if (cudaMalloc((void **)&x, n * sizeof(int)) != cudaSuccess) FATAL("Unable to allocate device memory");
            fill<<<1, 8>>>(x, n);
            cudaMemcpy(h, x, n * sizeof(int), cudaMemcpyDeviceToHost);
            printf("%d %d\\n", h[1], h[n - 1]);
            return 0;
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cu"], capture=True)
    assert (r.returncode, r.stdout) == (0, "2 14\n"), r.stderr
    assert "built the file as C++03" in r.stderr and "space between the literal" in r.stderr
    r = run_program(["main.cu"], ["9"], capture=True)                  # the macro's parameter was replaced
    assert r.returncode == 255 and "[main.cu:5] at most 8 elements, asked for 9" in r.stderr
    # a unit that C++03 cannot build either keeps nvcc's own message
    (tmp_path / "main.cu").write_text('#include "support.h"\nint main() { auto n = 1; FATAL("bad"); }\n')
    with pytest.raises(CompileError, match="literal operator"):
        run_program(["main.cu"], options=["-std=c++11"], capture=True)


def test_a_standard_header_visual_studio_brings_in_is_included_and_the_student_is_told(tmp_path, monkeypatch):
    # a Windows lab's host file: ceil and memcpy with only <cstdio> and <iostream> (MSVC's bring in the rest)
    write(tmp_path, {"grid.cpp": """\
        #include <cstdio>
        #include <iostream>
        int main() {
            char label[8];
            memcpy(label, "blocks", 7);
            printf("%s %d\\n", label, (int)ceil(1000 / 256.0));
            return 0;
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["grid.cpp"], options=["-o", "grid"], capture=True)
    assert (r.returncode, r.stdout) == (0, "blocks 4\n"), r.stderr
    assert "memcpy without #include <cstring>" in r.stderr and "ceil without #include <cmath>" in r.stderr
    # a name no standard header declares is still g++'s error
    (tmp_path / "grid.cpp").write_text("int main() { return not_declared_anywhere(); }\n")
    with pytest.raises(CompileError, match="not_declared_anywhere"):
        run_program(["grid.cpp"], capture=True)


def test_a_std_name_visual_studio_brings_in_is_included_and_the_student_is_told(tmp_path, monkeypatch):
    # host threads summing beside a kernel, with <vector> and <algorithm> but not <thread> or <numeric>:
    # Visual Studio's headers bring both in, nvcc's front end on Linux stops at 'namespace "std" has no member'
    write(tmp_path, {"sum.cu": """\
        #include <cstdio>
        #include <vector>
        #include <algorithm>
        __global__ void twice(int* x) { x[threadIdx.x] *= 2; }
        int main() {
            std::vector<int> part(4, 0);
            std::vector<std::thread> workers;
            for (int t = 0; t < 4; ++t) workers.emplace_back([&part, t] { part[t] = t + 1; });
            for (auto& w : workers) w.join();
            int* d;
            cudaMalloc(&d, 4 * sizeof(int));
            cudaMemcpy(d, part.data(), 4 * sizeof(int), cudaMemcpyHostToDevice);
            twice<<<1, 4>>>(d);
            cudaMemcpy(part.data(), d, 4 * sizeof(int), cudaMemcpyDeviceToHost);
            printf("%d\\n", std::accumulate(part.begin(), part.end(), 0));
            return 0;
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["sum.cu"], capture=True)
    assert (r.returncode, r.stdout) == (0, "20\n"), r.stderr
    assert "std::thread without #include <thread>" in r.stderr and "std::accumulate without #include <numeric>" in r.stderr
    assert "Add #include <thread> #include <numeric>" in r.stderr or "Add #include <numeric> #include <thread>" in r.stderr
    # a std:: name no standard header declares is still nvcc's error
    (tmp_path / "sum.cu").write_text("int main() { return std::not_in_any_header(); }\n")
    with pytest.raises(CompileError, match="not_in_any_header"):
        run_program(["sum.cu"], capture=True)

VS_PROJECT = """<?xml version="1.0" encoding="utf-8"?>
<Project DefaultTargets="Build" ToolsVersion="15.0" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <PropertyGroup><IncludePath>C:/dev/somelib/include;{folders};$(IncludePath)</IncludePath></PropertyGroup>
  <ItemDefinitionGroup><CudaCompile><Include>./;%(Include)</Include></CudaCompile></ItemDefinitionGroup>
  <ItemGroup><CudaCompile Include="scale.cu" /></ItemGroup>
</Project>
"""


def test_headers_in_the_include_folders_of_a_visual_studio_project_are_found_and_the_student_is_told(tmp_path,
                                                                                                      monkeypatch):
    # a Windows course: every lab's project lists the course's shared folder (and a library on the author's C:
    # drive), and the labs say only #include "check.h"; the shared header includes one from a second folder
    write(tmp_path, {"Shared/check.h": '#pragma once\n#include "sizes.h"\n#define CHECK(x) x\n',
                     "Config/sizes.h": "#define N 6\n",
                     "lab2/scale.cu": """\
        #include <cstdio>
        #include "check.h"
        __global__ void scale(int *p) { p[threadIdx.x] = 7 * threadIdx.x; }
        int main() {
            int *d, h[N];
            CHECK(cudaMalloc(&d, sizeof h));
            scale<<<1, N>>>(d);
            cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d\\n", h[N - 1]);
            return 0;
        }
        """})
    (tmp_path / "lab2" / "lab2.vcxproj").write_text(VS_PROJECT.format(folders="../Shared;$(ProjectDir)..\\Config"))
    monkeypatch.chdir(tmp_path / "lab2")
    r = run_program(["scale.cu"], options=["-o", "scale"], capture=True)
    assert (r.returncode, r.stdout) == (0, "35\n"), r.stderr
    assert "Visual Studio project lab2.vcxproj" in r.stderr and "nvcc -I../Shared -I../Config" in r.stderr
    # a project whose folders do not hold the header leaves nvcc's missing file as it was
    (tmp_path / "lab2" / "lab2.vcxproj").write_text(VS_PROJECT.format(folders="../Config"))
    (tmp_path / "lab2" / "scale.cu").write_text('#include "check.h"\nint main() { return 0; }\n')
    with pytest.raises(CompileError, match="check.h"):
        run_program(["scale.cu"], capture=True)


# ------------------------------------------------------------------ PTX-level linking
A_PTX = """
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) twice(.param .b32 twice_param_0);
.extern .global .align 4 .u32 counter;
.global .align 4 .u32 hidden = 5;
.visible .entry first(.param .u64 first_param_0)
{
\t.reg .b32 %r<3>;
\tld.global.u32 %r1, [hidden];
\tret;
}
"""
B_PTX = """
.version 8.5
.target sm_80
.address_size 64
.visible .global .align 4 .u32 counter;
.global .align 4 .u32 hidden = 7;
.visible .func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
\t.reg .b32 %r<3>;
\tld.param.u32 %r1, [twice_param_0];
\tld.global.u32 %r2, [hidden];
\tst.param.b32 [func_retval0], %r1;
\tret;
}
.visible .entry second()
{
\tret;
}
"""


def test_linked_ptx_resolves_externs_and_keeps_each_files_private_symbols():
    module = parse(link([A_PTX, B_PTX]))
    assert sorted(f.name for f in module.entries) == ["first", "second"]
    assert not module.functions["twice"].extern and not module.variables["counter"].extern
    # each file's own `static __device__ int hidden`, with its own value
    assert sorted(module.variables) == ["counter", "hidden", "hidden__tu2"]
    assert module.variables["hidden"].init != module.variables["hidden__tu2"].init
    assert module.version == "8.5"


def test_a_definition_in_two_files_is_kept_once():
    assert link([B_PTX, B_PTX.replace("second", "third")]).count(".visible .func") == 1


# ------------------------------------------------------------------ building and running
PROJECT = {
    "src/scale.cuh": """\
        #pragma once
        __device__ inline float scale(float x) { return FACTOR * x; }
        void launch_scale(float* x, int n);
    """,
    "src/scale.cu": """\
        #include "scale.cuh"
        __global__ void scale_all(float* x, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] = scale(x[i]);
        }
        void launch_scale(float* x, int n) { scale_all<<<(n + 127) / 128, 128>>>(x, n); }
    """,
    "src/main.cpp": """\
        #include <cstdio>
        #include <cstdlib>
        #include <cuda_runtime.h>
        #include "scale.cuh"
        int main(int argc, char** argv)
        {
            int n = atoi(argv[1]);
            float* x;
            cudaMallocManaged(&x, n * sizeof(float));
            for (int i = 0; i < n; ++i) x[i] = i;
            launch_scale(x, n);
            cudaDeviceSynchronize();
            FILE* f = fopen("data/greeting.txt", "r");         // relative to where the program runs
            char word[16] = "";
            if (f) fscanf(f, "%15s", word);
            printf("%s: %s x[%d] = %g\\n", argv[0], word, n - 1, x[n - 1]);
            return 0;
        }
    """,
    "data/greeting.txt": "hello\n",
}


def test_a_program_in_several_files_builds_where_it_lies_and_runs_in_the_callers_folder(tmp_path, monkeypatch):
    write(tmp_path, PROJECT)
    monkeypatch.chdir(tmp_path)
    r = run_program(["src/main.cpp", "src/scale.cu"], ["1000"], options=["-DFACTOR=3.0f", "-o", "scaled"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "./scaled: hello x[999] = 2997\n"
    assert [rec.kernel for rec in r.launches] == ["scale_all"]


STAND_INS = {
    # the CUDA Handbook's chCUDA.h: files built without a GPU declare their own stand-ins for CUDA's names
    "stand_in.h": """\
        #ifdef NO_CUDA
        typedef int cudaError_t;
        static const cudaError_t cudaSuccess = 0;
        #else
        #include <cuda_runtime.h>
        #endif
    """,
    "cpu.cpp": """\
        #define NO_CUDA
        #include "stand_in.h"
        cudaError_t cpu_sum(const int* x, int n, long* sum)
        {
            *sum = 0;
            for (int i = 0; i < n; ++i) *sum += x[i];
            return cudaSuccess;
        }
    """,
    "main.cu": """\
        #include <cstdio>
        #include "stand_in.h"
        cudaError_t cpu_sum(const int* x, int n, long* sum);
        int main()
        {
            int x[4] = {1, 2, 3, 4};
            long sum;
            cudaError_t e = cpu_sum(x, 4, &sum);
            printf("%ld %s\\n", sum, cudaGetErrorName(e));
            return 0;
        }
    """,
}


def test_a_host_only_cpp_file_sees_no_cuda_header_it_does_not_include(tmp_path, monkeypatch):
    # nvcc hands a .cpp file to the host compiler as it is; cudalab's legacy.h (CUDA 12's removed calls)
    # goes only to CUDA units and to host files that include the runtime's headers themselves
    write(tmp_path, STAND_INS)
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cu", "cpu.cpp"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "10 cudaSuccess\n"


ORDER_MATTERS = {
    # as cuda-samples' helper_cuda.h: its check is the runtime's only if the runtime's headers came first
    "check.h": """\
        #ifdef __DRIVER_TYPES_H__
        static int runtime_check(cudaError_t e) { return (int)e; }
        #define CHECK(x) runtime_check(x)
        #endif
    """,
    "main.cpp": """\
        #include <cstdio>
        #include "check.h"
        #include <cuda.h>
        #include <cuda_runtime.h>
        #ifndef CHECK
        static int driver_check(CUresult r) { return (int)r; }
        #define CHECK(x) driver_check(x)
        #endif
        int main() { printf("%d\\n", CHECK(cuInit(0))); return 0; }
    """,
}


def test_a_host_file_that_includes_the_runtime_late_sees_its_headers_in_its_own_order(tmp_path, monkeypatch):
    """binomialOptions_nvrtc: legacy.h, given first, would include the runtime's header before check.h."""
    write(tmp_path, ORDER_MATTERS)
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cpp"], options=["-lcuda"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0\n"


def test_editing_a_header_rebuilds_the_files_that_include_it(tmp_path, monkeypatch):
    write(tmp_path, PROJECT)
    monkeypatch.chdir(tmp_path)
    first = run_program(["src/main.cpp", "src/scale.cu"], ["4"], options=["-DFACTOR=2.0f"])
    (tmp_path / "src" / "scale.cuh").write_text((tmp_path / "src" / "scale.cuh").read_text()
                                                .replace("FACTOR * x", "FACTOR * x + 1"))
    second = run_program(["src/main.cpp", "src/scale.cu"], ["4"], options=["-DFACTOR=2.0f"])
    assert (first.stdout, second.stdout) == ("./a.out: hello x[3] = 6\n", "./a.out: hello x[3] = 7\n")


RDC = {
    "helper.cu": """\
        __device__ int calls = 0;
        static __device__ int offset = 100;         // this file's own, like the other file's
        __device__ float add_offset(float x) { atomicAdd(&calls, 1); return x + offset; }
    """,
    "main.cu": """\
        #include <cstdio>
        extern __device__ int calls;
        __device__ float add_offset(float x);
        static __device__ int offset = 7;
        __global__ void apply(float* x) { x[threadIdx.x] = add_offset(x[threadIdx.x]) + offset; }
        int main()
        {
            float* x;
            cudaMallocManaged(&x, 64 * sizeof(float));
            for (int i = 0; i < 64; ++i) x[i] = i;
            apply<<<1, 64>>>(x);
            cudaDeviceSynchronize();
            int n;
            cudaMemcpyFromSymbol(&n, calls, sizeof n);
            printf("x[0] = %g, x[63] = %g, calls = %d\\n", x[0], x[63], n);
        }
    """,
}


def test_rdc_resolves_device_functions_and_variables_across_files(tmp_path, monkeypatch):
    write(tmp_path, RDC)
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cu", "helper.cu"], options=["-rdc=true"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x[0] = 107, x[63] = 170, calls = 64\n"


def test_without_rdc_an_extern_device_function_is_explained(tmp_path, monkeypatch):
    write(tmp_path, RDC)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match="needs relocatable device code: build with -rdc=true"):
        run_program(["main.cu", "helper.cu"])


@pytest.mark.skipif(not (cuda_home() / "include" / "cufft.h").exists(), reason="cuFFT's header is not installed")
def test_a_helper_header_that_names_cuffts_dropped_status_codes_still_builds(tmp_path, monkeypatch):
    # a course's copy of the samples' helper_cuda.h: its cuFFT error strings name three codes CUDA 13 dropped
    # (INCOMPLETE_PARAMETER_LIST 0xA, PARSE_ERROR 0xC, LICENSE_ERROR 0xF), reached once cufft.h comes first
    write(tmp_path, {
        "helper.h": """\
            #ifdef _CUFFT_H_
            static const char* fft_status(cufftResult s) {
                switch (s) {
                case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
                case CUFFT_INCOMPLETE_PARAMETER_LIST: return "CUFFT_INCOMPLETE_PARAMETER_LIST";
                case CUFFT_PARSE_ERROR: return "CUFFT_PARSE_ERROR";
                case CUFFT_LICENSE_ERROR: return "CUFFT_LICENSE_ERROR";
                }
                return "<unknown>";
            }
            #endif
        """,
        "status.cu": """\
            #include <cstdio>
            #include <cufft.h>
            #include "helper.h"
            int main() {
                printf("%s %s %s\\n", fft_status(CUFFT_SUCCESS), fft_status((cufftResult)0xA), fft_status((cufftResult)0xF));
            }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program("status.cu", options=["-o", "status", "-lcufft"])
    assert (r.returncode, r.stdout) == (0, "CUFFT_SUCCESS CUFFT_INCOMPLETE_PARAMETER_LIST CUFFT_LICENSE_ERROR\n"), r.stderr


def test_a_makefile_that_links_cudart_by_name_builds(tmp_path, monkeypatch):
    write(tmp_path, {"linked.cu": """\
        #include <cstdio>
        __global__ void one(int* x) { *x = 1; }
        int main() { int* x; cudaMallocManaged(&x, 4); one<<<1, 1>>>(x); cudaDeviceSynchronize(); printf("%d\\n", *x); }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("linked.cu", options=["-lcudart", "-o", "linked"])
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr


def test_a_makefile_that_links_libraries_the_program_does_not_call_builds(tmp_path, monkeypatch):
    # a course's Makefile links -lcurand -lcublas for every program of a folder; this one calls neither
    write(tmp_path, {"plain.cu": """\
        #include <cstdio>
        __global__ void one(int* x) { *x = 1; }
        int main() { int* x; cudaMallocManaged(&x, 4); one<<<1, 1>>>(x); cudaDeviceSynchronize(); printf("%d\\n", *x); }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("plain.cu", options=["-lcudart", "-lcurand", "-lcublas", "-o", "plain"])
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr


@pytest.mark.skipif(not (cuda_home() / "include" / "cublas_api.h").exists(),
                    reason="cuBLAS's headers come with the nvidia-cublas wheel (cudalab[cublas])")
def test_a_program_that_calls_cublas_without_linking_it_runs_and_is_told_to_add_lcublas(tmp_path, monkeypatch):
    # a course's cuBLAS example built with a bare `nvcc -o NAME NAME.cu` stops at nvcc's link on a GPU
    # machine (`undefined reference to cublasCreate_v2`, seen on an H200); cudalab's cuBLAS answers it
    # all the same, and says what that machine will need
    write(tmp_path, {"handle.cu": """\
        #include <cstdio>
        #include <cublas_v2.h>
        int main() { cublasHandle_t h; int made = cublasCreate(&h); printf("%d\\n", made + cublasDestroy(h)); }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("handle.cu")
    assert (r.returncode, r.stdout) == (0, "0\n"), r.stderr
    assert r.stderr == ("cudalab: note: the program calls cuBLAS (cublasCreate_v2) but its build does not link it: "
                        "cudalab's own cuBLAS answers, while nvcc's link would stop at `undefined reference to "
                        "cublasCreate_v2`. Add -lcublas to the nvcc command (in a notebook: "
                        "%%cuda --compiler-args=\"-lcublas\").\n")
    linked = run_program("handle.cu", options=["-lcublas"])
    assert (linked.stdout, linked.stderr) == ("0\n", "")


def test_a_program_that_calls_a_linked_library_cudalab_does_not_emulate_is_told_so(tmp_path, monkeypatch):
    write(tmp_path, {"solver.cu": """\
        extern "C" int cusolverDnCreate(void** handle);
        int main() { void* h; return cusolverDnCreate(&h); }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"uses cuSOLVER, which cudalab does not emulate"):
        run_program("solver.cu", options=["-lcusolver"])


def test_a_library_the_linker_cannot_find_is_named_plainly():
    from cudalab.programs.build import _link_error
    message = str(_link_error("/usr/bin/ld: cannot find -lfoo: No such file or directory\n"))
    assert message == "the linker found no libfoo (check -l and -L)."


def test_a_kernel_waiting_for_its_children_is_explained(tmp_path, monkeypatch):
    write(tmp_path, {"nested.cu": """\
        __global__ void child(int* x) { x[threadIdx.x] += 1; }
        __global__ void parent(int* x) { child<<<1, 32>>>(x); cudaDeviceSynchronize(); }
        int main() { int* x; cudaMalloc(&x, 128); parent<<<1, 1>>>(x); return cudaDeviceSynchronize(); }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match="CUDA 12 removed it .* cudaStreamTailLaunch") as e:
        run_program("nested.cu", options=["-rdc=true"])
    # the message is about the student's code, not nvcc's note on the --resource-usage cudalab adds
    assert not str(e.value).startswith("nvcc warning") and "Resource usage" not in str(e.value)


def test_a_kernel_that_launches_kernels_without_rdc_is_told_to_build_with_it(tmp_path, monkeypatch):
    # a book's recursive hello world, built as "nvcc -o nested nested.cu": nvcc stops it on a GPU's machine too
    write(tmp_path, {"nested.cu": """\
        #include <cstdio>
        __global__ void hello(int depth) {
            printf("depth %d thread %d\\n", depth, threadIdx.x);
            if (depth < 2 && threadIdx.x == 0) hello<<<1, 2>>>(depth + 1);
        }
        int main() { hello<<<1, 2>>>(0); return cudaDeviceSynchronize(); }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"nested.cu launches kernels from device code .*"
                                           r"\(nvcc -rdc=true nested.cu -lcudadevrt\)"):
        run_program("nested.cu")
    r = run_program("nested.cu", options=["-rdc=true", "-lcudadevrt"], capture=True)    # as the book builds it
    assert r.returncode == 0 and r.stdout.count("depth 2 thread") == 2, r.stderr

def test_the_cli_takes_nvcc_options_files_and_program_arguments(tmp_path, monkeypatch, capfd):
    write(tmp_path, PROJECT)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-D", "FACTOR=0.5f", "-I", "src", "src/main.cpp", "src/scale.cu", "--", "9"]) == 0
    assert capfd.readouterr().out == "./a.out: hello x[8] = 4\n"


@pytest.mark.parametrize("arch", ["-arch=sm_35", "-arch=sm_70", "-gencode=arch=compute_60,code=sm_60"])
def test_a_course_written_for_an_older_gpu_builds_for_the_emulated_gpu(tmp_path, monkeypatch, arch):
    # nvcc 13 builds sm_75 and newer; a Makefile from the Kepler or Volta years still runs
    write(tmp_path, {"old.cu": """\
        #include <cstdio>
        __global__ void twice(int* x) { x[threadIdx.x] *= 2; }
        int main() {
            int *x; cudaMallocManaged(&x, 32 * sizeof(int));
            for (int i = 0; i < 32; i++) x[i] = i;
            twice<<<1, 32>>>(x); cudaDeviceSynchronize();
            printf("%d %d\\n", x[1], x[31]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("old.cu", options=[arch])
    assert (r.returncode, r.stdout) == (0, "2 62\n"), r.stderr


def test_an_architecture_nvcc_no_longer_builds_gives_the_devices_registers_and_occupancy(tmp_path, monkeypatch):
    # Sheffield's COM4521 labs build with -gencode arch=compute_35,code=compute_35: an H200 runs the PTX
    # compiled for itself, and cudaOccupancyMaxPotentialBlockSize sizes the blocks from those registers.
    # Built for nvcc's oldest sm_75 instead, the tiled matmul took 56 registers and 576-thread blocks
    # where the device's own build takes 32 and 1024; the program's output must not depend on that
    write(tmp_path, {"occ.cu": """\
        #include <cstdio>
        __global__ void tile(const float* a, const float* b, float* c, int n) {
            extern __shared__ float s[];
            float* as = s; float* bs = s + blockDim.x * blockDim.y;
            int tx = threadIdx.x, ty = threadIdx.y, w = blockDim.x; float sum = 0;
            for (int t = 0; t < n / w; t++) {
                as[ty * w + tx] = a[(blockIdx.y * w + ty) * n + t * w + tx];
                bs[ty * w + tx] = b[(t * w + ty) * n + blockIdx.x * w + tx];
                __syncthreads();
                for (int k = 0; k < w; k++) sum += as[ty * w + k] * bs[k * w + tx];
                __syncthreads();
            }
            c[(blockIdx.y * w + ty) * n + blockIdx.x * w + tx] = sum;
        }
        int shared(int threads) { return 2 * threads * sizeof(float); }
        int main() {
            cudaFuncAttributes f; cudaFuncGetAttributes(&f, tile);
            int grid, block; cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, tile, shared, 0);
            printf("ptx %d, %d registers, blocks of %d\\n", f.ptxVersion, f.numRegs, block);
        }
    """})
    monkeypatch.chdir(tmp_path)
    native = run_program("occ.cu")
    assert native.returncode == 0, native.stderr
    for old in (["-gencode", "arch=compute_35,code=compute_35"], ["-arch=sm_50"]):
        assert run_program("occ.cu", options=old).stdout == native.stdout


def test_a_kernel_built_for_an_older_architecture_reports_it_as_its_ptx_version(tmp_path, monkeypatch):
    # as on a GPU, whose driver compiles the sm_75 PTX for itself: CUB (and so every Thrust
    # algorithm) looks for ptxVersion among the architectures it was built for, else it fails
    write(tmp_path, {"v.cu": """\
        #include <cstdio>
        __global__ void k() {}
        int main() {
            cudaFuncAttributes a; cudaFuncGetAttributes(&a, k);
            int major; cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
            printf("%d %d\\n", a.ptxVersion, a.binaryVersion / 10 == major);
        }
    """})
    monkeypatch.chdir(tmp_path)
    assert run_program("v.cu", options=["-arch=sm_75"]).stdout == "75 1\n"


def test_files_and_folders_with_spaces_in_their_names_build(tmp_path, monkeypatch):
    # a course's "02 Kernels/02 matmul.cu": nvcc's dependency list escapes the spaces
    write(tmp_path, {"02 Kernels/02 matmul.cu": '#include "my helpers.cuh"\nint main() { return twice(21) - 42; }\n',
                     "02 Kernels/my helpers.cuh": "inline int twice(int x) { return 2 * x; }\n"})
    monkeypatch.chdir(tmp_path / "02 Kernels")
    r = run_program("02 matmul.cu", options=["-o", "02 matmul"])
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("std", [["-std=c++11"], ["-std", "c++14", "-Xcompiler", "-std=c++14"]])
def test_a_course_that_asks_for_cpp11_still_builds_with_cuda_13s_headers(tmp_path, monkeypatch, std):
    # cooperative groups (and Thrust, CUB) #error below C++17 in CUDA 13; such a unit is built as C++17
    write(tmp_path, {"groups.cu": """\
        #include <cstdio>
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        __global__ void block_sum(int* out) {
            cg::thread_block block = cg::this_thread_block();
            atomicAdd(out, (int)block.thread_rank());
        }
        int main() {
            int *out; cudaMallocManaged(&out, sizeof(int)); *out = 0;
            block_sum<<<1, 64>>>(out); cudaDeviceSynchronize();
            printf("%d\\n", *out);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("groups.cu", options=std)
    assert (r.returncode, r.stdout) == (0, "2016\n"), r.stderr


def test_runtime_calls_cuda_13_removed_still_build_as_cuda_12_declared_them(tmp_path, monkeypatch):
    # managed memory prefetched and advised by device number (and by location, with the _v2 calls),
    # cudaThreadSynchronize and its limits; x is read after both launches
    write(tmp_path, {"um.cu": """\
        #include <cstdio>
        __global__ void inc(int* x) { x[threadIdx.x] += 1; }
        int main() {
            int *x, device = 0; cudaMallocManaged(&x, 32 * sizeof(int));
            for (int i = 0; i < 32; i++) x[i] = i;
            cudaError_t advised = cudaMemAdvise(x, 32 * sizeof(int), cudaMemAdviseSetPreferredLocation, device);
            cudaError_t there = cudaMemPrefetchAsync(x, 32 * sizeof(int), device);
            inc<<<1, 32>>>(x);
            cudaError_t back = cudaMemPrefetchAsync(x, 32 * sizeof(int), cudaCpuDeviceId, 0);
            cudaError_t synced = cudaThreadSynchronize();
            size_t heap = 0;
            cudaThreadSetLimit(cudaLimitMallocHeapSize, 1 << 24);
            cudaThreadGetLimit(&heap, cudaLimitMallocHeapSize);
            // CUDA 12.2's _v2 forms, with a cudaMemLocation (CUDA 13's plain names)
            cudaMemLocation gpu; gpu.type = cudaMemLocationTypeDevice; gpu.id = device;
            cudaError_t v2 = cudaMemAdvise_v2(x, 32 * sizeof(int), cudaMemAdviseSetReadMostly, gpu);
            cudaError_t v2there = cudaMemPrefetchAsync_v2(x, 32 * sizeof(int), gpu, 0);
            inc<<<1, 32>>>(x);
            cudaDeviceSynchronize();
            printf("%d %d %d %d %d %d %zu %d %d\\n", advised, there, back, synced, x[0], x[31], heap, v2, v2there);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("um.cu", options=["-o", "um"])
    assert (r.returncode, r.stdout) == (0, "0 0 0 0 2 33 16777216 0 0\n"), r.stderr


def test_graphs_built_with_cuda_12s_edge_calls_still_build_and_run(tmp_path, monkeypatch):
    # CUDA 13 gave every call that lists a graph's edges a cudaGraphEdgeData argument; programs written
    # for CUDA 10 to 12 (NCI's graph exercises) pass the nodes and a count only
    write(tmp_path, {"graph.cu": """\
        #include <cstdio>
        __global__ void square(float *x) { x[threadIdx.x] *= x[threadIdx.x]; }
        int main() {
            float *d, h[32];
            for (int i = 0; i < 32; i++) h[i] = i;
            cudaMalloc(&d, sizeof h);
            cudaGraph_t graph; cudaGraphCreate(&graph, 0);
            cudaGraphNode_t up, kernel, down;
            cudaGraphAddMemcpyNode1D(&up, graph, NULL, 0, d, h, sizeof h, cudaMemcpyHostToDevice);
            cudaKernelNodeParams k = {};
            void *args[] = {&d};
            k.func = (void *)square; k.gridDim = dim3(1); k.blockDim = dim3(32); k.kernelParams = args;
            cudaGraphAddKernelNode(&kernel, graph, NULL, 0, &k);
            cudaGraphAddMemcpyNode1D(&down, graph, NULL, 0, h, d, sizeof h, cudaMemcpyDeviceToHost);
            cudaError_t e1 = cudaGraphAddDependencies(graph, &up, &kernel, 1);
            cudaError_t e2 = cudaGraphAddDependencies(graph, &kernel, &down, 1);
            size_t edges = 0, before = 0;
            cudaGraphGetEdges(graph, NULL, NULL, &edges);
            cudaGraphNodeGetDependencies(down, NULL, &before);
            cudaGraphExec_t exec;
            cudaGraphInstantiate(&exec, graph, NULL, NULL, 0);
            cudaGraphLaunch(exec, 0);
            cudaStreamSynchronize(0);
            // a capture asked about as CUDA 12 asked: no edge data
            cudaStream_t s; cudaStreamCreate(&s);
            cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
            square<<<1, 32, 0, s>>>(d);
            cudaStreamCaptureStatus status; const cudaGraphNode_t *last; size_t nlast = 0;
            cudaError_t e3 = cudaStreamGetCaptureInfo(s, &status, NULL, NULL, &last, &nlast);
            cudaGraphNode_t keep = last[0];
            cudaError_t e4 = cudaStreamUpdateCaptureDependencies(s, &keep, nlast, cudaStreamSetCaptureDependencies);
            cudaGraph_t captured; cudaStreamEndCapture(s, &captured);
            printf("%d %d %d %d %zu %zu %d %zu %g\\n", e1, e2, e3, e4, edges, before,
                   status == cudaStreamCaptureStatusActive, nlast, h[3]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("graph.cu", options=["-o", "graph"])
    assert (r.returncode, r.stdout) == (0, "0 0 0 0 2 1 1 1 9\n"), r.stderr


def test_pointer_attributes_answer_to_cuda_10s_memory_type_too(tmp_path, monkeypatch):
    # unified-addressing lessons before CUDA 11 ask attributes.memoryType, which CUDA 11 renamed type
    write(tmp_path, {"uva.cu": """\
        #include <cstdio>
        int main() {
            float *device, *pinned;
            cudaMalloc(&device, 64); cudaMallocHost(&pinned, 64);
            cudaPointerAttributes a, b;
            cudaPointerGetAttributes(&a, device); cudaPointerGetAttributes(&b, pinned);
            printf("%d %d %d\\n", a.memoryType == cudaMemoryTypeDevice, b.memoryType == cudaMemoryTypeHost,
                   a.memoryType == a.type);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("uva.cu")
    assert (r.returncode, r.stdout) == (0, "1 1 1\n"), r.stderr


def test_nvtx_2_with_its_library_builds_over_nvtx_3s_headers(tmp_path, monkeypatch):
    # hackathon labs mark ranges with NVTX 2 (<nvToolsExt.h>, -lnvToolsExt), which CUDA 13 no longer ships
    write(tmp_path, {"ranges.cu": """\
        #include <cstdio>
        #include <nvToolsExt.h>
        __global__ void inc(int *x) { x[threadIdx.x] += 1; }
        int main() {
            int *x; cudaMallocManaged(&x, 32 * sizeof(int));
            for (int i = 0; i < 32; i++) x[i] = i;
            int depth = nvtxRangePushA("step");
            nvtxMarkA("launch");
            inc<<<1, 32>>>(x); cudaDeviceSynchronize();
            nvtxRangePop();
            printf("%d %d\\n", depth >= -2, x[31]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("ranges.cu", options=["-DUSE_NVTX", "-lnvToolsExt", "-o", "ranges"])
    assert (r.returncode, r.stdout) == (0, "1 32\n"), r.stderr
def test_assert_in_a_kernel_builds_without_including_cassert_as_with_cuda_12(tmp_path, monkeypatch):
    # a softmax of a Chinese video course checks its shape with assert() in the kernel and includes only
    # <cuda_runtime.h>; CUDA 13's headers no longer give the device side <assert.h>
    write(tmp_path, {"softmax.cu": """\
        #include <cstdio>
        #include "cuda_runtime.h"
        __global__ void rows(int cols, int *seen) { assert(cols <= 32); seen[threadIdx.x] = cols; }
        int main() {
            int *seen; cudaMallocManaged(&seen, 32 * sizeof(int));
            rows<<<1, 32>>>(32, seen);
            cudaError_t fine = cudaDeviceSynchronize();
            rows<<<1, 32>>>(33, seen);
            cudaError_t broken = cudaDeviceSynchronize();
            printf("%s %d %s\\n", cudaGetErrorName(fine), seen[31], cudaGetErrorName(broken));
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("softmax.cu", options=["-o", "softmax"])
    assert r.stdout == "cudaSuccess 32 cudaErrorAssert\n", r.stderr
    assert "Assertion `cols <= 32` failed" in r.stderr


CONTEXT_OF_BEFORE_CUDA_13 = """\
    /* a driver-API host file as courses wrote them from CUDA 3.2 to 12: cuCtxCreate(&ctx, flags, dev) */
    #include <stdio.h>
    #include <cuda.h>
    int main(void) {
        CUdevice dev; CUcontext ctx; CUdeviceptr d; unsigned int back[4];
        cuInit(0);
        cuDeviceGet(&dev, 0);
        CUresult made = cuCtxCreate(&ctx, CU_CTX_SCHED_AUTO, dev);
        cuMemAlloc(&d, sizeof back);
        cuMemsetD32(d, 7u, 4);
        cuMemcpyDtoH(back, d, sizeof back);
        cuMemFree(d);
        printf("%d %u %u %d\\n", (int)made, back[0], back[3], (int)cuCtxDestroy(ctx));
        return 0;
    }
"""


@pytest.mark.parametrize("name", ["ctx.c", "ctx.cpp"])
def test_a_driver_program_that_creates_its_context_as_cuda_12_did_still_builds(tmp_path, monkeypatch, name):
    # CUDA 13's cuda.h made cuCtxCreate the four-argument cuCtxCreate_v4; the three-argument call of
    # every older driver program (a 2011 course's multi-GPU examples, in C and C++) goes to
    # cuCtxCreate_v2, which every driver still has
    write(tmp_path, {name: CONTEXT_OF_BEFORE_CUDA_13})
    monkeypatch.chdir(tmp_path)
    r = run_program(name, options=["-o", "ctx", "-lcuda"])
    assert (r.returncode, r.stdout) == (0, "0 7 7 0\n"), r.stderr


def test_a_makefiles_include_path_to_another_cuda_toolkit_is_left_to_nvcc(tmp_path, monkeypatch):
    # gpu-mode's lecture 2 Makefile builds with -I/usr/local/cuda/include: the toolkit that builds.
    # cudalab's nvcc is the wheel's, and another version's headers there would be taken first
    write(tmp_path, {
        "old-cuda/include/crt/host_runtime.h": "#error another toolkit's host_runtime.h\n",
        "old-cuda/include/cuda_runtime.h": "#error another toolkit's cuda_runtime.h\n",
        "include/util.h": "static int twice(int x) { return 2 * x; }\n",
        "add.cu": """\
            #include <cstdio>
            #include <cuda.h>
            #include "util.h"
            __global__ void add(int *x) { x[threadIdx.x] += threadIdx.x; }
            int main() {
                int *x; cudaMallocManaged(&x, 4 * sizeof(int));
                for (int i = 0; i < 4; i++) x[i] = twice(i);
                add<<<1, 4>>>(x); cudaDeviceSynchronize();
                printf("%d %d\\n", x[1], x[3]);
            }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program("add.cu", options=["-O3", "-I" + str(tmp_path / "old-cuda/include"), "-Iinclude", "-o", "add",
                                       "-lcudart", "-L" + str(tmp_path / "old-cuda/lib64")])
    assert (r.returncode, r.stdout) == (0, "3 9\n"), r.stderr


def test_functors_derived_from_thrusts_unary_and_binary_function_still_build(tmp_path, monkeypatch):
    # course functors derive from thrust::unary_function / binary_function, which CUDA 13's Thrust
    # no longer has, for the typedefs they gave; Thrust's own functors stay beside them
    write(tmp_path, {"functors.cu": """\
        #include <cstdio>
        #include <thrust/functional.h>
        struct saxpy : public thrust::binary_function<float, float, float> {
            float a;
            saxpy(float a) : a(a) {}
            __host__ __device__ result_type operator()(first_argument_type x, second_argument_type y) const
            { return a * x + y; }
        };
        template <typename T> struct square : public thrust::unary_function<T, T> {
            __host__ __device__ typename square::result_type operator()(typename square::argument_type x) const
            { return x * x; }
        };
        __global__ void apply(float* v, saxpy f)
        { v[threadIdx.x] = square<float>()(f(v[threadIdx.x], thrust::plus<float>()(1.0f, 2.0f))); }
        int main() {
            float* v; cudaMallocManaged(&v, 4 * sizeof(float));
            for (int i = 0; i < 4; i++) v[i] = i;
            apply<<<1, 4>>>(v, saxpy(2.0f));
            cudaDeviceSynchronize();
            printf("%g %g %g %g\\n", v[0], v[1], v[2], v[3]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("functors.cu")
    assert (r.returncode, r.stdout) == (0, "9 25 49 81\n"), r.stderr


def test_a_program_that_ships_its_own_older_thrust_builds_with_that_thrusts_functor_bases(tmp_path, monkeypatch):
    # a 2013 GTC workshop keeps Thrust 1.7 beside its exercises and builds with "nvcc -I. spoilers.cu":
    # that Thrust defines unary_function itself, so cudalab's stand-in for CUDA 13 must stay out of the
    # way (it stopped the build: "class template thrust::unary_function has already been defined").
    # Here a two-header stand-in for such a Thrust, with its own version number
    write(tmp_path, {
        "thrust/detail/config/host_device.h": "#pragma once\n#define OLD_THRUST_HD __host__ __device__\n",
        "thrust/functional.h": """\
            #pragma once
            #include <thrust/detail/config/host_device.h>
            namespace thrust {
            template <typename Argument, typename Result> struct unary_function
            { typedef Argument argument_type; typedef Result result_type; enum { shipped = 17 }; };
            }
        """,
        "twice.cu": """\
            #include <cstdio>
            #include <thrust/functional.h>
            struct twice : thrust::unary_function<int, int> {
                OLD_THRUST_HD result_type operator()(argument_type x) const { return 2 * x + shipped; }
            };
            __global__ void apply(int* v) { v[threadIdx.x] = twice()(v[threadIdx.x]); }
            int main() {
                int* v; cudaMallocManaged(&v, 2 * sizeof(int));
                v[0] = 1; v[1] = 2;
                apply<<<1, 2>>>(v);
                cudaDeviceSynchronize();
                printf("%d %d\\n", v[0], v[1]);
            }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program("twice.cu", options=["-I.", "-o", "twice"])
    assert (r.returncode, r.stdout) == (0, "19 21\n"), r.stderr


def test_a_thrust_program_that_names_pair_without_its_header_builds_as_with_cuda_12(tmp_path, monkeypatch):
    # a 2014 book keeps unique_by_key_copy's result in a thrust::pair and includes only the algorithms'
    # headers: CUDA 12's Thrust brought pair in with them, CUDA 13's does not
    write(tmp_path, {"ends.cu": """\
        #include <cstdio>
        #include <thrust/host_vector.h>
        #include <thrust/unique.h>
        int main() {
            int k[6] = {1, 1, 2, 2, 2, 3}; char v[6] = {'a', 'b', 'c', 'd', 'e', 'f'};
            thrust::host_vector<int> keys(k, k + 6), out_k(6);
            thrust::host_vector<char> vals(v, v + 6), out_v(6);
            thrust::pair<thrust::host_vector<int>::iterator, thrust::host_vector<char>::iterator> ends =
                thrust::unique_by_key_copy(keys.begin(), keys.end(), vals.begin(), out_k.begin(), out_v.begin());
            printf("%d %c%c%c\\n", (int)(ends.first - out_k.begin()), out_v[0], out_v[1], out_v[2]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("ends.cu")
    assert (r.returncode, r.stdout) == (0, "3 acf\n"), r.stderr


def test_a_thrust_program_that_names_iterators_and_algorithms_it_never_included_builds_as_with_cuda_12(
        tmp_path, monkeypatch):
    # a workshop's for_each over a counting_iterator and a homework's remove_copy_if and distance, each including only
    # the container's and one algorithm's header: Thrust up to CUDA 12 brought the rest in with them
    write(tmp_path, {"odds.cu": """\
        #include <cstdio>
        #include <thrust/device_vector.h>
        #include <thrust/for_each.h>
        struct square { int* out; __device__ void operator()(int i) { out[i] = i * i; } };
        struct even { __host__ __device__ bool operator()(int x) { return x % 2 == 0; } };
        int main() {
            thrust::device_vector<int> v(6), odd(6);
            square f = {thrust::raw_pointer_cast(v.data())};
            thrust::for_each(thrust::counting_iterator<int>(0), thrust::counting_iterator<int>(6), f);
            int n = thrust::distance(odd.begin(), thrust::remove_copy_if(v.begin(), v.end(), odd.begin(), even()));
            printf("%d: %d %d %d\\n", n, (int)odd[0], (int)odd[1], (int)odd[2]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    # built with the workshop's -std=c++11, which CUDA 13's Thrust refuses first: C++17, then the headers
    r = run_program(["odds.cu"], options=["-std=c++11"])
    assert (r.returncode, r.stdout) == (0, "3: 1 9 25\n"), r.stderr


def test_an_mdspan_passed_where_int_extents_are_taken_builds_as_with_cuda_12(tmp_path, monkeypatch):
    # NVIDIA's CUDA C++ tutorial makes its view with cuda::std::mdspan(ptr, height, width), which deduces size_t
    # extents, and hands it to a function of dextents<int, 2>: CUDA 12's libcu++ converted it in C++17,
    # CUDA 13's nvcc stops at "no suitable user-defined conversion"
    write(tmp_path, {"heat.cu": """\
        #include <cstdio>
        #include <cuda/std/mdspan>
        using grid = cuda::std::mdspan<const float, cuda::std::dextents<int, 2>>;
        __host__ __device__ float around(int row, int col, grid t) {
            return t(row - 1, col) + t(row + 1, col) + t(row, col - 1) + t(row, col + 1) - 4 * t(row, col);
        }
        __global__ void step(grid t, float *out) { out[threadIdx.x] = around(1, 1 + threadIdx.x, t); }
        int main() {
            const int rows = 3, cols = 5;
            float *in, *out;
            cudaMallocManaged(&in, rows * cols * sizeof(float));
            cudaMallocManaged(&out, 3 * sizeof(float));
            for (int i = 0; i < rows * cols; i++) in[i] = i * i;
            cuda::std::mdspan view(static_cast<const float *>(in), rows, cols);
            step<<<1, 3>>>(view, out);
            cudaDeviceSynchronize();
            printf("%g %g %g %g\\n", out[0], out[1], out[2], around(1, 2, view));
        }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["heat.cu"], options=["-o", "heat"], capture=True)
    # a cell's four neighbours less four times itself, over i * i: 2 + 2 * cols^2 = 52 everywhere
    assert (r.returncode, r.stdout) == (0, "52 52 52 52\n"), r.stderr
    assert "heat.cu converts a cuda::std::mdspan" in r.stderr and "dextents<int, 2>> m(ptr, rows, cols)" in r.stderr
    again = run_program(["heat.cu"], options=["-o", "heat"], capture=True)      # built before: still said
    assert "converts a cuda::std::mdspan" in again.stderr


def test_errors_name_the_programs_line_when_a_header_with_device_code_comes_first(tmp_path, monkeypatch):
    # nvcc numbers files by their first device code: here helpers.cuh is its file 1, main.cu file 2
    write(tmp_path, {"helpers.cuh": """\
        __device__ int twice(int x) { return 2 * x; }
        __global__ void unused(int* x) { x[0] = twice(x[0]); }
    """, "main.cu": """\
        #include <cstdio>
        #include "helpers.cuh"
        __global__ void spill(int* x)
        {
            x[threadIdx.x * 1000000] = twice(threadIdx.x);
        }
        int main() { int* x; cudaMalloc(&x, 64); spill<<<1, 32>>>(x); printf("%d\\n", (int)cudaDeviceSynchronize()); }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("main.cu")
    assert r.stdout == "700\n" and "at line 5 in kernel spill" in r.stderr, r.stderr


def test_a_device_query_reads_the_properties_cuda_13_moved_to_attributes(tmp_path, monkeypatch):
    # prop.clockRate and prop.deviceOverlap, as device queries and CUDA by Example read them, agree with
    # the attributes that replace them; the fields after them keep their place
    write(tmp_path, {"query.cu": """\
        #include <cstdio>
        int main() {
            cudaDeviceProp prop;
            cudaGetDeviceProperties(&prop, 0);
            int clock, memory, sms;
            cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
            cudaDeviceGetAttribute(&memory, cudaDevAttrMemoryClockRate, 0);
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            printf("%d %d %d %d %d %d\\n", prop.clockRate == clock, prop.memoryClockRate == memory,
                   prop.deviceOverlap, prop.computeMode, prop.multiProcessorCount == sms, prop.clockRate > 0);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("query.cu")
    assert (r.returncode, r.stdout) == (0, "1 1 1 0 1 1\n"), r.stderr


def test_the_warp_shuffles_before_cuda_9_exchange_among_the_active_threads(tmp_path, monkeypatch):
    # __shfl_down and friends without _sync, as books written for Kepler use them; the last one runs
    # in the first half-warp only, with width 16
    write(tmp_path, {"shuffles.cu": """\
        #include <cstdio>
        __global__ void shuffles(int* out, float* third)
        {
            int lane = threadIdx.x, sum = lane, all = lane;
            for (int d = 16; d > 0; d /= 2) sum += __shfl_down(sum, d);
            for (int m = 16; m > 0; m /= 2) all += __shfl_xor(all, m);
            float f = __shfl(lane * 0.5f, 3);
            int before = __shfl_up(lane, 1);
            if (lane == 0) out[0] = sum;
            if (lane == 31) out[1] = all;
            if (lane == 5) { out[2] = before; *third = f; }
            if (lane < 16) {
                int half = lane;
                for (int d = 8; d > 0; d /= 2) half += __shfl_down(half, d, 16);
                if (lane == 0) out[3] = half;
            }
        }
        int main() {
            int* out; float* f;
            cudaMallocManaged(&out, 4 * sizeof(int)); cudaMallocManaged(&f, sizeof(float));
            shuffles<<<1, 32>>>(out, f);
            cudaDeviceSynchronize();
            printf("%d %d %d %d %g\\n", out[0], out[1], out[2], out[3], *f);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("shuffles.cu", options=["-arch=sm_30"])
    assert (r.returncode, r.stdout) == (0, "496 496 4 120 1.5\n"), r.stderr


def test_the_warp_votes_before_cuda_9_count_the_active_threads(tmp_path, monkeypatch):
    # __any, __all and __ballot without _sync, as a 2015 sample and a course's warp reduction call them: ptxas
    # refuses their PTX for compute 7.0 and up; here each votes among the warp's active threads, as they did
    # (libcu++'s headers, which name a struct __any and a template __all of their own, build beside them)
    write(tmp_path, {"votes.cu": """\
        #include <cstdio>
        #include <cuda/std/functional>
        __global__ void votes(unsigned* out)
        {
            int lane = cuda::std::modulus<int>()(threadIdx.x, 32), warp = threadIdx.x / 32;
            unsigned third = __ballot(lane % 3 == 0);
            int some = __any(threadIdx.x == 40), every = __all(threadIdx.x < 40);
            if (lane == 0) { out[4 * warp] = third; out[4 * warp + 1] = some; out[4 * warp + 2] = every; }
            if (lane >= 16) {                 // half the warp: only its threads vote
                unsigned upper = __ballot(1);
                if (lane == 16) out[4 * warp + 3] = upper;
            }
        }
        int main() {
            unsigned* out;
            cudaMallocManaged(&out, 8 * sizeof(unsigned));
            votes<<<1, 64>>>(out);
            cudaDeviceSynchronize();
            for (int i = 0; i < 8; i++) printf("%x ", out[i]);
            printf("\\n");
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("votes.cu", options=["-arch=sm_35"])
    assert (r.returncode, r.stdout) == (0, "49249249 0 1 ffff0000 49249249 1 0 ffff0000 \n"), r.stderr
    assert "votes.cu uses __any, __all or __ballot without _sync" in r.stderr and "__ballot_sync" in r.stderr


def test_the_plain_named_device_functions_of_cuda_11_and_older_are_their_intrinsics(tmp_path, monkeypatch):
    # the CUDA 2 SDK's quad-float Mandelbrot indexes its output with mul24(iy, tileSizeX); CUDA 12 dropped the
    # plain names of the intrinsics, so nvcc 13 stops at 'identifier "mul24" is undefined'. Each is built as
    # the intrinsic it stood for: 24-bit products, high words, bit casts, clamping and directed conversions
    write(tmp_path, {"old.cu": """\
        #include <cstdio>
        __global__ void old(int* i, unsigned* u, float* f)
        {
            i[0] = mul24(-3, 1000);             u[0] = umul24(0x1000001u, 3u);   // a's low 24 bits: 1
            i[1] = mulhi(0x40000000, 8);        u[1] = mulhi(0xffffffffu, 2u);
            i[2] = float_as_int(1.0f);          f[0] = int_as_float(0x40490fdb);
            f[1] = saturate(1.5f);              f[2] = saturate(-2.0f);
            i[3] = float2int(2.7f);             i[4] = float2int(-2.7f, cudaRoundMinInf);
            i[5] = float2int(2.5f, cudaRoundNearest);
            f[3] = int2float(16777217);         f[4] = int2float(16777217, cudaRoundPosInf);
            u[2] = float2uint(3.9f);            f[5] = uint2float(4294967295u, cudaRoundZero);
        }
        int main() {
            int* i; unsigned* u; float* f;
            cudaMallocManaged(&i, 6 * sizeof(int)); cudaMallocManaged(&u, 3 * sizeof(unsigned));
            cudaMallocManaged(&f, 6 * sizeof(float));
            old<<<1, 1>>>(i, u, f);
            cudaDeviceSynchronize();
            printf("%d %d %x %d %d %d | %u %u %u | %g %g %g %.0f %.0f %.0f\\n", i[0], i[1], i[2], i[3], i[4], i[5],
                   u[0], u[1], u[2], f[0], f[1], f[2], f[3], f[4], f[5]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("old.cu")
    assert (r.returncode, r.stdout) == (
        0, "-3000 2 3f800000 2 -3 2 | 3 1 3 | 3.14159 1 0 16777216 16777218 4294967040\n"), r.stderr
    assert "old.cu uses device functions by their CUDA 11 names" in r.stderr and "__mul24" in r.stderr


@pytest.mark.parametrize("call, message", [
    # (the driver API is answered, call by call: tests/test_programs_driver.py)
    ("cusolverDnHandle_t h; cusolverDnCreate(&h);", "cusolverDn.h comes with cuSOLVER, which cudalab does not emulate"),
])
def test_what_cudalab_does_not_emulate_is_named(tmp_path, monkeypatch, call, message):
    header = "cusolverDn.h" if "cusolver" in call else "cuda.h"
    write(tmp_path, {"p.cu": f"#include <{header}>\nint main() {{ {call} }}\n"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=message):
        run_program("p.cu")


def test_std_sqrtf_of_a_visual_studio_program_builds_and_the_student_is_told(tmp_path, monkeypatch):
    # C++17 declares std::sqrtf; Visual Studio's library has it, g++ 12's libstdc++ does not (a Russian course's
    # FFT check: std::sqrtf(re * re + im * im)); the .cu file of the same program calls std::fabsf in a kernel
    write(tmp_path, {"main.cpp": """\
        #include <cmath>
        #include <cstdio>
        void launch(float *h);
        int main() { float h[2]; launch(h); printf("%g %g\\n", std::sqrtf(h[0]), std::powf(h[1], 2.0f)); return 0; }
        """, "k.cu": """\
        #include <cmath>
        __global__ void k(float *x) { x[threadIdx.x] = std::fabsf(-16.0f - threadIdx.x); }
        void launch(float *h) { float *d; cudaMalloc(&d, 8); k<<<1, 2>>>(d); cudaMemcpy(h, d, 8, cudaMemcpyDeviceToHost); }
        """})
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cpp", "k.cu"])
    assert (r.returncode, r.stdout) == (0, "4 289\n"), r.stderr
    assert "main.cpp calls std::sqrtf, std::powf, which C++17's <cmath> declares" in r.stderr
    assert "Write sqrtf or std::sqrt (its float overload)" in r.stderr
    assert "k.cu calls std::fabsf" in r.stderr


def test_the_note_names_the_overload_of_the_functions_type():
    # std::sqrtl is long double's: the student is pointed at std::sqrt's long double overload, not its float one
    from cudalab.programs import std_float_math
    assert "Write sqrtl or std::sqrt (its long double overload)" in std_float_math.note("x.cpp", ["sqrtl"])
    assert "Write fabsf or std::fabs (its float overload)" in std_float_math.note("x.cpp", ["fabsf", "powl"])


def test_a_program_that_draws_with_glut_is_told_it_cannot_be_linked_here(tmp_path, monkeypatch):
    # CUDA by Example's cpu_bitmap.h: the Julia set is computed by a kernel and shown in a GLUT window
    write(tmp_path, {"julia.cu": """\
        extern "C" void glutInit(int *argc, char **argv);
        extern "C" void glutMainLoop(void);
        __global__ void paint(unsigned char *p) { p[threadIdx.x] = 255; }
        int main(int argc, char **argv) { glutInit(&argc, argv); glutMainLoop(); return 0; }
        """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"draws with OpenGL \(glutInit, glutMainLoop\), which cudalab does not emulate, "
                       r"so it cannot be linked here"):
        run_program("julia.cu")


def test_openmp_calls_without_fopenmp_say_how_to_link_them(tmp_path, monkeypatch):
    # a Visual Studio project's main.cpp (MSVC's /openmp) times an omp loop against a kernel in axpy.cu
    write(tmp_path, {"main.cpp": """\
        #include <omp.h>
        #include <cstdio>
        void launch();
        int main() { launch(); printf("%d\\n", omp_get_num_procs() > 0); return 0; }
        """, "axpy.cu": "__global__ void k() {}\nvoid launch() { k<<<1, 1>>>(); }\n"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"uses OpenMP \(omp_get_num_procs\).*build with -Xcompiler -fopenmp"):
        run_program(["main.cpp", "axpy.cu"])
    r = run_program(["main.cpp", "axpy.cu"], options=["-Xcompiler", "-fopenmp"])
    assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr


@pytest.mark.parametrize("header, where", [("helper_cuda.h", "-I cuda-samples/Common"),
                                            ("cutil_inline.h", "CUDA 4 and older"),
                                            ("cufile.h", r"GPUDirect Storage.*which cudalab does not emulate"),
                                            ("cutlass/gemm/device/gemm.h", r"CUTLASS.*-I cutlass/include"),
                                            ("opencv2/opencv.hpp", r"OpenCV's C\+\+ library.*pkg-config --cflags --libs opencv4")])
def test_a_header_from_the_samples_or_the_old_sdk_says_where_it_comes_from(tmp_path, monkeypatch, header, where):
    write(tmp_path, {"p.cu": f"#include <{header}>\nint main() {{ return 0; }}\n"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=f"hint: {header} comes with .*{where}"):
        run_program("p.cu")


def test_windows_h_included_by_habit_builds_and_the_student_is_told(tmp_path, monkeypatch):
    # a Russian university's Visual Studio matrix product includes <windows.h> and calls only C's setlocale;
    # one that calls Sleep still stops at the include, as nvcc on Linux does
    write(tmp_path, {"habit.cu": """\
        #include <windows.h>
        #include <clocale>
        #include <cstdio>
        __global__ void twice(int *x) { x[threadIdx.x] *= 2; }
        int main() {
            setlocale(LC_ALL, "C");
            int h[2] = {3, 4}, *d;
            cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
            twice<<<1, 2>>>(d);
            cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d %d\\n", h[0], h[1]);
        }
        """, "sleeper.cu": "#include <windows.h>\nint main() { Sleep(10); return 0; }\n",
        "capital.cu": "#include <Windows.h>\n#include <cstdio>\nint main() { printf(\"ok\\n\"); return 0; }\n"})
    monkeypatch.chdir(tmp_path)
    r = run_program("habit.cu")
    assert (r.returncode, r.stdout) == (0, "6 8\n"), r.stderr
    assert "habit.cu includes <windows.h>, which Linux" in r.stderr and "Delete the line" in r.stderr
    with pytest.raises(CompileError, match=r"windows\.h: No such file(.|\n)*hint: windows\.h comes with Windows"):
        run_program("sleeper.cu")
    assert run_program("capital.cu").stdout == "ok\n"           # (Windows finds <Windows.h> as <windows.h>)


def test_the_toolkits_profiler_and_nvtx_headers_are_there(tmp_path, monkeypatch):
    write(tmp_path, {"p.cu": """\
        #include <cuda_profiler_api.h>
        #include <nvtx3/nvToolsExt.h>
        #include <cstdio>
        int main() { nvtxRangePushA("setup"); printf("ok\\n"); nvtxRangePop(); }
    """})
    monkeypatch.chdir(tmp_path)
    assert run_program("p.cu").stdout == "ok\n"


def test_notebook_cells_saved_as_files_build_with_a_program_cell(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "cudalab")
    ip.run_cell_magic("cuda", "--save twice.cuh", "__device__ inline int twice(int x) { return 2 * x; }\n")
    ip.run_cell_magic("cuda", "--save twice.cu", '#include "twice.cuh"\n'
                                                  "__global__ void k(int* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n"
                                                  "void run_twice(int* x, int n) { k<<<1, n>>>(x); }\n")
    capsys.readouterr()
    ip.run_cell_magic("cuda", "", '#include <cstdio>\nvoid run_twice(int* x, int n);   // in twice.cu\n'
                                  "int main() { int* x; cudaMallocManaged(&x, 8); x[0] = 20; x[1] = 1;\n"
                                  "  run_twice(x, 2); cudaDeviceSynchronize(); printf(\"%d %d\\n\", x[0], x[1]); }\n")
    assert capsys.readouterr().out == "40 2\n"
    ip.run_cell_magic("cuda", "", '#include "twice.cuh"\n__global__ void quad(int* x) { x[0] = twice(twice(x[0])); }\n')
    assert ip.user_ns["quad"].name == "quad"            # a kernel cell includes saved headers too


@pytest.mark.gpu
def test_the_same_files_build_and_run_on_a_real_gpu(tmp_path, monkeypatch):
    write(tmp_path, {**PROJECT, **RDC})
    monkeypatch.chdir(tmp_path)
    several = run_program(["src/main.cpp", "src/scale.cu"], ["1000"], device="gpu",
                          options=["-DFACTOR=3.0f", "-o", "scaled"])
    assert several.stdout == "./scaled: hello x[999] = 2997\n", several.stderr
    rdc = run_program(["main.cu", "helper.cu"], device="gpu", options=["-rdc=true"])
    assert rdc.stdout == "x[0] = 107, x[63] = 170, calls = 64\n", rdc.stderr


def test_texture_and_surface_references_of_cuda_11_run_over_texture_objects(tmp_path, monkeypatch):
    # courses before CUDA 12 (CSCS's 2011 texture and surface exercises) declare file-scope references,
    # set them up from the host, bind them and fetch through them; CUDA 12 removed all of it
    write(tmp_path, {"texref.cu": """\
        #include <cstdio>
        texture<float, 1, cudaReadModeElementType> plain;
        texture<float> twice;
        texture<unsigned char, 1, cudaReadModeNormalizedFloat> bytes;
        texture<float, 2> image;
        surface<void, 2> canvas;
        __global__ void fetch(float *out) {
            int i = threadIdx.x;
            out[i] = tex1Dfetch(plain, i) + tex1Dfetch(twice, i) + 10 * tex1Dfetch(bytes, i);
            out[4 + i] = tex2D(image, 0.5f + 0.25f * i, 0.5f);        // linear filtering along row 0
            surf2Dwrite(float(100 + i), canvas, (i % 2) * sizeof(float), i / 2);
        }
        int main() {
            float h[4] = {0, 1, 2, 3}, *d, *out, got[8], drawn[4];
            unsigned char b[4] = {0, 255, 51, 102}, *db;
            cudaMalloc(&d, sizeof h); cudaMalloc(&db, 4); cudaMalloc(&out, sizeof got);
            cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice); cudaMemcpy(db, b, 4, cudaMemcpyHostToDevice);
            cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
            cudaError_t e1 = cudaBindTexture(0, &plain, d, &f, sizeof h);      // the C form
            cudaError_t e2 = cudaBindTexture(0, twice, d);                       // the C++ form, the rest of it
            cudaError_t e3 = cudaBindTexture(0, bytes, db, 4);
            cudaArray_t pixels, board;
            cudaMallocArray(&pixels, &image.channelDesc, 2, 2);   // a reference knows its texel's format
            cudaMallocArray(&board, &f, 2, 2, cudaArraySurfaceLoadStore);
            cudaMemcpy2DToArray(pixels, 0, 0, h, 2 * sizeof(float), 2 * sizeof(float), 2, cudaMemcpyHostToDevice);
            image.filterMode = cudaFilterModeLinear;
            cudaError_t e4 = cudaBindTextureToArray(image, pixels);
            cudaError_t e5 = cudaBindSurfaceToArray(canvas, board);
            fetch<<<1, 4>>>(out);
            cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
            cudaMemcpy2DFromArray(drawn, 2 * sizeof(float), board, 0, 0, 2 * sizeof(float), 2, cudaMemcpyDeviceToHost);
            cudaError_t e6 = cudaUnbindTexture(plain);
            printf("%d %d %d %d %d %d\\n", e1, e2, e3, e4, e5, e6);
            for (int i = 0; i < 8; i++) printf("%g ", got[i]);
            printf("| %g %g %g %g\\n", drawn[0], drawn[1], drawn[2], drawn[3]);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("texref.cu")
    assert r.returncode == 0, r.stderr
    # the student learns here, not from a GPU machine's nvcc, that CUDA 12 removed what the file uses
    assert "texref.cu uses texture references" in r.stderr and "CUDA 12 removed them" in r.stderr
    assert "cudaCreateTextureObject" in r.stderr
    codes, values = r.stdout.splitlines()
    assert codes == "0 0 0 0 0 0"
    fetched, drawn = values.split(" | ")
    got = [float(v) for v in fetched.split()]
    # tex1Dfetch twice plus 10 x the normalized byte (0, 1, 0.2, 0.4); the 2D fetch's filter weights
    # are 8-bit fractions, as on a GPU: 0, 0.25, 0.5 and 0.75 of the way from texel 0 to texel 1
    assert got[:4] == pytest.approx([0, 12, 6, 10], abs=1e-5)
    assert got[4:] == [0, 0.25, 0.5, 0.75]
    assert drawn == "100 101 102 103"


def test_a_surface_reference_of_doubles_moves_eight_bytes_a_texel_as_cuda_11_did(tmp_path, monkeypatch):
    # a heat-propagation homework (TCD's MSc HPC) keeps its grid of doubles in a surface<void, 2>:
    # CUDA 11's reference functions took any type by its size, the object functions that replace them
    # take no double (nor a struct of 16 bytes), so nvcc refused the file
    write(tmp_path, {"heat.cu": """\
        #include <cstdio>
        struct pair { double lo, hi; };
        surface<void, 2> grid;
        surface<void, 1> pairs;
        __global__ void step(int w) {
            int x = threadIdx.x, y = threadIdx.y;
            double here;
            surf2Dread(&here, grid, x * sizeof(double), y);
            double left = surf2Dread<double>(grid, ((x + w - 1) % w) * sizeof(double), y);
            __syncthreads();
            surf2Dwrite(here + 0.5 * left, grid, x * sizeof(double), y);
            pair p = {here, -left};
            if (y == 0) surf1Dwrite(p, pairs, x * sizeof(pair));
        }
        int main() {
            const int w = 4, h = 2;
            double a[w * h], b[w * h];
            pair got[w];
            for (int i = 0; i < w * h; i++) a[i] = 1.0 / 3 + i;
            cudaChannelFormatDesc d = cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindSigned);
            cudaChannelFormatDesc q = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindSigned);
            cudaArray_t cells, row;
            cudaMallocArray(&cells, &d, w, h, cudaArraySurfaceLoadStore);
            cudaMallocArray(&row, &q, w, 0, cudaArraySurfaceLoadStore);
            cudaMemcpy2DToArray(cells, 0, 0, a, w * sizeof(double), w * sizeof(double), h, cudaMemcpyHostToDevice);
            cudaBindSurfaceToArray(grid, cells);
            cudaBindSurfaceToArray(pairs, row);
            step<<<1, dim3(w, h)>>>(w);
            cudaMemcpy2DFromArray(b, w * sizeof(double), cells, 0, 0, w * sizeof(double), h, cudaMemcpyDeviceToHost);
            cudaMemcpyFromArray(got, row, 0, 0, sizeof got, cudaMemcpyDeviceToHost);
            printf("%s\\n", cudaGetErrorString(cudaGetLastError()));
            for (int i = 0; i < w * h; i++) printf("%.17g ", b[i]);
            printf("| %.17g %.17g\\n", got[1].lo, got[1].hi);
        }
    """})
    monkeypatch.chdir(tmp_path)
    r = run_program("heat.cu")
    assert r.returncode == 0, r.stderr
    status, values = r.stdout.splitlines()
    assert status == "no error"
    cells, pair = values.split(" | ")
    a = [1 / 3 + i for i in range(8)]
    expected = [a[i] + 0.5 * a[(i // 4) * 4 + (i % 4 + 3) % 4] for i in range(8)]
    assert [float(v) for v in cells.split()] == expected        # every bit of each double
    assert [float(v) for v in pair.split()] == [a[1], -a[0]]


def test_the_texture_reference_header_can_be_given_to_a_c_file_of_the_same_program(tmp_path):
    # courses_check's GPU build gives it to every file of the nvcc line, and TCD's heat homework links
    # main.c and propagate.c with its surface-reference .cu: <climits> stopped gcc at the C files
    import subprocess
    from cudalab.programs.build import LEGACY_TEXTURES
    (tmp_path / "main.c").write_text("#include <stdio.h>\nint main(void) { return printf(\"%d\\n\", 6 * 7) < 0; }\n")
    r = subprocess.run(["gcc", f"-I{cuda_home() / 'include'}", "-include", str(LEGACY_TEXTURES), "-c", "main.c"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_texture_reference_in_a_file_that_does_not_build_for_another_reason_gets_the_hint(tmp_path, monkeypatch):
    # nvcc's complaint about the reference comes first, with the hint, and the real error beside it
    write(tmp_path, {"texref.cu": """\
        texture<float, 1, cudaReadModeElementType> tex;
        __global__ void copy(float* out) { out[threadIdx.x] = tex1Dfetch(tex, threadIdx.x) + offset; }
        int main() { return 0; }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match="(?s)texture is not a template.*offset.*removed in CUDA 12"):
        run_program("texref.cu")


def test_a_source_saved_in_a_korean_windows_encoding_runs_and_profiles(tmp_path, monkeypatch, capfd):
    # a Korean course's file saved by Visual Studio: its comments are CP949 bytes, which are no UTF-8
    comment = "// 벡터 합 예제 (vector sum)\n".encode("cp949")
    body = textwrap.dedent("""\
        #include <cstdio>
        __global__ void add(int *c) { c[threadIdx.x] = threadIdx.x + 1; }
        int main() {
            int *c, h[3];
            cudaMalloc(&c, sizeof h);
            add<<<1, 3>>>(c);
            cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost);
            printf("%d %d %d\\n", h[0], h[1], h[2]);
        }
        """).encode()
    (tmp_path / "vector_add.cu").write_bytes(comment + body)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "vector_add.cu"]) == 0
    assert capfd.readouterr().out == "1 2 3\n"
    assert main(["profile", "vector_add.cu"]) == 0
    assert "__global__ void add(int *c)" in capfd.readouterr().out      # its lines quoted


def test_warpsize_read_in_host_code_is_explained_as_nvccs_link_explains_nothing(tmp_path, monkeypatch):
    # TACC's reduction lab sizes its dynamic shared memory with warpSize in main(): the front end compiles the
    # line into a reference to a device built-in that no library defines, so nvcc's link stops as cudalab's does
    write(tmp_path, {"warps.cu": """\
        __global__ void k(float* x) { x[threadIdx.x] = warpSize; }
        int main() {
            float* x; cudaMalloc(&x, 128 * sizeof(float));
            unsigned warps = (128 + warpSize - 1) / warpSize;
            k<<<1, 128, warps * sizeof(float)>>>(x);
            return cudaDeviceSynchronize();
        }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"Host code reads warpSize, which exists only in device code.*"
                                           r"cudaDevAttrWarpSize") as e:
        run_program("warps.cu")
    assert "cudalab does not implement" not in str(e.value)


def test_an_asm_statement_ptxas_cannot_read_is_named_at_its_source_line(tmp_path, monkeypatch):
    # courses20: an exercise leaves the inline PTX to the student, asm("Your Code Here" : ...); ptxas stops at
    # a line of the PTX nvcc kept, which the student never sees: the hint names the statement's own line
    write(tmp_path, {"fill_in.cu": """\
        __global__ void combine(int* a, int* b, int* c)
        {
            int i = threadIdx.x;
            asm("Your Code Here"
                : "=r"(c[i])
                : "r"(a[i]), "r"(b[i]));
        }
        int main() { return 0; }
    """})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"Parsing error near 'Here'") as e:
        run_program("fill_in.cu")
    message = str(e.value)
    assert "the text of the asm() statement at fill_in.cu:4" in message
    assert 'could not read "Your Code Here"' in message
    assert "/keep/" not in message and "cudalab/units" not in message     # no path of cudalab's own


def test_a_ptxas_error_outside_any_asm_statement_gets_no_asm_hint(tmp_path):
    from cudalab.programs import asm_errors
    (tmp_path / "k.ptx").write_text(".version 8.0\n.target sm_80\nbogus line\n")
    assert asm_errors.hint("ptxas k.ptx, line 3; fatal   : Parsing error near 'bogus': syntax error", tmp_path) == ""


def test_a_notebook_kernel_whose_asm_text_is_no_ptx_is_the_students_to_fix_not_a_missing_feature():
    # the same exercise in a %%cuda cell: the emulator's PTX reader stops at the asm() text, and ptxas (which
    # nvcc would run) refuses it too, so the message says what to write there, not "not supported by cudalab"
    import cudalab
    with pytest.raises(CompileError, match=r"The asm\(\) statement at cell\.cu:3 is not PTX") as e:
        cudalab.compile("__global__ void combine(int* a, int* b, int* c) {\n"
                        "    int i = threadIdx.x;\n"
                        "    asm(\"Your Code Here\" : \"=r\"(c[i]) : \"r\"(a[i]), \"r\"(b[i]));\n}\n")
    assert "not supported by cudalab" not in str(e.value) and "Parsing error near 'Here'" in str(e.value)


def test_ptx_that_ptxas_reads_is_not_called_unreadable():
    from cudalab.programs.asm_errors import ptxas_refuses
    good = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    assert ptxas_refuses(good) is None
    assert "Here" in ptxas_refuses(good.replace("\tret;", "\tYour Code Here\n\tret;"))

# ------------------------------------------------------------------ books15: a program's other files
SPLIT = {
    "kernels.h": "__global__ void addOne(float* x);\nvoid timed(float* x);\n",
    "add.cu": """\
        #include <cstdio>
        #include "kernels.h"
        int main() {
            float* x;
            cudaMallocManaged(&x, 32 * sizeof(float));
            for (int i = 0; i < 32; ++i) x[i] = i;
            addOne<<<1, 32>>>(x);
            cudaDeviceSynchronize();
            printf("%g\\n", x[31]);
            return 0;
        }
        """,
    "add_kernel.cu": '#include "kernels.h"\n__global__ void addOne(float* x) { x[threadIdx.x] += 1; }\n',
    # a timed variant defines the kernel again, with a helper: the hint names one file, not both
    "add_kernel_timed.cu": ('#include "kernels.h"\n__global__ void addOne(float* x) { x[threadIdx.x] += 1; }\n'
                            'void timed(float* x) { addOne<<<1, 32>>>(x); }\n'),
}


def test_a_kernel_defined_in_a_file_left_out_of_the_build_is_named_with_the_command(tmp_path, monkeypatch):
    # a Japanese lab's sample1.cu launches Sample1Kernel, which sample1_kernel.cu beside it defines
    write(tmp_path, SPLIT)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"hint: addOne is defined in add_kernel.cu, which this build does not "
                                           r"compile: .*\(nvcc add.cu add_kernel.cu -o add\)"):
        run_program(["add.cu"], options=["-o", "add"])
    r = run_program(["add.cu", "add_kernel.cu"], capture=True)        # as the hint says
    assert (r.returncode, r.stdout) == (0, "32\n"), r.stderr


def test_a_function_a_c_file_defines_for_cpp_callers_is_explained(tmp_path, monkeypatch):
    # a lab's timer.c, which its Makefile compiles with g++; nvcc compiles a .c as C, so main.cpp's calls miss it
    write(tmp_path, {"timer.h": "void start_timer();\n", "timer.c": "void start_timer() {}\n",
                     "main.cpp": '#include "timer.h"\nint main() { start_timer(); return 0; }\n'})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"start_timer is defined in timer.c, which nvcc compiles as C.*"
                                           r"extern \"C\""):
        run_program(["main.cpp", "timer.c"])


def test_a_function_no_file_defines_is_said_to_be_missing_from_the_build(tmp_path, monkeypatch):
    write(tmp_path, {"main.cpp": "void report(int);\nint main() { report(3); return 0; }\n"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CompileError, match=r"hint: report is called but defined in no file of this build"):
        run_program(["main.cpp"])


@pytest.mark.parametrize("log, expected", [
    # nvcc's front end on a .cu file, and g++ (with its own suggestion) on a host file
    ('sum.cu(7): error: namespace "std" has no member "thread"', {"thread": ["std::thread"]}),
    ("main.cpp:5:10: error: 'mutex' is not a member of 'std'\nnote: 'std::mutex' is defined in header '<mutex>'; "
     "did you forget to '#include <mutex>'?", {"mutex": ["std::mutex"]}),
    ('k.cu(3): error: namespace "std" has no member "setw"\nk.cu(4): error: namespace "std" has no member "accumulate"',
     {"iomanip": ["std::setw"], "numeric": ["std::accumulate"]}),
    # std::sqrtf is std_float_math's (no header of g++ 12 declares it), and an unknown name is nobody's
    ('k.cu(3): error: namespace "std" has no member "sqrtf"', {}),
    ('k.cu(3): error: namespace "std" has no member "frobnicate"', {}),
])
def test_the_header_of_a_std_name_is_read_from_either_compilers_words(log, expected):
    from cudalab.programs import msvc_headers
    assert msvc_headers.headers_for(log) == expected


def test_only_the_programs_own_functions_get_the_missing_definition_hint(tmp_path):
    from cudalab.programs import missing_definitions
    (tmp_path / "main.cu").write_text("int main() { return 0; }\n")
    assert missing_definitions.hint(["glutInit(int*, char**)", "cublasCreate_v2", "cuModuleLoad"],
                                    ["main.cu"], tmp_path, None) == ""
    (tmp_path / "shapes.cu").write_text("float cube(float x) { return x * x * x; }\n")
    assert "cube is defined in shapes.cu" in missing_definitions.hint(["cube(float)"], ["main.cu"], tmp_path, "m")
