/* cudalab's libcudart: the CUDA runtime API of a whole program, answered by the emulator.
 *
 * The GPGPU-Sim approach: nvcc compiles the student's program as usual and the executable is
 * linked against this library instead of NVIDIA's libcudart. Device memory is a shared arena
 * (a memfd the Python side also maps) placed at the emulator's own device addresses, so device
 * pointers are the same numbers on both sides, copies are plain memcpy here, and managed or
 * pinned memory can be read by the host and the kernels alike. Everything else (allocation
 * table, launches, streams, events, properties) is a small request to the emulator over the
 * socket inherited in CUDALAB_FD:  u32 length | header text | '\0' | bytes.
 *
 * Built by cudalab/programs/build.py with the system C compiler against the CUDA headers of the
 * nvidia-cuda-runtime wheel, so every signature here is checked against NVIDIA's declarations.
 */
#define _GNU_SOURCE
/* deprecated calls are still part of the API programs use: no warnings for implementing them */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errors.inc"   /* generated from cudalab/runtime/core/errors.py: {code, name, text} */

/* ------------------------------------------------------------------ connection to the emulator */
static int sock = -1;
static char *arena;
static size_t arena_size;

static void die(const char *msg) {
    fflush(stdout);
    fprintf(stderr, "cudalab: %s\n", msg);
    _exit(99);
}

static void connect_emulator(void) {
    if (sock >= 0) return;
    const char *fd = getenv("CUDALAB_FD"), *afd = getenv("CUDALAB_ARENA_FD");
    const char *base = getenv("CUDALAB_ARENA_BASE"), *size = getenv("CUDALAB_ARENA_SIZE");
    if (!fd || !afd || !base || !size)
        die("this program was linked against cudalab's emulated CUDA runtime; run it with "
            "`cudalab run prog.cu` (or a %%cuda cell), which starts the emulator it talks to.");
    sock = atoi(fd);
    arena_size = strtoull(size, 0, 0);
    void *want = (void *)strtoull(base, 0, 0);
    arena = mmap(want, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, atoi(afd), 0);
    if (arena != want && !getenv("CUDALAB_REEXEC")) {
        /* a library landed on the arena's addresses: start again with a fresh random layout */
        static char buf[1 << 16];
        char *argv[256];
        int n = 0;
        FILE *f = fopen("/proc/self/cmdline", "rb");
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        for (size_t i = 0; i < len && n < 255; i += strlen(buf + i) + 1) argv[n++] = buf + i;
        argv[n] = 0;
        setenv("CUDALAB_REEXEC", "1", 1);
        if (n) execv("/proc/self/exe", argv);
    }
    if (arena != want)
        die("could not map the emulated device memory at its address (address space randomization?); "
            "try again, or report this with your system's details.");
}

static int in_arena(const void *p, size_t n) {
    return (const char *)p >= arena && (const char *)p + n <= arena + arena_size && n <= arena_size;
}

static void send_all(int fd, const void *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0) die("lost the connection to the emulator.");
        p = (const char *)p + k, n -= (size_t)k;
    }
}

/* A request goes in one write (its length, marks, tag, text and bytes gathered), so the emulator
 * wakes once for it. */
static void send_iov(int fd, struct iovec *iov, int n) {
    while (n) {
        ssize_t k = writev(fd, iov, n);
        if (k <= 0) die("lost the connection to the emulator.");
        while (n && (size_t)k >= iov->iov_len) k -= (ssize_t)iov->iov_len, iov++, n--;
        if (n) iov->iov_base = (char *)iov->iov_base + k, iov->iov_len -= (size_t)k;
    }
}

static void recv_all(int fd, void *p, size_t n) {
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k <= 0) die("lost the connection to the emulator.");
        p = (char *)p + k, n -= (size_t)k;
    }
}

/* The last reply of this thread: its numbers and its bytes (printf text, a message, device
 * properties). Programs may call the runtime from several threads (host callbacks that start
 * threads, as NVIDIA's simpleCallback does): one request at a time goes over the socket, and each
 * thread keeps its own reply. */
static __thread unsigned long long R[256];
static __thread int NR;
static __thread char *RB;
static __thread size_t RBN;
static pthread_mutex_t wire = PTHREAD_MUTEX_INITIALIZER;
static void say_once(const char *msg);
static void guard_pinned(const void *p, size_t n, int prot);   /* stackguard.c: a queued copy's page-locked side */
static void unguard_pinned(void);
static void kernels_ran(const char *frame, size_t n);

/* Which host thread asks, and whether it came in through a _ptds/_ptsz entry point (a program
 * built with --default-stream per-thread): then stream 0 means this thread's own default stream,
 * as cudaStreamPerThread always does. Requests carry "@thread,per-thread " in front when either
 * matters (any thread but the first, or a per-thread call). */
static __thread int thread_no = -1;
static __thread int per_thread_call;
static int nthreads;

/* The host code between two runtime calls takes time on a GPU's clock too: a CPU loop timed with
 * CUDA events measures its milliseconds. This thread's CPU time since its last reply goes in front
 * of the next request ("~microseconds "), above HOST_GAP_US so that the shim's own microseconds per
 * call do not count. CPU time, not wall time: waiting for a core on a busy machine is not the
 * program's work. 100 us, not 20 (clock round 19): between two calls with no host code between them
 * a busy machine's thread spends 20 to 66 us now and then (page faults, interrupts: eight runs of
 * latency_gpu_probe's 'hist' at a load of 13 sent such gaps, one or two a run, against its 250 us
 * loop that fills the text), and one inside a timed stretch moved its launches: CI saw the four
 * streams' speed-up at 1.23, here one stream's time went from 0.250 to 0.292 ms. */
#define HOST_GAP_US 100
static __thread long long last_reply_ns = -1;
static long long thread_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
/* After the shim itself moved a copy's or a memset's bytes (the timeline already gave that work
 * its time on the copy engine), the host's own time starts again from here. */
static void shim_worked(void) { last_reply_ns = thread_cpu_ns(); }

static unsigned long long requests;    /* runtime calls answered so far (hostclock.c asks) */
static void host_clock_note(void);

/* Set on the driver thread, which runs host functions: the runtime is not theirs to call. Its own
 * requests (``replaying``: a library call captured into a graph, sent again by its host node) go over
 * its own socket, ``host_fd``, "?" first: the emulator waits there for the node to end. */
static __thread int in_host_function, replaying, host_fd = -1;

/* A launch, event record or asynchronous copy within the arena whose request text is one that
 * succeeded before (a loop that times a kernel, 10^4 launches; a streams exercise that queues copy,
 * kernel, copy on each of 306 streams in turn, a thousand times over) is sent without waiting for its
 * answer, while nothing has been asked since that could change what its checks read: only launches,
 * event records, asynchronous copies, synchronizations, queries and allocations came between
 * (``keeps_known``), each of which succeeded. Any other request (a free, a stream's or event's
 * destruction, a capture) or any error forgets them all. The request starts with "!"; whatever goes
 * wrong meanwhile on the emulator's side (work it ran while the program was busy) is the answer to the
 * program's next answered request instead, as an asynchronous error is on a GPU. ``launch``,
 * ``cudaEventRecord`` and ``copy`` set ``may_go_unanswered`` for their request, any asynchronous copy
 * ``keeps_known``; the decision is taken under the wire lock, where no other thread's request can come
 * between. A launch's parameters travel after the text: the same kernel and shape on other arguments
 * goes unanswered too (its checks do not read them). The texts are kept in a hash table of
 * ``KNOWN_SLOTS`` (NCI's axpy_overlapped sends 1,224 different ones per timing, which a ring of 64
 * never held), emptied when three quarters full. */
static __thread int may_go_unanswered, keeps_known;
#define KNOWN_SLOTS 8192                    /* a power of two */
typedef struct { unsigned long long hash; int who; char *text; } Known;
static Known known[KNOWN_SLOTS];
static int known_used[KNOWN_SLOTS], nknown;    /* the slots in use */

/* whose: thread_no * 2 + per_thread_call; the hash is never 0 (an empty slot) */
static unsigned long long known_hash(const char *head, int who) {
    unsigned long long h = 1469598103934665603ULL ^ (unsigned long long)who;
    for (const unsigned char *c = (const unsigned char *)head; *c; c++) h = (h ^ *c) * 1099511628211ULL;
    return h | 1;
}

