"""A call through a pointer (a virtual function) runs on a stack sized for what it may reach.

ptxas cannot size a kernel's stack when it calls through a pointer, and a GPU then gives each thread
cudaLimitStackSize (1 KiB). Ray tracers ported from *Ray Tracing in One Weekend*, a favourite course
project, call ``world->hit(...)``, whose ``hittable_list::hit`` calls each object's ``hit`` in turn:
two virtual frames with local records on one stack. The emulator sized the stack from direct calls
only, found none, and stopped the first virtual call with a stack overflow of a 0-byte stack.
"""
import numpy as np

import cudalab

SOURCE = r"""
struct Item { __device__ virtual float value(int i) const = 0; };
struct Leaf : Item {
    float w;
    __device__ Leaf(float w) : w(w) {}
    __device__ float value(int i) const override {
        volatile float t[48];                       // a local array: the frame lives in local memory
        for (int j = 0; j < 48; j++) t[j] = w * (i + j);
        float s = 0;
        for (int j = 0; j < 48; j++) s += t[(j * 7) % 48];
        return s;
    }
};
struct Group : Item {
    Item **items; int n;
    __device__ Group(Item **items, int n) : items(items), n(n) {}
    __device__ float value(int i) const override {
        volatile float t[48];
        for (int j = 0; j < 48; j++) t[j] = items[j % n]->value(i + j);   // a virtual call inside one
        float s = 0;
        for (int j = 0; j < 48; j++) s += t[(j * 5) % 48];
        return s;
    }
};
__global__ void build(Item **items, Item **world) {
    items[0] = new Leaf(1.0f);
    items[1] = new Leaf(2.0f);
    *world = new Group(items, 2);
}
__global__ void use(Item **world, float *out) {
    out[threadIdx.x] = (*world)->value(threadIdx.x);
}
"""


def test_nested_virtual_calls_with_local_arrays_run_to_the_right_answer():
    mod = cudalab.compile(SOURCE)
    items = cudalab.device_array(2, np.uint64)
    world = cudalab.device_array(1, np.uint64)
    out = cudalab.device_array(32, np.float32)
    mod.get_kernel("build")[1, 1](items, world)
    mod.get_kernel("use")[1, 32](world, out)
    # Leaf(w).value(k) = w * (48 k + 1128); the group adds Leaf 1 at even j and Leaf 2 at odd j, k = i + j
    i = np.arange(32)[:, None]
    j = np.arange(48)[None, :]
    expected = (np.where(j % 2 == 0, 1.0, 2.0) * (48 * (i + j) + 1128)).sum(axis=1)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-6)

