/* A crash that is a stack overflow, told apart from a bad pointer (included by cudart.c).
 *
 * A course's host code that recurses without end, or declares `float a[1 << 24]` inside main, dies
 * with SIGSEGV like a bad pointer does, and "a bad host pointer" sends the student to the wrong line.
 * The kernel cannot say which it was after the fact, so the program tells: a SIGSEGV handler on an
 * alternate stack (the real one is used up) looks at the stack pointer when the fault came. Where it
 * had gone down to the stack's limit (RLIMIT_STACK below the top of the main thread's stack) and the
 * faulting address lies in the stack it was growing into, it writes "stack" to the file the runner
 * named in CUDALAB_CRASH_NOTE. Then it returns with the default action restored, so the program still
 * ends by SIGSEGV, its exit status unchanged. A handler the program sets itself replaces this one.
 * The same handler serves the guards on page-locked buffers that queued copies write or read (below).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <ucontext.h>

extern void *__libc_stack_end __attribute__((weak));   /* glibc: the top of the main thread's stack */

static char crash_note_path[512];
static uintptr_t stack_top, stack_room;

static uintptr_t fault_sp(void *context) {
    ucontext_t *uc = context;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#else
    (void)uc;
    return 0;
#endif
}

/* Page-locked buffers a queued asynchronous copy has yet to write (a device-to-host copy's destination) or to
 * read (a host-to-device copy's source). A GPU runs such a copy while the host goes on, and a program that reads
 * the buffer after only a stream-side wait (cudaStreamWaitEvent), or refills it while the copy of its last
 * contents is still queued, finds it done in practice: TACC's stream lab pipelines 4,096 chunks that way and an
 * H200 passed it every time. The emulator runs queued work when the host asks for something, and touching memory
 * is no request, so the host read the bytes of before. The pages are protected instead (no access; read-only for
 * a source) while the copy is queued, and the host's first touch comes here: the queued work runs ("settle", a
 * request that is no synchronization) and the pages are open again, the touching instruction running once more.
 * Only while this handler is the program's (one it sets itself takes over, and then nothing is protected);
 * cudaDeviceSynchronize opens every page (the program may pass the buffer to a system call, which a protected page
 * would fail with EFAULT rather than fault). */
#define PIN_GUARDS 256
static struct { uintptr_t start, end; } pin_guards[PIN_GUARDS];
static volatile int pin_guarded;
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static void on_segv(int sig, siginfo_t *info, void *context);

static int segv_is_ours(void) {
    struct sigaction now;
    return sigaction(SIGSEGV, 0, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv;
}

static void guard_pinned(const void *p, size_t n, int prot) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1), end = ((uintptr_t)p + n + page - 1) & ~(uintptr_t)(page - 1);
    if (!n || !segv_is_ours())
        return;
    pthread_mutex_lock(&pin_lock);
    int k;
    for (k = 0; k < pin_guarded; k++)       /* a source page already closed to all access stays closed */
        if (pin_guards[k].start < end && start < pin_guards[k].end)
            prot = PROT_NONE;
    if (pin_guarded < PIN_GUARDS && mprotect((void *)start, end - start, prot) == 0) {
        pin_guards[pin_guarded].start = start, pin_guards[pin_guarded].end = end;
        pin_guarded++;
    }
    pthread_mutex_unlock(&pin_lock);
    shim_worked();      /* (the page tables' time is the shim's, not the program's host code: hostclock.c) */
}

static void unguard_pinned(void) {
    if (!pin_guarded)
        return;
    pthread_mutex_lock(&pin_lock);
    for (int k = 0; k < pin_guarded; k++)
        mprotect((void *)pin_guards[k].start, pin_guards[k].end - pin_guards[k].start, PROT_READ | PROT_WRITE);
    pin_guarded = 0;
    pthread_mutex_unlock(&pin_lock);
    shim_worked();
}

static int pin_guard_fault(uintptr_t addr) {
    for (int k = 0; k < pin_guarded; k++)
        if (addr >= pin_guards[k].start && addr < pin_guards[k].end)
            return 1;
    return 0;
}

static void on_segv(int sig, siginfo_t *info, void *context) {
    (void)sig;
    uintptr_t sp = fault_sp(context), addr = (uintptr_t)info->si_addr;
    if (pin_guard_fault(addr)) {
        unguard_pinned();
        rpc("settle");          /* the queued work runs; the touching instruction then runs again */
        return;
    }
    struct sigaction dfl;       /* any other fault: the default action, as the program would have had it */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &dfl, 0);
    if (!crash_note_path[0])
        return;
    int overflow = sp && sp < stack_top && stack_top - sp + (256u << 10) >= stack_room
                   && addr + (64u << 10) >= sp && addr < stack_top;
    if (overflow) {
        int fd = open(crash_note_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            ssize_t w = write(fd, "stack\n", 6);
            (void)w;
            close(fd);
        }
    }
    /* the default action is back (above): the faulting instruction runs again and ends the program */
}

__attribute__((constructor)) static void watch_stack(void) {
    const char *path = getenv("CUDALAB_CRASH_NOTE");
    struct rlimit limit;
    struct sigaction old;
    if (sigaction(SIGSEGV, 0, &old) != 0 || old.sa_handler != SIG_DFL)
        return;
    if (path && strlen(path) < sizeof crash_note_path && getrlimit(RLIMIT_STACK, &limit) == 0
        && limit.rlim_cur != RLIM_INFINITY) {       /* the stack's size is known: an overflow can be told */
        int here;
        stack_top = &__libc_stack_end && __libc_stack_end ? (uintptr_t)__libc_stack_end : (uintptr_t)&here;
        stack_room = limit.rlim_cur;
        strcpy(crash_note_path, path);
    }
    static char alternate[1 << 16];
    stack_t alt = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0};
    if (sigaltstack(&alt, 0) != 0)
        return;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_segv;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;     /* (not SA_RESETHAND: a guard's fault comes back here) */
    sigemptyset(&act.sa_mask);
    sigaction(SIGSEGV, &act, 0);
}
