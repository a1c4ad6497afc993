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

static void on_segv(int sig, siginfo_t *info, void *context) {
    (void)sig;
    uintptr_t sp = fault_sp(context), addr = (uintptr_t)info->si_addr;
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
    /* SA_RESETHAND put the default action back: the faulting instruction runs again and ends the program */
}

__attribute__((constructor)) static void watch_stack(void) {
    const char *path = getenv("CUDALAB_CRASH_NOTE");
    struct rlimit limit;
    struct sigaction old;
    if (!path || strlen(path) >= sizeof crash_note_path || getrlimit(RLIMIT_STACK, &limit) != 0
        || limit.rlim_cur == RLIM_INFINITY || sigaction(SIGSEGV, 0, &old) != 0 || old.sa_handler != SIG_DFL)
        return;
    int here;
    stack_top = &__libc_stack_end && __libc_stack_end ? (uintptr_t)__libc_stack_end : (uintptr_t)&here;
    stack_room = limit.rlim_cur;
    strcpy(crash_note_path, path);
    static char alternate[1 << 16];
    stack_t alt = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0};
    if (sigaltstack(&alt, 0) != 0)
        return;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_segv;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&act.sa_mask);
    sigaction(SIGSEGV, &act, 0);
}