static int known_slot(const char *head, int who, unsigned long long h) {
    int i = (int)(h & (KNOWN_SLOTS - 1));
    while (known[i].hash && !(known[i].hash == h && known[i].who == who && !strcmp(known[i].text, head)))
        i = (i + 1) & (KNOWN_SLOTS - 1);
    return i;
}

static int is_known_good(const char *head, int who) {
    return nknown && known[known_slot(head, who, known_hash(head, who))].hash;
}

static void forget_known(void) {
    for (int k = 0; k < nknown; k++) {
        Known *e = &known[known_used[k]];
        free(e->text);
        e->text = 0, e->hash = 0;
    }
    nknown = 0;
}

static void remember_good(const char *head, int who) {
    if (nknown >= KNOWN_SLOTS / 4 * 3) forget_known();
    unsigned long long h = known_hash(head, who);
    int i = known_slot(head, who, h);
    if (known[i].hash) return;
    known[i] = (Known){h, who, strdup(head)};
    known_used[nknown++] = i;
}

/* Requests that, answered with success, leave every check a known request passed as it was: they wait,
 * ask, or add (an allocation, a stream, an event) */
static int keeps_known_requests(const char *head) {
    static const char *const names[] = {"last_error", "device_sync", "stream_sync", "event_sync", "stream_query",
                                        "event_query", "elapsed", "malloc", "stream_create", "event_create", 0};
    size_t n = strcspn(head, " ");
    for (int k = 0; names[k]; k++)
        if (strlen(names[k]) == n && !strncmp(head, names[k], n)) return 1;
    return 0;
}

/* A process the program forks shares its socket to the emulator and its device memory's mapping
 * with the program, but not the emulator's idea of whose request is whose. On a GPU a process forked
 * before its parent's first CUDA call uses CUDA as any process does, and one forked after it gets
 * cudaErrorInitializationError from every call that needs a context (device queries still answer: an
 * H200, tests/test_programs_fork.py). So a forked child's first request starts an emulator of its own
 * (``start_own_emulator``: a second server over its own socket and arena, mapped where the parent's
 * was), and a child of a parent that had used CUDA is refused as on a GPU. */
static pid_t program_pid;       /* the process this emulator serves: set before main, at registration */
static int cuda_used;           /* a request other than registration's was made (the context exists) */
static int context_lost;        /* forked after its parent used CUDA: only device queries answer */
static pid_t forked_from;       /* the process this one was forked from, once it has an emulator of its own */

static int forked_child(void) {
    if (!program_pid) program_pid = getpid();
    return getpid() != program_pid;
}

/* The answer to a request the shim refuses itself, without asking the emulator: ``code``, no results */
static int refused(int code) {
    if (!RB) RB = calloc(1, 1);
    RB[0] = 0, RBN = 0, NR = 1, R[0] = code;
    return code;
}

static int is_registration(const char *fmt) { return !strncmp(fmt, "func ", 5) || !strncmp(fmt, "var ", 4); }
static int is_device_query(const char *fmt) { return !strcmp(fmt, "props") || !strncmp(fmt, "attr ", 5); }

static int refuse_after_fork(void) {
    say_once("cudalab: this process was started with fork() after its parent had used the CUDA runtime, so its "
             "CUDA calls answer cudaErrorInitializationError, as on a GPU (device queries still answer): a CUDA "
             "context does not survive fork(). Fork before the parent's first CUDA call, or let the parent do "
             "the GPU work.");
    return refused(cudaErrorInitializationError);
}

static void start_own_emulator(void);

static int rpc_blob(const void *blob, size_t bloblen, const char *fmt, ...) {
    if (forked_child()) {
        if (cuda_used && !is_device_query(fmt)) return refuse_after_fork();
        start_own_emulator();
    }
    if (context_lost && !is_device_query(fmt)) return refuse_after_fork();
    if (!cuda_used && !is_registration(fmt)) cuda_used = 1;
    if (in_host_function && !replaying)     /* an H200 answered cudaErrorNotPermitted (tests/runtime_api/host_order.cu) */
        return refused(cudaErrorNotPermitted);
    char small[512], *head = small;     /* small: little stack below main's first frame */
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int h = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (h >= (int)sizeof small) {       /* a long request (a graph node's many dependencies) */
        head = malloc((size_t)h + 1);
        vsnprintf(head, (size_t)h + 1, fmt, again);
    }
    va_end(again);
    if (thread_no < 0) thread_no = __sync_fetch_and_add(&nthreads, 1);
    char tag[64] = "";
    int fd = host_fd, nested = in_host_function;     /* (the driver thread's time is not the host's) */
    long long gap_us = last_reply_ns < 0 || nested ? 0 : (thread_cpu_ns() - last_reply_ns) / 1000;
    int t = gap_us >= HOST_GAP_US ? snprintf(tag, sizeof tag, "~%lld ", gap_us) : 0;
    if (thread_no || per_thread_call)
        t += snprintf(tag + t, sizeof tag - (size_t)t, "@%d,%d ", thread_no, per_thread_call > 0);
    if (!nested) {
        pthread_mutex_lock(&wire);
        connect_emulator();
        fd = sock;
    }
    int launch = may_go_unanswered && !nested && head == small, who = thread_no * 2 + per_thread_call;
    int unanswered = launch && is_known_good(head, who);
    uint32_t len = (uint32_t)(unanswered + nested + t + h + 1 + bloblen);
    requests++;
    struct iovec iov[] = {{&len, 4}, {"!", (size_t)unanswered}, {"?", (size_t)nested}, {tag, (size_t)t},
                          {head, (size_t)h + 1}, {(void *)blob, bloblen}};
    send_iov(fd, iov, 6);
    if (unanswered) {
        pthread_mutex_unlock(&wire);
        last_reply_ns = thread_cpu_ns();
        NR = 2, R[0] = cudaSuccess, R[1] = 1, RBN = 0;     /* (a copy: the emulator takes it) */
        if (RB) RB[0] = 0;
        return cudaSuccess;
    }
    for (;;) {     /* kernels that ran while the request was answered come first, in a "P" frame */
        recv_all(fd, &len, 4);
        free(RB);
        RB = malloc(len + 1);
        recv_all(fd, RB, len);
        RB[len] = 0;
        if (len < 2 || RB[0] != 'P' || RB[1]) break;
        kernels_ran(RB + 2, len - 2);
    }
    int ok = len >= 2 && RB[0] == '0' && (RB[1] == 0 || RB[1] == ' ');    /* cudaSuccess, numbers or none */
    if (launch && ok)     /* it succeeded: the same again goes unanswered */
        remember_good(head, who);
    else if (!ok || nested || !(keeps_known || keeps_known_requests(head)))
        forget_known();     /* anything else may change what a launch's checks read */
    if (!nested) pthread_mutex_unlock(&wire);
    if (head != small) free(head);
    last_reply_ns = thread_cpu_ns();
    size_t hl = strlen(RB);
    RBN = len > hl ? len - hl - 1 : 0;
    char *s = RB, *e;
    NR = 0;
    while (NR < 256) {
        unsigned long long v = strtoull(s, &e, 0);
        if (e == s) break;
        R[NR++] = v, s = e;
    }
    memmove(RB, RB + (len > hl ? hl + 1 : hl), RBN);
    RB[RBN] = 0;
    if (NR && R[0] && RBN > 1 && !RB[0]) {   /* why the call failed, for the student */
        say_once(RB + 1);
        shim_worked();     /* (writing it is the shim's time, not the program's host code) */
    }
    return NR ? (int)R[0] : (int)cudaErrorUnknown;
}
#define rpc(...) rpc_blob(0, 0, __VA_ARGS__)

/* ------------------------------------------------------------------ errors */
static __thread cudaError_t last_error = cudaSuccess;

/* The emulator's explanation of a failed call goes to stderr, once per distinct message. */
static void say_once(const char *msg) {
    static unsigned long said[256];
    static int nsaid;
    unsigned long h = 5381;
    for (const char *c = msg; *c; c++) h = h * 33 + (unsigned char)*c;
    for (int i = 0; i < nsaid; i++)
        if (said[i] == h) return;
    if (nsaid < 256) said[nsaid++] = h;
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
}

