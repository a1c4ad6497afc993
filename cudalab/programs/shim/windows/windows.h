/* cudalab: a <windows.h> given (by windows_header.py) only to a unit that stopped at the missing header.
 * A Visual Studio program often includes it and calls nothing of the Win32 API, or only its timers: those
 * (QueryPerformanceCounter and QueryPerformanceFrequency, GetTickCount, Sleep) are here, on the C library's
 * monotonic clock, as a course's timing code needs them. A program that calls anything else of the Win32
 * API still stops, and is then told of the missing header as nvcc on Linux tells it. */
#pragma once
#include <stdint.h>
#include <time.h>

typedef int BOOL;
typedef unsigned long DWORD;
typedef unsigned long long ULONGLONG;
typedef long long LONGLONG;
typedef union _LARGE_INTEGER {
    struct { DWORD LowPart; long HighPart; };
    struct { DWORD LowPart; long HighPart; } u;
    LONGLONG QuadPart;
} LARGE_INTEGER;
#ifndef TRUE
#define TRUE 1
#define FALSE 0
#endif
#ifndef WINAPI
#define WINAPI
#endif

static inline LONGLONG cudalab_win_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (LONGLONG)t.tv_sec * 1000000000LL + t.tv_nsec;
}
/* the counter ticks in nanoseconds: a frequency of 10^9 a second */
static inline BOOL QueryPerformanceFrequency(LARGE_INTEGER* f) { f->QuadPart = 1000000000LL; return TRUE; }
static inline BOOL QueryPerformanceCounter(LARGE_INTEGER* c) { c->QuadPart = cudalab_win_now_ns(); return TRUE; }
static inline DWORD GetTickCount(void) { return (DWORD)(cudalab_win_now_ns() / 1000000); }
static inline ULONGLONG GetTickCount64(void) { return (ULONGLONG)(cudalab_win_now_ns() / 1000000); }
static inline void Sleep(DWORD ms) {
    struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&t, 0);
}
