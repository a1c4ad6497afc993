/* What the library shims (cublas.c, cublasLt.c, cusparse.c, cufft.c) share: a routine's request
 * with its arguments by name, and a call into a stream being captured.
 *
 * A routine is one request "library LIBRARY ROUTINE stream device-scalars name=value ..." whose values are
 * its C arguments by their names in the library's header; the emulator does the arithmetic
 * (cudalab/runtime/libraries/). The emulator answers a request into a capturing stream with
 * CAPTURED instead of doing it; the call then becomes a host node of the graph that sends the same
 * request again when the graph runs (the request keeps what the call passed by value, as the
 * library reads a host alpha at capture time). Included by cudart.c before the library shims.
 */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
/* In C, cuda_fp16.h and cuda_bf16.h give only the raw 16-bit structs; the routines on halves and
 * bfloat16s (cuBLAS's, cuSPARSE's) take pointers to them, which is all the wrappers pass on. */
typedef __half_raw __half;
typedef __nv_bfloat16_raw __nv_bfloat16;

/* libraryPropertyType's answers from a library header's version macros (PREFIX_VER_MAJOR, ...) */
#define LIBRARY_PROPERTY(fn, status, prefix, ok, no_value, bad_type)         \
    status fn(libraryPropertyType type, int *value) {                         \
        if (!value) return no_value;                                          \
        switch (type) {                                                       \
        case MAJOR_VERSION: *value = prefix##_VER_MAJOR; return ok;           \
        case MINOR_VERSION: *value = prefix##_VER_MINOR; return ok;           \
        case PATCH_LEVEL: *value = prefix##_VER_PATCH; return ok;             \
        default: return bad_type;                                             \
        }                                                                     \
    }

/* once per function: what a library call cudalab lacks returns, and where the program can run as written */
__attribute__((unused)) static void say_library_lacks(const char *name, const char *lacks, const char *answer) {
    char msg[400];
    snprintf(msg, sizeof msg, "cudalab: %s %s, so it returns %s. Run the program on a real GPU "
             "(cudalab run --device gpu) to use it.", name, lacks, answer);
    say_once(msg);
}

#define CAPTURED 1000   /* the emulator's answer for a call into a capturing stream (server_libraries.py) */

__attribute__((unused)) static void CUDART_CB replay_request(void *text) {
    replaying = 1;      /* on the driver thread: the one request a host node of ours may send */
    rpc("%s", (const char *)text);
    replaying = 0;
    if (NR > 1 && R[1] && RBN > 1 && !RB[0]) say_once(RB + 1);
}

/* the request ``text`` (malloc'ed; the graph keeps it) as a host node of the capture in ``s`` */
__attribute__((unused)) static int capture_request(cudaStream_t s, char *text) { return cudaLaunchHostFunc(s, replay_request, text) != 0; }

/* ------------------------------------------------------------------ a routine's request */
struct request {
    char *text;
    size_t len, cap;
    int device_scalars;    /* alpha and beta are device pointers (the handle's pointer mode) */
};

__attribute__((format(printf, 2, 3))) static void request_add(struct request *q, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(q->text + q->len, q->cap - q->len, fmt, ap);
        va_end(ap);
        if (q->len + (size_t)k < q->cap) {
            q->len += (size_t)k;
            return;
        }
        q->cap = 2 * q->cap + (size_t)k + 64;
        q->text = realloc(q->text, q->cap);
    }
}

/* "library LIBRARY ROUTINE stream device-scalars": LIBRARY is the module of runtime/libraries */
__attribute__((unused)) static void request_begin(struct request *q, const char *library, const char *name,
                                                  cudaStream_t stream, int device_scalars) {
    q->len = 0, q->cap = 256, q->text = malloc(q->cap), q->device_scalars = device_scalars;
    request_add(q, "library %s %s %p %d", library, name, (void *)stream, device_scalars);
}

__attribute__((unused)) static void request_int(struct request *q, const char *name, long long v)
{ request_add(q, " %s=%lld", name, v); }
__attribute__((unused)) static void request_ptr(struct request *q, const char *name, const void *p)
{ request_add(q, " %s=%p", name, p); }

/* NVIDIA_TF32_OVERRIDE=0 in the program's environment turns off the TF32 it asks cuBLAS for (measured
 * on an H200): sent as tf32Override=0 (runtime/libraries/precision.py) */
__attribute__((unused)) static void request_tf32_override(struct request *q) {
    const char *v = getenv("NVIDIA_TF32_OVERRIDE");
    if (v && v[0] == '0' && !v[1]) request_add(q, " tf32Override=0");
}

/* alpha, beta: the value itself (hex bytes) behind a host pointer, the address for a device one */
__attribute__((unused)) static void request_scalar(struct request *q, const char *name, const void *p, size_t size) {
    if (q->device_scalars || !p) {
        request_add(q, " %s=d%p", name, p);
        return;
    }
    request_add(q, " %s=h", name);
    for (size_t i = 0; i < size; i++) request_add(q, "%02x", ((const unsigned char *)p)[i]);
}

/* Send the request: the library's status (its refusal said once), or ``failed`` (the library's
 * EXECUTION_FAILED) when the context is broken by an earlier kernel's fault. Into a capture it
 * becomes a host node of the graph. A host result (cublasSdot's) is in RB, RBN. */
__attribute__((unused)) static int request_send(struct request *q, cudaStream_t stream, int failed) {
    int code = rpc("%s", q->text);
    if (!code && NR > 1 && R[1] == CAPTURED)     /* runs when the graph does */
        return capture_request(stream, q->text) ? failed : 0;
    free(q->text);
    if (code) return failed;
    int status = NR > 1 ? (int)R[1] : failed;
    if (status && RBN > 1 && !RB[0]) say_once(RB + 1);
    return status;
}