static cudaError_t ret(int code) {
    if (code && code != cudaErrorNotReady) last_error = (cudaError_t)code;
    return (cudaError_t)code;
}

const char *cudaGetErrorString(cudaError_t e) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == (int)e) return ERRORS[i].text;
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == (int)e) return ERRORS[i].name;
    return "cudaErrorUnknown";
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e ? e : (cudaError_t)rpc("last_error");   /* a sticky (kernel) error stays */
}

cudaError_t cudaPeekAtLastError(void) {
    if (last_error) return last_error;
    return (cudaError_t)rpc("last_error");
}

/* ------------------------------------------------------------------ device printf */
/* Kernels' printf text comes back with each launch; like the GPU's printf buffer it is written
 * out at the next synchronization point, through stdio so it keeps its place among the host's
 * own printf lines. */
static char *pending;
static size_t npending;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;   /* the driver thread prints too */

static void keep_text(const char *text, size_t n) {
    if (!n) return;
    pthread_mutex_lock(&pending_lock);
    pending = realloc(pending, npending + n);
    memcpy(pending + npending, text, n);
    npending += n;
    pthread_mutex_unlock(&pending_lock);
}

static void flush_printf(void) {
    pthread_mutex_lock(&pending_lock);
    if (npending) {
        fwrite(pending, 1, npending, stdout);
        fflush(stdout);
        npending = 0;
    }
    pthread_mutex_unlock(&pending_lock);
}

static void at_exit(void) {
    if (forked_child()) return;     /* the parent's kernels' text and clock, not the child's to tell */
    flush_printf();
    if (!forked_from) host_clock_note();     /* (a forked process's readings began in its parent's) */
}

static int synced(int code) {
    flush_printf();
    unguard_pinned();   /* what the host waited for has run: its buffers may go to a system call (stackguard.c) */
    return code;
}

/* ------------------------------------------------------------------ registration (nvcc's hidden calls) */
typedef struct { const void *host; char *name; int n; int size[64], align[64]; } Func;
static Func funcs[1024];
static int nfuncs;

typedef struct { const void *host; unsigned long long dev; size_t size; char *name; int managed; } Var;
static Var vars[1024];
static int nvars;

void **__cudaRegisterFatBinary(void *fatCubin) {
    static int hooked;
    if (!program_pid) program_pid = getpid();
    if (!hooked) atexit(at_exit), hooked = 1;
    return (void **)fatCubin;
}

void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
char __cudaInitModule(void **h) { (void)h; return 1; }

void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize) {
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (nfuncs == 1024) die("too many kernels in one program (the limit is 1024).");
    Func *f = &funcs[nfuncs++];
    f->host = hostFun;
    f->name = strdup(deviceName);
    f->n = -1;   /* parameter layout asked for at the first launch */
    rpc("func %p %s", (const void *)hostFun, deviceName);
}

static void register_var(const void *host, const char *name, size_t size, int managed) {
    if (nvars == 1024) die("too many __device__ variables in one program (the limit is 1024).");
    if (rpc("var %p %s %zu %d", host, name, size, managed) == 0) {
        vars[nvars].host = host, vars[nvars].dev = R[1], vars[nvars].size = size;
        vars[nvars].name = strdup(name), vars[nvars].managed = managed;
        nvars++;
    }
}

void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName,
                       int ext, size_t size, int constant, int global) {
    (void)h, (void)deviceAddress, (void)ext, (void)constant, (void)global;
    register_var(hostVar, deviceName, size, 0);
}

void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global) {
    (void)h, (void)deviceAddress, (void)ext, (void)constant, (void)global;
    register_var(hostVarPtrAddress, deviceName, size, 1);
    if (nvars && vars[nvars - 1].host == hostVarPtrAddress)
        *hostVarPtrAddress = (void *)vars[nvars - 1].dev;   /* the host reads it through this pointer */
}

static Func *find_func(const void *host) {
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].host == host) return &funcs[i];
    return 0;
}

static Var *find_var(const void *host) {
    for (int i = 0; i < nvars; i++)
        if (vars[i].host == host) return &vars[i];
    return 0;
}

/* ------------------------------------------------------------------ a forked process's own emulator */
/* The emulator of a forked process: cudalab's server started again (programs/forked.py) from the
 * program's build, over a socket of the child's own. Started through a process that exits at once, so
 * the program's wait() never meets it; it ends when the child closes its socket (exits). It sends back
 * its arena's and its driver socket's descriptors; the child maps that arena where the parent's was
 * (the same device addresses: the same module, registered again in the same order). */
static int recv_fds(int fd, int *fds, int n) {
    char byte, space[CMSG_SPACE(4 * sizeof(int))];
    struct iovec io = {&byte, 1};
    struct msghdr m = {0};
    m.msg_iov = &io, m.msg_iovlen = 1, m.msg_control = space, m.msg_controllen = sizeof space;
    if (recvmsg(fd, &m, 0) != 1) return 0;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(n * sizeof(int))) return 0;
    memcpy(fds, CMSG_DATA(c), n * sizeof(int));
    return 1;
}

static void set_fd_env(const char *name, int fd) {
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv(name, v, 1);
}

static void close_env_fd(const char *name) {
    const char *v = getenv(name);
    if (v) close(atoi(v));
}

static void start_own_emulator(void) {
    const char *python = getenv("CUDALAB_PYTHON");
    pthread_mutex_init(&wire, 0);             /* another thread of the parent may have held them at fork() */
    pthread_mutex_init(&pending_lock, 0);
    if (!python || !getenv("CUDALAB_PROGRAM_DIR"))
        die("this process was started with fork() and calls the CUDA runtime, but the program's emulator did not "
            "say how to start another one (a shim and server of different versions?).");
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) die("could not make a socket for the forked process's emulator.");
    pid_t me = getpid(), between = fork();
    if (between == 0) {
        if (fork() == 0) {      /* the emulator: none of the parent's connection, its own session */
            char fd[16], pid[16], path[4096];
            setsid();
            close_env_fd("CUDALAB_FD"), close_env_fd("CUDALAB_ARENA_FD"), close_env_fd("CUDALAB_HOST_FD");
            snprintf(fd, sizeof fd, "%d", dup(sv[1]));     /* (dup: not closed on exec) */
            snprintf(pid, sizeof pid, "%d", (int)me);
            const char *root = getenv("CUDALAB_PACKAGE_ROOT"), *old = getenv("PYTHONPATH");
            snprintf(path, sizeof path, "%s%s%s", root ? root : "", old && *old ? ":" : "", old ? old : "");
            setenv("PYTHONPATH", path, 1);
            execl(python, python, "-m", "cudalab.programs.forked", fd, pid, (char *)0);
            _exit(127);
        }
        _exit(0);
    }
    if (between > 0) waitpid(between, 0, 0);
    close(sv[1]);
    int fds[2];
    if (between < 0 || !recv_fds(sv[0], fds, 2))
        die("could not start an emulator for a process the program started with fork() (see the message above, "
            "if any).");
    /* the parent's connection and memory are the parent's: leave them, take this process's own */
    if (sock >= 0) close(sock);
    close_env_fd("CUDALAB_ARENA_FD"), close_env_fd("CUDALAB_HOST_FD");
    if (arena) munmap(arena, arena_size);
    sock = -1, arena = 0;
    set_fd_env("CUDALAB_FD", sv[0]), set_fd_env("CUDALAB_ARENA_FD", fds[0]), set_fd_env("CUDALAB_HOST_FD", fds[1]);
    context_lost = cuda_used;
    forked_from = program_pid;
    forget_known();
    npending = 0;                             /* the parent's kernels' printf text is the parent's to print */
    program_pid = getpid();
    for (int i = 0; i < nfuncs; i++) rpc("func %p %s", funcs[i].host, funcs[i].name);
    for (int i = 0; i < nvars; i++)
        if (rpc("var %p %s %zu %d", vars[i].host, vars[i].name, vars[i].size, vars[i].managed) || R[1] != vars[i].dev)
            die("the forked process's emulator placed the program's __device__ variables elsewhere than the parent's; "
                "please report this with the program.");
}

