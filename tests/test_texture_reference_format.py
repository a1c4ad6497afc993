"""A CUDA 11 texture reference carries its element type's channel format, as texture<T>'s constructor set it.

Courses of that time allocate the CUDA array for a texture from the reference itself,
`cudaMallocArray(&array, &tex.channelDesc, n)` (Packt's *Hands-On GPU-Accelerated Computer Vision*,
chapter 3). cudalab's stand-in for texture references (programs/shim/legacy_textures.h) left that
format empty: cudaMallocArray refused it, and every fetch read zeros.
"""
import textwrap

from cudalab.programs import run_program

PROGRAM = """\
    #include <cstdio>
    texture<float, 1, cudaReadModeElementType> ramp;
    texture<uchar4> pixels;
    texture<short2> pairs;
    texture<unsigned int> counts;
    texture<char1> bytes;

    template <class T> bool same(const cudaChannelFormatDesc &d) {
        cudaChannelFormatDesc want = cudaCreateChannelDesc<T>();
        return d.x == want.x && d.y == want.y && d.z == want.z && d.w == want.w && d.f == want.f;
    }
    __global__ void read(float *out) { out[threadIdx.x] = tex1D(ramp, threadIdx.x + 0.5f); }

    int main() {
        printf("%d %d %d %d %d\\n", same<float>(ramp.channelDesc), same<uchar4>(pixels.channelDesc),
               same<short2>(pairs.channelDesc), same<unsigned int>(counts.channelDesc), same<char1>(bytes.channelDesc));
        float h[8] = {0, 1, 2, 3, 4, 5, 6, 7}, got[8], *d;
        cudaArray_t a;
        cudaError_t e1 = cudaMallocArray(&a, &ramp.channelDesc, 8, 1);     // the format from the reference
        cudaError_t e2 = cudaMemcpy2DToArray(a, 0, 0, h, sizeof h, sizeof h, 1, cudaMemcpyHostToDevice);
        cudaError_t e3 = cudaBindTextureToArray(ramp, a);
        cudaMalloc(&d, sizeof got);
        read<<<1, 8>>>(d);
        cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost);
        printf("%d %d %d\\n", e1, e2, e3);
        for (int i = 0; i < 8; i++) printf("%g ", got[i]);
        printf("\\n");
    }
"""


def test_a_texture_references_channel_format_is_its_element_types(tmp_path, monkeypatch):
    (tmp_path / "texfmt.cu").write_text(textwrap.dedent(PROGRAM))
    monkeypatch.chdir(tmp_path)
    r = run_program("texfmt.cu")
    assert r.returncode == 0, r.stderr
    formats, codes, values = r.stdout.splitlines()
    assert formats == "1 1 1 1 1"          # each as cudaCreateChannelDesc<T>() makes it
    assert codes == "0 0 0"
    assert values.split() == [str(i) for i in range(8)]
