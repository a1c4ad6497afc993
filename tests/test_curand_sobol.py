"""cuRAND's Sobol32 quasi-random generator and its direction vectors, as a program sees them.

The expected numbers were recorded on an H200 (cuRAND 10.4, nvcc 13, -arch=sm_90) with the same
program: integers, floats and doubles bit for bit, normals (an inverse of the normal distribution,
the GPU's erfcinv) within float rounding."""
import numpy as np
import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home
from cudalab.runtime.libraries import rand
from cudalab.runtime.libraries.operands import LibraryError

pytestmark = pytest.mark.skipif(not (cuda_home() / "include" / "curand.h").exists(),
                                reason="cuRAND's headers and library come with the nvidia-curand wheel (cudalab[curand])")

QUASI_PROGRAM = r"""
#include <cstdio>
#include <curand.h>
#include <curand_kernel.h>
__global__ void own_state(curandDirectionVectors32_t *v, float *out, int each) {
    curandStateSobol32 s;                       // a kernel's own Sobol state: dimension t % 2, 7 + t points skipped
    curand_init(v[threadIdx.x % 2], 7 + threadIdx.x, &s);
    for (int i = 0; i < each; ++i) out[threadIdx.x * each + i] = curand_uniform(&s);
}
int main() {
    curandGenerator_t g;
    unsigned *bits;
    float *f;
    double *d;
    cudaMalloc(&bits, 30 * sizeof(unsigned)); cudaMalloc(&f, 12 * sizeof(float)); cudaMalloc(&d, 6 * sizeof(double));
    unsigned hb[30]; float hf[12]; double hd[6];
    curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32);
    curandSetQuasiRandomGeneratorDimensions(g, 3);
    for (int call = 0; call < 2; ++call) {                      // 10 points of 3 dimensions, twice
        curandGenerate(g, bits, 30);
        cudaMemcpy(hb, bits, sizeof hb, cudaMemcpyDeviceToHost);
        printf("bits");
        for (int i = 0; i < 30; ++i) printf(" %u", hb[i]);
        printf("\n");
    }
    printf("not_a_multiple %d\n", curandGenerate(g, bits, 29));
    curandSetGeneratorOffset(g, 5);
    curandGenerateUniform(g, f, 12);
    cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    printf("uniform"); for (int i = 0; i < 12; ++i) printf(" %a", hf[i]); printf("\n");
    curandGenerateUniformDouble(g, d, 6);
    cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost);
    printf("double"); for (int i = 0; i < 6; ++i) printf(" %a", hd[i]); printf("\n");
    curandGenerateNormal(g, f, 12, 0.f, 1.f);
    cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    printf("normal"); for (int i = 0; i < 12; ++i) printf(" %.9g", hf[i]); printf("\n");
    curandDestroyGenerator(g);
    curandDirectionVectors32_t *v, *dv;
    printf("vectors %d", curandGetDirectionVectors32(&v, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
    printf(" %u %u %u\n", v[1][1], v[2][2], v[19999][31]);
    cudaMalloc(&dv, 2 * sizeof(curandDirectionVectors32_t));
    cudaMemcpy(dv, v, 2 * sizeof(curandDirectionVectors32_t), cudaMemcpyHostToDevice);
    own_state<<<1, 4>>>(dv, f, 3);
    cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    printf("own_state"); for (int i = 0; i < 12; ++i) printf(" %a", hf[i]); printf("\n");
    return 0;
}
"""

H200 = {
    "bits": [
        "0 2147483648 3221225472 1073741824 1610612736 3758096384 2684354560 536870912 805306368 2952790016 "
        "0 2147483648 1073741824 3221225472 1610612736 3758096384 536870912 2684354560 1342177280 3489660928 "
        "0 2147483648 1073741824 3221225472 2684354560 536870912 3758096384 1610612736 4026531840 1879048192",
        "4026531840 1879048192 1342177280 3489660928 2415919104 268435456 402653184 2550136832 3623878656 1476395008 "
        "268435456 2415919104 805306368 2952790016 1879048192 4026531840 2013265920 4160749568 939524096 3087007744 "
        "2952790016 805306368 1342177280 3489660928 268435456 2415919104 2013265920 4160749568 939524096 3087007744"],
    "not_a_multiple": "105",
    "uniform": "0x1.cp-1 0x1.4p-1 0x1p-3 0x1.8p-3 0x1.cp-1 0x1p-3 0x1.4p-1 0x1.4p-2 0x1p-3 0x1.cp-1 0x1.8p-2 0x1.ep-1",
    "double": "0x1.60000002p-1 0x1.e0000002p-1 0x1.a0000002p-1 0x1.0000001p-4 0x1.c0000004p-2 0x1.60000002p-1",
    "normal": "-0.1573107 -0.4887764 0.8871465 0.1573107 0.1573107 -0.8871465 0.4887764 -0.1573107 -0.8871465 "
              "-0.4887764 0.8871465 -1.53412",
    "vectors": "0 3221225472 1610612736 1883665875",
    "own_state": "0x1p-3 0x1.8p-3 0x1.6p-1 0x1.4p-2 0x1.ap-1 0x1p-4 0x1.6p-1 0x1.ep-1 0x1.cp-2 0x1p-4 0x1.2p-1 0x1.8p-3",
}


def test_a_sobol_program_gets_the_numbers_an_h200_gave():
    r = run_program_source(QUASI_PROGRAM, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = {}
    for line in r.stdout.splitlines():
        name, _, rest = line.partition(" ")
        lines.setdefault(name, []).append(rest)
    assert lines["bits"] == H200["bits"]                    # each dimension's points in turn, call after call
    assert lines["not_a_multiple"] == [H200["not_a_multiple"]]   # CURAND_STATUS_LENGTH_NOT_MULTIPLE
    assert "not a multiple of the generator's 3 dimensions" in r.stderr
    for exact in ("uniform", "double", "vectors", "own_state"):
        assert lines[exact] == [H200[exact]], exact
    np.testing.assert_allclose(np.array(lines["normal"][0].split(), float), np.array(H200["normal"].split(), float),
                               rtol=2e-6)


def test_the_first_dimension_is_the_van_der_corput_sequence_in_gray_code_order():
    # dimension 0's direction vectors are 2^31, 2^30, ...: its point i is i's Gray code with its bits reversed
    got = rand.sobol32(0, 64, range(1))[0]
    gray = [i ^ (i >> 1) for i in range(64)]
    assert got.tolist() == [int(f"{g:032b}"[::-1], 2) for g in gray]


def test_only_a_quasi_random_generator_has_dimensions_and_poisson_is_refused():
    sobol = rand.Generator(rand.SOBOL32, dims=2)
    with pytest.raises(LibraryError, match="not a multiple of the generator's 2 dimensions"):
        rand.generate(sobol, "uniform", 5)
    with pytest.raises(LibraryError, match="Poisson from a quasi-random"):
        rand.generate(sobol, "poisson", 4, 3.0)
    assert rand.generate(sobol, "bits", 4).tolist() == rand.sobol32(0, 2, range(2)).reshape(-1).tolist()
    assert sobol.offset == 2                                   # points, not values
    # a call captured into a graph moves the generator on by the same: points, and no even n asked of normals
    assert rand.used("normal", 6, rand.Generator(rand.SOBOL32, dims=3)) == 2
    assert rand.used("normal", 6) == 6