/* ------------------------------------------------------------------ launches */
typedef struct { dim3 grid, block; size_t shmem; cudaStream_t stream; } Config;
static Config configs[64];
static int nconfigs;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream) {
    if (nconfigs == 64) return 1;
    configs[nconfigs++] = (Config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream) {
    if (!nconfigs) return cudaErrorMissingConfiguration;
    Config c = configs[--nconfigs];
    *gridDim = c.grid, *blockDim = c.block, *sharedMem = c.shmem;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func) {
    *kernel = (cudaKernel_t)func;   /* the host stub's address names the kernel */
    return cudaSuccess;
}

/* A kernel's parameter layout (sizes and alignments), asked for at its first use. */
static int load_params(Func *f) {
    if (f->n >= 0) return 0;
    int code = rpc("params %s", f->name);
    if (code) return code;
    f->n = (int)R[1] < 64 ? (int)R[1] : 64;
    for (int i = 0; i < f->n; i++) f->size[i] = (int)R[2 + 2 * i], f->align[i] = (int)R[3 + 2 * i];
    return 0;
}

/* The arguments packed as the kernel's parameter buffer (each at its alignment); free() it. */
static char *pack_args(Func *f, void **args, size_t *total) {
    size_t n = 0;
    for (int i = 0; i < f->n; i++) n = (n + f->align[i] - 1) / f->align[i] * f->align[i] + f->size[i];
    char *buf = calloc(1, n + 1);
    size_t off = 0;
    for (int i = 0; i < f->n; i++) {
        off = (off + f->align[i] - 1) / f->align[i] * f->align[i];
        memcpy(buf + off, args[i], f->size[i]);
        off += f->size[i];
    }
    *total = n;
    return buf;
}

/* Queued kernels ran while a request was answered: their printf text waits for the next
 * synchronization (that request, if it is one); the explanation of a fault is told at once. */
static void kernels_ran(const char *frame, size_t n) {
    size_t text = strlen(frame);
    keep_text(frame, text);
    if (text + 1 < n) {
        flush_printf();
        say_once(frame + text + 1);
    }
}

/* Device printf text that came back with a reply waits for the next synchronization. */
static void keep_printf(void) {
    size_t text = strlen(RB);
    keep_text(RB, text);
    if (!R[0] && text + 1 < RBN) {   /* the emulator's explanation of a fault it reports later */
        flush_printf();
        say_once(RB + text + 1);
    }
}

/* ``options``: launch attributes as "key=value" words (cudaLaunchKernelEx). */
static cudaError_t launch(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t stream,
                          const char *options) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    int code = load_params(f);
    if (code) return ret(code);
    size_t total;
    char *buf = pack_args(f, args, &total);
    flush_printf();   /* the GPU writes earlier kernels' printf at the start of a launch */
    may_go_unanswered = 1;
    code = rpc_blob(buf, total, "launch %s %u %u %u %u %u %u %zu %p %s", f->name, g.x, g.y, g.z,
                    b.x, b.y, b.z, shmem, (void *)stream, options);
    may_go_unanswered = 0;
    free(buf);
    return ret(code);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch((const void *)kernel, g, b, args, shmem, s, "");
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    per_thread_call++;
    cudaError_t r = launch((const void *)kernel, g, b, args, shmem, s, "");
    per_thread_call--;
    return r;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch(func, g, b, args, shmem, s, "");
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch(func, g, b, args, shmem, s, "cooperative=1");
}

/* ------------------------------------------------------------------ memory */
static cudaError_t alloc(void **p, size_t size, const char *kind) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = rpc("malloc %zu %s", size, kind);
    if (code != cudaErrorDevicesUnavailable) *p = code ? 0 : (void *)R[1];   /* without a context, untouched */
    return ret(code);
}

cudaError_t cudaMalloc(void **p, size_t size) { return alloc(p, size, "device"); }
cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags) { (void)flags; return alloc(p, size, "managed"); }
cudaError_t cudaMallocHost(void **p, size_t size) { return alloc(p, size, "host"); }
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) { (void)flags; return alloc(p, size, "host"); }

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height) {
    if (!pitch) return ret(cudaErrorInvalidValue);
    *pitch = (width + 511) / 512 * 512;   /* rows start 512-byte aligned, like an A100's */
    return alloc(p, *pitch * height, "device");
}

cudaError_t cudaFree(void *p) { return ret(rpc("free %p device", p)); }   /* NULL too: a broken context says so */
cudaError_t cudaFreeHost(void *p) { return ret(rpc("free %p host", p)); }

cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags) { return ret(rpc("register %p %zu %u", p, size, flags)); }
cudaError_t cudaHostUnregister(void *p) { return ret(rpc("unregister %p", p)); }

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
    (void)flags;
    if (!pDevice || !in_arena(pHost, 1)) return ret(cudaErrorInvalidValue);
    *pDevice = pHost;   /* pinned memory lives in the shared arena: one address for both sides */
    return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int *flags, void *pHost) {
    if (!flags || !in_arena(pHost, 1)) return ret(cudaErrorInvalidValue);
    *flags = cudaHostAllocMapped;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_, size_t *total) {
    int code = rpc("meminfo");
    if (!code) *free_ = R[1], *total = R[2];
    return ret(code);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *ptr) {
    int code = rpc("pointer %p", ptr);
    if (code) return ret(code);
    memset(a, 0, sizeof *a);
    a->type = (enum cudaMemoryType)R[1];
    a->device = 0;
    a->devicePointer = a->type == cudaMemoryTypeUnregistered ? 0 : (void *)ptr;
    a->hostPointer = a->type == cudaMemoryTypeDevice ? 0 : (void *)ptr;
    return cudaSuccess;
}

/* Copies: the emulator checks the device side against its allocation table and models the time;
 * the bytes move here, unless the emulator takes the copy (into a graph being captured, or queued
 * in its stream behind a kernel: an asynchronous copy within the shared arena). */
static cudaError_t copy(void *dst, const void *src, size_t n, int kind, cudaStream_t s, int sync) {
    if (!n) return cudaSuccess;
    /* a NULL side is the emulator's to refuse: a broken context answers its own error first, as on a GPU */
    keeps_known = !sync;    /* an asynchronous copy leaves launches that succeeded as they were */
    /* one within the arena (device, managed, cudaMallocHost memory) the emulator can take: the same
     * again goes unanswered, and the emulator moves its bytes in their turn (server.Server.op_copy) */
    may_go_unanswered = !sync && in_arena(dst, n) && in_arena(src, n);
    int code = rpc("copy %p %p %zu %d %p %d", dst, src, n, kind, (void *)s, sync);
    keeps_known = may_go_unanswered = 0;
    if (code) return ret(sync ? synced(code) : code);
    if (NR > 1 && R[1]) {                      /* taken: captured into a graph, or queued in its stream */
        /* (page-locked memory of the arena only: the emulator writes a registered buffer through the
         * program's address space, which a protected page would refuse) */
        if (!sync && kind == cudaMemcpyDeviceToHost && in_arena(dst, n)) guard_pinned(dst, n, PROT_NONE);
        if (!sync && kind == cudaMemcpyHostToDevice && in_arena(src, n)) guard_pinned(src, n, PROT_READ);
        return cudaSuccess;
    }
    memmove(dst, src, n);
    shim_worked();
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) { return copy(dst, src, n, kind, 0, 1); }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s) { return copy(dst, src, n, kind, s, 0); }

/* a peer copy within the one GPU is a device-to-device copy, as on a machine with one GPU (p2pBandwidthLatencyTest
 * measures device 0 to device 0 there); another device is cudaErrorInvalidDevice, as there */
static cudaError_t peer_copy(void *dst, int to, const void *src, int from, size_t n, cudaStream_t s, int sync) {
    if (to != 0 || from != 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "cudalab: a peer copy from device %d to device %d needs a second GPU, and the "
                 "emulator is one (device 0), so it returns cudaErrorInvalidDevice.", from, to);
        say_once(msg);
        return ret(cudaErrorInvalidDevice);
    }
    return copy(dst, src, n, cudaMemcpyDeviceToDevice, s, sync);
}

