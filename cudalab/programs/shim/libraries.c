/* What the library shims (cublas.c, cufft.c) share: a call into a stream being captured.
 *
 * The emulator answers such a request with CAPTURED instead of doing it; the call then becomes a
 * host node of the graph that sends the same request again when the graph runs (the request keeps
 * what the call passed by value, as the library reads a host alpha at capture time). Included by
 * cudart.c before the library shims.
 */
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
    rpc("%s", (const char *)text);
    if (NR > 1 && R[1] && RBN > 1 && !RB[0]) say_once(RB + 1);
}

/* the request ``text`` (malloc'ed; the graph keeps it) as a host node of the capture in ``s`` */
__attribute__((unused)) static int capture_request(cudaStream_t s, char *text) { return cudaLaunchHostFunc(s, replay_request, text) != 0; }
