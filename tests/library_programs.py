"""C++ that the math-library tests' programs share: operands of small integers, exact in every
precision, put on the device, and a device array printed (``%g``, or as many digits as asked)."""


def operands(*headers: str, digits: str = "") -> str:
    """The includes (cstdio first), then ``value``, ``device<T>`` and ``show<T>``; ``digits``: printf's
    precision for ``show`` (".9" for float32's every bit)."""
    includes = "".join(f"#include <{h}>\n" for h in ("cstdio", *headers))
    return "\n" + includes + _OPERANDS.replace(" %g", f" %{digits}g")


_OPERANDS = """// element i of operand `seed`: small integers, exact in every precision
static float value(int seed, int i) { return (float)((i * 7 + seed * 3) % 11 - 5); }
template <typename T> T *device(int seed, int n) {
    T *h = new T[n], *d;
    for (int i = 0; i < n; i++) h[i] = T(value(seed, i));
    cudaMalloc(&d, n * sizeof(T));
    cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice);
    delete[] h;
    return d;
}
template <typename T> void show(const char *name, const T *d, int n) {
    T *h = new T[n];
    cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost);
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %g", (double)(float)h[i]);
    printf("\\n");
    delete[] h;
}
"""