cudaError_t cudaMemcpyPeer(void *dst, int to, const void *src, int from, size_t n) {
    return peer_copy(dst, to, src, from, n, 0, 1);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int to, const void *src, int from, size_t n, cudaStream_t s) {
    return peer_copy(dst, to, src, from, n, s, 0);
}

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                          int kind, cudaStream_t s, int sync) {
    if (!width || !height) return cudaSuccess;
    if (width > dpitch || width > spitch) return ret(cudaErrorInvalidPitchValue);
    int code = rpc("copy2d %p %zu %p %zu %zu %zu %d %p %d", dst, dpitch, src, spitch, width, height, kind, (void *)s, sync);
    if (code) return ret(code);
    if (NR > 1 && R[1]) return cudaSuccess;
    for (size_t r = 0; r < height; r++) memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    shim_worked();
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) { return copy2d(dst, dpitch, src, spitch, width, height, kind, 0, 1); }
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s) { return copy2d(dst, dpitch, src, spitch, width, height, kind, s, 0); }

static cudaError_t fill(void *dst, int value, size_t n, size_t rows, size_t pitch, cudaStream_t s, int sync) {
    if (!n || !rows) return cudaSuccess;
    int code = rpc("memset %p %d %zu %zu %zu %p %d", dst, value & 0xff, n, rows, pitch, (void *)s, sync);
    if (code) return ret(code);
    if (NR > 1 && R[1]) return cudaSuccess;
    for (size_t r = 0; r < rows; r++) memset((char *)dst + r * pitch, value, n);
    shim_worked();
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t n) { return fill(dst, value, n, 1, 0, 0, 1); }
cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s) { return fill(dst, value, n, 1, 0, s, 0); }

cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height) {
    if (width > pitch && height > 1) return ret(cudaErrorInvalidPitchValue);
    return fill(dst, value, width, height, pitch, 0, 1);
}

cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height, cudaStream_t s) {
    if (width > pitch && height > 1) return ret(cudaErrorInvalidPitchValue);
    return fill(dst, value, width, height, pitch, s, 0);
}

cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, struct cudaMemLocation loc, unsigned int flags, cudaStream_t s) {
    (void)n, (void)loc, (void)flags, (void)s;   /* one memory for host and device: nothing to move */
    return in_arena(p, 1) ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice, struct cudaMemLocation loc) {
    (void)n, (void)advice, (void)loc;
    return in_arena(p, 1) ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t n, unsigned int flags) {
    (void)s, (void)p, (void)n, (void)flags;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ symbols */
static cudaError_t symbol(const void *sym, size_t n, size_t offset, char **dev) {
    Var *v = find_var(sym);
    if (!v) return ret(cudaErrorInvalidSymbol);
    if (offset > v->size || n > v->size - offset) return ret(cudaErrorInvalidValue);
    *dev = (char *)v->dev + offset;
    return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t offset, enum cudaMemcpyKind kind) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dev, src, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyHostToDevice, 0, 1);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t offset, enum cudaMemcpyKind kind) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dst, dev, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyDeviceToHost, 0, 1);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t s) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dev, src, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyHostToDevice, s, 0);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t s) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dst, dev, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyDeviceToHost, s, 0);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *sym) {
    char *dev;
    cudaError_t e = symbol(sym, 0, 0, &dev);
    if (!e) *devPtr = dev;
    return e;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *sym) {
    Var *v = find_var(sym);
    if (!v) return ret(cudaErrorInvalidSymbol);
    *size = v->size;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ streams and events */
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority) {
    if (!s) return ret(cudaErrorInvalidValue);
    int code = rpc("stream_create %u %d", flags, priority);
    if (NR > 1) *s = (cudaStream_t)R[1];     /* a broken context's error comes with a stream too, as on a GPU */
    return ret(code);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) { return cudaStreamCreateWithPriority(s, flags, 0); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) { return ret(rpc("stream_destroy %p", (void *)s)); }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return ret(synced(rpc("stream_sync %p", (void *)s))); }
cudaError_t cudaStreamQuery(cudaStream_t s) { return ret(rpc("stream_query %p", (void *)s)); }

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
    return ret(rpc("stream_wait %p %p %u", (void *)s, (void *)e, flags));
}

static cudaError_t stream_info(cudaStream_t s, int which, unsigned long long *out) {
    int code = rpc("stream_info %p", (void *)s);
    if (!code) *out = R[which];
    return ret(code);
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority) {
    unsigned long long v;
    cudaError_t e = stream_info(s, 2, &v);
    if (!e) *priority = (int)v;
    return e;
}

cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int *flags) {
    unsigned long long v;
    cudaError_t e = stream_info(s, 1, &v);
    if (!e) *flags = (unsigned)v;
    return e;
}

cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id) { return stream_info(s, 3, id); }

cudaError_t cudaStreamGetDevice(cudaStream_t s, int *device) {
    unsigned long long v;
    cudaError_t e = stream_info(s, 3, &v);
    if (!e) *device = 0;
    return e;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ host functions: the driver thread */
/* Host functions (cudaLaunchHostFunc, cudaStreamAddCallback, graph host nodes) wait in their streams in
 * the emulator like kernels. When a stream gets to one, the emulator sends "function data" and the
 * printf text of the kernels that ran before it over CUDALAB_HOST_FD; this thread, the runtime's own as
 * on a GPU, prints the text, calls the function and answers its CPU time in microseconds. The
 * program's thread that needed the work done (a synchronization, say) waits for its reply meanwhile. */
static int read_full(int fd, void *p, size_t n) {
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k <= 0) return 0;
        p = (char *)p + k, n -= (size_t)k;
    }
    return 1;
}

static __thread cudaError_t callback_status;   /* what the stream callback being run is told */

static void *driver_thread(void *arg) {
    int fd = host_fd = (int)(intptr_t)arg;
    in_host_function = 1;
    uint32_t len;
    while (read_full(fd, &len, 4)) {
        char *msg = malloc((size_t)len + 1);
        if (!read_full(fd, msg, len)) break;
        msg[len] = 0;
        size_t head = strlen(msg);
        if (head + 1 < len) {
            keep_text(msg + head + 1, len - head - 1);
            flush_printf();
        }
        char *rest;
        cudaHostFn_t fn = (cudaHostFn_t)(uintptr_t)strtoull(msg, &rest, 0);
        void *data = (void *)(uintptr_t)strtoull(rest, &rest, 0);
        callback_status = (cudaError_t)strtol(rest, 0, 0);
        free(msg);
        long long start = thread_cpu_ns();
        fn(data);
        char reply[32];
        uint32_t n = (uint32_t)snprintf(reply, sizeof reply, "%lld", (thread_cpu_ns() - start) / 1000);
        if (write(fd, &n, 4) != 4 || write(fd, reply, n) != (ssize_t)n) break;
    }
    return 0;
}

static void start_driver(void) {
    if (forked_child()) {           /* its own emulator's socket, never the parent's */
        if (cuda_used) return;      /* (its host functions are refused: no context survived fork()) */
        start_own_emulator();
    }
    const char *fd = getenv("CUDALAB_HOST_FD");
    pthread_t t;
    pthread_attr_t attr;
    if (!fd) return;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, driver_thread, (void *)(intptr_t)atoi(fd)))
        die("could not start the thread that runs host functions (cudaLaunchHostFunc).");
}

/* Before the first host function or graph launch: the emulator may then ask for one. */
static void start_driver_thread(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, start_driver);
}

/* Host functions run when their stream gets to them (unless a capture takes the call into a graph). */
static cudaError_t host_func(cudaStream_t s, void *fn, void *data, int callback) {
    if (!fn) return ret(cudaErrorInvalidValue);
    start_driver_thread();
    return ret(rpc("host_func %p %p %p %d", (void *)s, fn, data, callback));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *userData) {
    return host_func(s, (void *)fn, userData, 0);
}

/* A stream callback is a host function that calls it with (stream, cudaSuccess, data); in a capture,
 * a host node that does so at every launch of its graph (``once`` 0: its Callback stays). */
