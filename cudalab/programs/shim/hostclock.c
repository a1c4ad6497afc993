/* The host's clock inside an emulated program: what a benchmark timed with it really measured.
 *
 * Programs time runtime calls with the host's clock as often as with CUDA events (std::chrono,
 * clock_gettime, gettimeofday around a loop of launches or copies). On the emulator that clock sees
 * the emulator's own pace, about a millisecond a call where a GPU's driver takes microseconds, and
 * a kernel as long as the CPU needs to emulate it: the numbers printed are true of the emulator and
 * say nothing of a GPU. The clock is left as it is (a modelled clock would have to charge each call
 * the driver's cost, which the timeline does not model, and a loop that doubles its count until
 * 0.5 s have passed would then depend on it), but each reading is counted, and a program that read
 * it on both sides of runtime calls is told at exit what those stretches measured.
 *
 * These definitions take the place of the C library's for the whole program (the shim is linked
 * into the executable, and libstdc++'s clocks call clock_gettime through the dynamic linker); the
 * readings themselves go straight to the kernel. */
#include <sys/syscall.h>
#include <sys/time.h>

static struct {
    pthread_mutex_t lock;
    unsigned long long reads, spans, calls, requests_then;
    long long then_ns, span_ns;
} host_clock = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, 0};

/* A reading of a wall or monotonic clock: if runtime calls were answered since the last one, the
 * stretch between the two timed them. */
static void host_clock_read(void) {
    struct timespec t;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    long long now = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
    pthread_mutex_lock(&host_clock.lock);
    unsigned long long calls = requests - host_clock.requests_then;
    if (host_clock.reads++ && calls) {
        host_clock.spans++;
        host_clock.calls += calls;
        host_clock.span_ns += now - host_clock.then_ns;
    }
    host_clock.requests_then = requests, host_clock.then_ns = now;
    pthread_mutex_unlock(&host_clock.lock);
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (id != CLOCK_PROCESS_CPUTIME_ID && id != CLOCK_THREAD_CPUTIME_ID && id >= 0)   /* not a CPU-time clock */
        host_clock_read();
    return (int)syscall(SYS_clock_gettime, id, ts);
}

#if __GLIBC_PREREQ(2, 31)
int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
#else
int gettimeofday(struct timeval *restrict tv, struct timezone *restrict tz) {
#endif
    host_clock_read();
    return (int)syscall(SYS_gettimeofday, tv, tz);
}

/* At exit: what the host's clock timed, in the program's own numbers. */
static void host_clock_note(void) {
    if (!host_clock.spans) return;
    double seconds = host_clock.span_ns / 1e9;
    fflush(stdout);
    fprintf(stderr, "cudalab: this program read the host's clock (std::chrono, clock_gettime or gettimeofday) "
            "around CUDA calls: between those readings the emulator answered %llu request%s in %.3g s, %.0f us "
            "each. That clock measures the emulator, which answers a call and emulates a kernel at a CPU's pace "
            "where a GPU takes microseconds: times measured that way are the emulator's, not a GPU's. CUDA "
            "events (cudaEventElapsedTime) give the modelled GPU's time; `cudalab run --device gpu` measures "
            "a real one.\n",
            host_clock.calls, host_clock.calls == 1 ? "" : "s", seconds, seconds * 1e6 / host_clock.calls);
}