typedef struct { cudaStreamCallback_t cb; cudaStream_t s; void *data; int once; } Callback;
static void CUDART_CB run_callback(void *p) {
    Callback *c = p;
    c->cb(c->s, callback_status, c->data);
    if (c->once) free(c);
}

cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *userData, unsigned int flags) {
    if (flags) return ret(cudaErrorInvalidValue);
    if (!cb) return ret(cudaErrorInvalidValue);
    Callback *c = malloc(sizeof *c);
    *c = (Callback){cb, s, userData, 1};
    cudaError_t e = host_func(s, (void *)run_callback, c, 1);
    if (e) free(c);
    else if (NR > 1 && R[1]) c->once = 0;      /* captured: it runs when the graph does, not now */
    return e;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
    if (!e) return ret(cudaErrorInvalidValue);
    int code = rpc("event_create %u", flags);
    if (!code) *e = (cudaEvent_t)R[1];
    return ret(code);
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) { return ret(rpc("event_destroy %p", (void *)e)); }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    may_go_unanswered = 1;      /* the same record again, once one succeeded: see rpc_blob */
    int code = rpc("event_record %p %p", (void *)e, (void *)s);
    may_go_unanswered = 0;
    return ret(code);
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int flags) { (void)flags; return cudaEventRecord(e, s); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return ret(synced(rpc("event_sync %p", (void *)e))); }
cudaError_t cudaEventQuery(cudaEvent_t e) { return ret(rpc("event_query %p", (void *)e)); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!ms) return ret(cudaErrorInvalidValue);
    int code = rpc("elapsed %p %p", (void *)start, (void *)end);
    if (!code) *ms = (float)((double)(long long)R[1] / 1e6);   /* the emulator answers in (signed) nanoseconds */
    return ret(code);
}

/* ------------------------------------------------------------------ device */
static struct cudaDeviceProp props;
static int have_props;

static void load_props(void) {
    if (have_props) return;
    rpc("props");
    /* RB: "field=value" lines for every cudaDeviceProp field; arrays as "a,b,c" */
#define INT(f) else if (!strcmp(k, #f)) props.f = (int)strtol(v, 0, 0);
#define UINT(f) else if (!strcmp(k, #f)) props.f = (unsigned)strtoul(v, 0, 0);
#define SIZE(f) else if (!strcmp(k, #f)) props.f = (size_t)strtoull(v, 0, 0);
#define ARR(f, n) else if (!strcmp(k, #f)) { char *q = v; for (int i = 0; i < n; i++) props.f[i] = (int)strtol(q, &q, 0), q += *q == ','; }
    for (char *line = strtok(RB, "\n"); line; line = strtok(0, "\n")) {
        char *k = line, *v = strchr(line, '=');
        if (!v) continue;
        *v++ = 0;
        if (!strcmp(k, "name")) snprintf(props.name, sizeof props.name, "%s", v);
        SIZE(totalGlobalMem) SIZE(sharedMemPerBlock) INT(regsPerBlock) INT(warpSize) SIZE(memPitch)
        INT(maxThreadsPerBlock) ARR(maxThreadsDim, 3) ARR(maxGridSize, 3) SIZE(totalConstMem) INT(major)
        INT(minor) SIZE(textureAlignment) SIZE(texturePitchAlignment) INT(multiProcessorCount)
        INT(integrated) INT(canMapHostMemory) INT(maxTexture1D) INT(maxTexture1DMipmap) ARR(maxTexture2D, 2)
        ARR(maxTexture2DMipmap, 2) ARR(maxTexture2DLinear, 3) ARR(maxTexture2DGather, 2) ARR(maxTexture3D, 3)
        ARR(maxTexture3DAlt, 3) INT(maxTextureCubemap) ARR(maxTexture1DLayered, 2) ARR(maxTexture2DLayered, 3)
        ARR(maxTextureCubemapLayered, 2) INT(maxSurface1D) ARR(maxSurface2D, 2) ARR(maxSurface3D, 3)
        ARR(maxSurface1DLayered, 2) ARR(maxSurface2DLayered, 3) INT(maxSurfaceCubemap)
        ARR(maxSurfaceCubemapLayered, 2) SIZE(surfaceAlignment) INT(concurrentKernels) INT(ECCEnabled)
        INT(pciBusID) INT(pciDeviceID) INT(pciDomainID) INT(tccDriver) INT(asyncEngineCount)
        INT(unifiedAddressing) INT(memoryBusWidth) INT(l2CacheSize) INT(persistingL2CacheMaxSize)
        INT(maxThreadsPerMultiProcessor) INT(streamPrioritiesSupported) INT(globalL1CacheSupported)
        INT(localL1CacheSupported) SIZE(sharedMemPerMultiprocessor) INT(regsPerMultiprocessor) INT(managedMemory)
        INT(isMultiGpuBoard) INT(multiGpuBoardGroupID) INT(hostNativeAtomicSupported) INT(pageableMemoryAccess)
        INT(concurrentManagedAccess) INT(computePreemptionSupported) INT(canUseHostPointerForRegisteredMem)
        INT(cooperativeLaunch) SIZE(sharedMemPerBlockOptin) INT(pageableMemoryAccessUsesHostPageTables)
        INT(directManagedMemAccessFromHost) INT(maxBlocksPerMultiProcessor) INT(accessPolicyMaxWindowSize)
        SIZE(reservedSharedMemPerBlock) INT(hostRegisterSupported) INT(sparseCudaArraySupported)
        INT(hostRegisterReadOnlySupported) INT(timelineSemaphoreInteropSupported) INT(memoryPoolsSupported)
        INT(gpuDirectRDMASupported) UINT(gpuDirectRDMAFlushWritesOptions) INT(gpuDirectRDMAWritesOrdering)
        UINT(memoryPoolSupportedHandleTypes) INT(deferredMappingCudaArraySupported) INT(ipcEventSupported)
        INT(clusterLaunch) INT(unifiedFunctionPointers) INT(deviceNumaConfig) INT(deviceNumaId) INT(mpsEnabled)
        INT(hostNumaId) UINT(gpuPciDeviceID) UINT(gpuPciSubsystemID) INT(hostNumaMultinodeIpcSupported)
        UINT(luidDeviceNodeMask)
    }
#undef INT
#undef UINT
#undef SIZE
#ifdef CUDALAB_LEGACY_DEVICE_PROP
    /* the fields CUDA 13 removed, which programs built for the emulator still have (legacy_props.py) */
    cudaDeviceGetAttribute(&props.clockRate, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&props.deviceOverlap, cudaDevAttrGpuOverlap, 0);
    cudaDeviceGetAttribute(&props.kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout, 0);
    cudaDeviceGetAttribute(&props.computeMode, cudaDevAttrComputeMode, 0);
    cudaDeviceGetAttribute(&props.maxTexture1DLinear, cudaDevAttrMaxTexture1DLinearWidth, 0);
    cudaDeviceGetAttribute(&props.memoryClockRate, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&props.singleToDoublePrecisionPerfRatio, cudaDevAttrSingleToDoublePrecisionPerfRatio, 0);
    cudaDeviceGetAttribute(&props.cooperativeMultiDeviceLaunch, (enum cudaDeviceAttr)96, 0);  /* gone from the enum */
#endif
#undef ARR
    have_props = 1;
}

cudaError_t cudaGetDeviceCount(int *count) {
    if (!count) return ret(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
    if (in_host_function) return ret(cudaErrorNotPermitted);     /* as an H200 answered */
    if (!device) return ret(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    if (in_host_function) return ret(cudaErrorNotPermitted);
    if (device == 0) return cudaSuccess;
    if (device > 0)         /* a program written for several GPUs: say why its second one is missing */
        say_once("cudalab: cudaSetDevice(1 or more): the emulated machine has one GPU, device 0 (cudaGetDeviceCount "
                 "gives 1). A program that needs several GPUs runs on a machine that has them.");
    return ret(cudaErrorInvalidDevice);
}
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
    (void)deviceFlags, (void)flags;
    return cudaSetDevice(device);
}
cudaError_t cudaSetDeviceFlags(unsigned int flags) { (void)flags; return cudaSuccess; }

cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
    if (!flags) return ret(cudaErrorInvalidValue);
    *flags = cudaDeviceMapHost;
    return cudaSuccess;
}

cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop) {
    (void)prop;
    if (!device) return ret(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}

/* a driver older than the runtime would refuse the program (cudaErrorInsufficientDriver), so the emulated one is
 * CUDA 13.0's or the runtime headers', whichever is newer: deviceQuery prints both */
cudaError_t cudaDriverGetVersion(int *v) {
    if (!v) return ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION > 13000 ? CUDART_VERSION : 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) { if (!v) return ret(cudaErrorInvalidValue); *v = CUDART_VERSION; return cudaSuccess; }

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
    if (in_host_function) return ret(cudaErrorNotPermitted);     /* cudaDeviceGetAttribute's answer */
    if (!p) return ret(cudaErrorInvalidValue);
    if (device != 0) return ret(cudaErrorInvalidDevice);
    load_props();
    *p = props;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    if (!value) return ret(cudaErrorInvalidValue);
    int code = rpc("attr %d %d", (int)attr, device);
    if (!code) *value = (int)(unsigned)R[1];
    return ret(code);
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    if (!pciBusId || len <= 0) return ret(cudaErrorInvalidValue);
    snprintf(pciBusId, (size_t)len, "0000:00:00.0");
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return ret(synced(rpc("device_sync"))); }

cudaError_t cudaDeviceReset(void) {
    flush_printf();
    return (cudaError_t)rpc("device_reset");   /* the last error stays, as on an H100 */
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func) {
    if (!a) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidResourceHandle);
    int code = rpc("func_attrs %s", f->name);
    if (code) return ret(code);
    memset(a, 0, sizeof *a);
    a->sharedSizeBytes = R[1], a->constSizeBytes = R[2], a->localSizeBytes = R[3];
    a->maxThreadsPerBlock = (int)R[4], a->numRegs = (int)R[5], a->ptxVersion = (int)R[6];
    a->binaryVersion = (int)R[7], a->maxDynamicSharedSizeBytes = (int)R[8];
    a->preferredShmemCarveout = (int)(unsigned)R[9];
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidResourceHandle);
    return ret(rpc("func_set %s %d %d", f->name, (int)attr, value));
}

cudaError_t cudaFuncGetName(const char **name, const void *func) {
    if (!name) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidResourceHandle);
    *name = f->name;
    return cudaSuccess;
}

cudaError_t cudaFuncGetParamCount(const void *func, size_t *count) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidResourceHandle);
    if (!count) return ret(cudaErrorInvalidValue);
    int code = load_params(f);
    if (!code) *count = (size_t)f->n;
    return ret(code);
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t index, size_t *offset, size_t *size) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidResourceHandle);
    int code = load_params(f);
    if (code) return ret(code);
    if (index >= (size_t)f->n) return ret(cudaErrorInvalidValue);
    size_t off = 0;
    for (size_t i = 0; i <= index; i++) {
        off = (off + f->align[i] - 1) / f->align[i] * f->align[i];
        if (i < index) off += f->size[i];
    }
    if (offset) *offset = off;
    if (size) *size = (size_t)f->size[index];
    return cudaSuccess;
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t *fn, const void *symbol) {
    if (!fn) return ret(cudaErrorInvalidValue);
    if (!find_func(symbol)) return ret(cudaErrorInvalidDeviceFunction);
    *fn = (cudaFunction_t)symbol;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ occupancy */
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags) {
    (void)flags;
    if (!n) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    int code = rpc("occupancy %s %d %zu", f->name, blockSize, dynamicSMemSize);
    if (!code) *n = (int)R[1];
    return ret(code);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int blockSize, size_t dyn) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, blockSize, dyn, 0);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *size, const void *func, int numBlocks, int blockSize) {
    if (!size) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    int code = rpc("avail_smem %s %d %d", f->name, numBlocks, blockSize);
    if (!code) *size = (size_t)R[1];
    return ret(code);
}

/* ------------------------------------------------------------------ limits, cache configuration, profiler */
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) { return ret(rpc("limit_set %d %zu", (int)limit, value)); }

cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit) {
    if (!value) return ret(cudaErrorInvalidValue);
    int code = rpc("limit_get %d", (int)limit);
    if (!code) *value = (size_t)R[1];
    return ret(code);
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c) { return ret(rpc("cache_set %d", (int)c)); }

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *c) {
    if (!c) return ret(cudaErrorInvalidValue);
    int code = rpc("cache_get");
    if (!code) *c = (enum cudaFuncCache)R[1];
    return ret(code);
}

cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache c) {
    if (!find_func(func)) return ret(cudaErrorInvalidDeviceFunction);
    return (int)c >= 0 && (int)c <= 3 ? cudaSuccess : ret(cudaErrorInvalidValue);
}

/* Shared memory banks are four bytes wide from sm_50 on; a request for eight is accepted and ignored,
 * as a GPU does (tests/runtime_api/h100/limits.out). */
cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *c) {
    if (!c) return ret(cudaErrorInvalidValue);
    *c = cudaSharedMemBankSizeFourByte;
    return cudaSuccess;
}

cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig c) {
    return (int)c >= 0 && (int)c <= 2 ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig c) {
    if (!find_func(func)) return ret(cudaErrorInvalidDeviceFunction);
    return (int)c >= 0 && (int)c <= 2 ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaCtxResetPersistingL2Cache(void) { return cudaSuccess; }   /* the emulator models no L2 lines */
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }   /* every launch is recorded already */
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

/* ------------------------------------------------------------------ what one GPU cannot do: peers */
cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer) {
    if (!can) return ret(cudaErrorInvalidValue);
    if (device != 0 || peer != 0) return ret(cudaErrorInvalidDevice);
    *can = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
    (void)flags;
    return ret(peer == 0 ? cudaErrorInvalidDevice : cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) { (void)peer; return ret(cudaErrorInvalidDevice); }

/* ------------------------------------------------------------------ launch attributes (cudaLaunchKernelEx) */
/* A launch configuration's attributes as the launch request's "key=value" words (in opts, of size room) */
static void launch_options(const cudaLaunchConfig_t *config, char *opts, size_t size) {
    size_t n = 0;
    opts[0] = 0;
    for (unsigned i = 0; i < config->numAttrs && config->attrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        const cudaLaunchAttributeValue *v = &a->val;
        char *o = opts + n;
        size_t room = size - n;
        switch (a->id) {
        case cudaLaunchAttributeCooperative: snprintf(o, room, "cooperative=%d ", v->cooperative != 0); break;
        case cudaLaunchAttributeClusterDimension:
            snprintf(o, room, "cluster=%u,%u,%u ", v->clusterDim.x, v->clusterDim.y, v->clusterDim.z); break;
        case cudaLaunchAttributePriority: snprintf(o, room, "priority=%d ", v->priority); break;
        case cudaLaunchAttributeAccessPolicyWindow:
            snprintf(o, room, "access_policy_window=%zu ", v->accessPolicyWindow.num_bytes); break;
        case cudaLaunchAttributeProgrammaticStreamSerialization:
            snprintf(o, room, "programmatic_stream_serialization=%d ", v->programmaticStreamSerializationAllowed); break;
        case cudaLaunchAttributeProgrammaticEvent:
            snprintf(o, room, "programmatic_event=%p ", (void *)v->programmaticEvent.event); break;
        case cudaLaunchAttributeMemSyncDomain: snprintf(o, room, "mem_sync_domain=%d ", (int)v->memSyncDomain); break;
        default: break;   /* scheduling hints the emulator has no use for */
        }
        n += strlen(o);
    }
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args) {
    if (!config) return ret(cudaErrorInvalidValue);
    if (!func) return ret(cudaErrorInvalidDeviceFunction);
    char opts[1024];
    launch_options(config, opts, sizeof opts);
    return launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream, opts);
}

/* the cluster dimension of a launch configuration (0,0,0: none given) */
static dim3 config_cluster(const cudaLaunchConfig_t *config) {
    dim3 c = {0, 0, 0};
    for (unsigned i = 0; i < config->numAttrs && config->attrs; i++)
        if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) {
            c.x = config->attrs[i].val.clusterDim.x;
            c.y = config->attrs[i].val.clusterDim.y;
            c.z = config->attrs[i].val.clusterDim.z;
        }
    return c;
}

cudaError_t cudaOccupancyMaxActiveClusters(int *n, const void *func, const cudaLaunchConfig_t *config) {
    if (!n || !config) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    dim3 c = config_cluster(config), b = config->blockDim;
    int code = rpc("occupancy_clusters %s %u %u %u %u %u %u %zu", f->name, b.x, b.y, b.z, c.x, c.y, c.z,
                   config->dynamicSmemBytes);
    if (!code) *n = (int)R[1];
    return ret(code);
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int *n, const void *func, const cudaLaunchConfig_t *config) {
    if (!n || !config) return ret(cudaErrorInvalidValue);
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    dim3 b = config->blockDim;
    int code = rpc("potential_cluster %s %u %u %u %zu", f->name, b.x, b.y, b.z, config->dynamicSmemBytes);
    if (!code) *n = (int)R[1];
    return ret(code);
}

/* ------------------------------------------------------------------ stream attributes */
cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr, const cudaStreamAttrValue *v) {
    if (!v) return ret(cudaErrorInvalidValue);
    if (attr == cudaStreamAttributeAccessPolicyWindow) {
        const struct cudaAccessPolicyWindow *w = &v->accessPolicyWindow;
        return ret(rpc("stream_attr_set %p %d %p %zu %.9g %d %d", (void *)s, (int)attr, w->base_ptr, w->num_bytes,
                       (double)w->hitRatio, (int)w->hitProp, (int)w->missProp));
    }
    int value = attr == cudaStreamAttributePriority ? v->priority
              : attr == cudaStreamAttributeSynchronizationPolicy ? (int)v->syncPolicy : (int)v->memSyncDomain;
    return ret(rpc("stream_attr_set %p %d %d", (void *)s, (int)attr, value));
}

cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr, cudaStreamAttrValue *v) {
    if (!v) return ret(cudaErrorInvalidValue);
    int code = rpc("stream_attr_get %p %d", (void *)s, (int)attr);
    if (code) return ret(code);
    if (attr == cudaStreamAttributeAccessPolicyWindow) {
        v->accessPolicyWindow.base_ptr = (void *)R[1];
        v->accessPolicyWindow.num_bytes = (size_t)R[2];
        v->accessPolicyWindow.hitRatio = (float)((double)R[3] / 1e6);
        v->accessPolicyWindow.hitProp = (enum cudaAccessProperty)R[4];
        v->accessPolicyWindow.missProp = (enum cudaAccessProperty)R[5];
    } else if (attr == cudaStreamAttributePriority) {
        v->priority = (int)(unsigned)R[1];
    } else if (attr == cudaStreamAttributeSynchronizationPolicy) {
        v->syncPolicy = (enum cudaSynchronizationPolicy)(int)(unsigned)R[1];
    } else {
        v->memSyncDomain = (cudaLaunchMemSyncDomain)R[1];
    }
    return cudaSuccess;
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
    cudaStreamAttrValue v;
    cudaStreamAttrID ids[] = {cudaStreamAttributeAccessPolicyWindow, cudaStreamAttributeSynchronizationPolicy,
                              cudaStreamAttributePriority};
    for (int i = 0; i < 3; i++) {
        cudaError_t e = cudaStreamGetAttribute(src, ids[i], &v);
        if (!e && !(ids[i] == cudaStreamAttributeSynchronizationPolicy && (int)v.syncPolicy < 0))
            e = cudaStreamSetAttribute(dst, ids[i], &v);
        if (e) return e;
    }
    return cudaSuccess;
}

/* ------------------------------------------------------------------ stream-ordered allocator and memory pools */
cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = rpc("malloc_async %zu %p %p", size, (void *)s, (void *)pool);
    *p = code ? 0 : (void *)R[1];
    return ret(code);
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s) { return cudaMallocFromPoolAsync(p, size, 0, s); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { return ret(rpc("free_async %p %p", p, (void *)s)); }

static cudaError_t get_pool(const char *op, cudaMemPool_t *pool, int device) {
    if (!pool) return ret(cudaErrorInvalidValue);
    int code = rpc("%s %d", op, device);
    if (!code) *pool = (cudaMemPool_t)R[1];
    return ret(code);
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) { return get_pool("pool_default", pool, device); }
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device) { return get_pool("pool_get", pool, device); }
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) { return ret(rpc("pool_set %d %p", device, (void *)pool)); }

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *p) {
    if (!pool || !p) return ret(cudaErrorInvalidValue);
    int code = rpc("pool_create %d %d %d %d", (int)p->allocType, (int)p->location.type, p->location.id,
                   (int)p->handleTypes);
    if (!code) *pool = (cudaMemPool_t)R[1];
    return ret(code);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) { return ret(rpc("pool_destroy %p", (void *)pool)); }
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) { return ret(rpc("pool_trim %p %zu", (void *)pool, keep)); }

/* The reuse flags are ints; the thresholds and counters are 64-bit (cuuint64_t). */
static int pool_attr_is_int(enum cudaMemPoolAttr a) {
    return a == cudaMemPoolReuseFollowEventDependencies || a == cudaMemPoolReuseAllowOpportunistic ||
           a == cudaMemPoolReuseAllowInternalDependencies;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value) {
    if (!value) return ret(cudaErrorInvalidValue);
    unsigned long long v = pool_attr_is_int(attr) ? (unsigned long long)*(int *)value : *(unsigned long long *)value;
    return ret(rpc("pool_attr_set %p %d %llu", (void *)pool, (int)attr, v));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value) {
    if (!value) return ret(cudaErrorInvalidValue);
    int code = rpc("pool_attr_get %p %d", (void *)pool, (int)attr);
    if (code) return ret(code);
    if (pool_attr_is_int(attr)) *(int *)value = (int)R[1];
    else *(unsigned long long *)value = R[1];
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *desc, size_t count) {
    if (!desc && count) return ret(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        int code = rpc("pool_access_set %p %d %d", (void *)pool, desc[i].location.id, (int)desc[i].flags);
        if (code) return ret(code);
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t pool, struct cudaMemLocation *loc) {
    if (!flags || !loc) return ret(cudaErrorInvalidValue);
    int code = rpc("pool_access_get %p %d", (void *)pool, loc->id);
    if (!code) *flags = (enum cudaMemAccessFlags)R[1];
    return ret(code);
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    if (!value || (int)attr < 0 || (int)attr > 3) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_mem_attr %d", (int)attr);
    if (!code) *(unsigned long long *)value = R[1];
    return ret(code);
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    if (!value || (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh))
        return ret(cudaErrorInvalidValue);
    return *(unsigned long long *)value ? ret(cudaErrorInvalidValue) : cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    return ret(rpc("graph_mem_trim"));
}

#include "textures.c"   /* CUDA arrays, 2D/3D copies, texture and surface objects */
#include "graphs.c"   /* CUDA graphs and stream capture */
#include "hostclock.c"   /* the host's clock: what a benchmark timed with it measured */
#include "stackguard.c"  /* a crash that is a stack overflow, told apart from a bad pointer */
#include "driver.c"   /* the driver API entry points CCCL asks libcuda.so.1 for */
#include "fallbacks.inc"   /* generated: every other runtime call answers cudaErrorNotSupported */
#include "libraries.inc"   /* generated: which library shims have their headers installed */
#include "libraries.c"     /* what the library shims share */
#ifdef CUDALAB_CUBLAS
#include "cublas.c"        /* cuBLAS's host API */
#include "cublas_legacy.c" /* and its legacy one (cublas.h) */
#include "cublasXt.c"      /* and cuBLASXt's gemm, on the one GPU */
#endif
#ifdef CUDALAB_CUBLASLT
#include "cublasLt.c"      /* cuBLASLt's matmul */
#endif
#ifdef CUDALAB_CURAND
#include "curand.c"        /* cuRAND's host API */
#endif
#ifdef CUDALAB_CUFFT
#include "cufft.c"         /* cuFFT */
#endif
#ifdef CUDALAB_CUSPARSE
#include "cusparse.c"      /* cuSPARSE's generic API */
#endif
