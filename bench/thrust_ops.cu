// A student's use of Thrust: reduce, scan and sort n unsigned ints on the device (bench/thrust.py).
// usage: thrust_ops N reduce|scan|sort
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000000;
    const char *what = argc > 2 ? argv[2] : "sort";
    thrust::host_vector<unsigned> h(n);
    unsigned s = 12345;                       // a linear congruential sequence: the same keys every run
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = s >> 8;
    }
    thrust::device_vector<unsigned> d = h;
    if (!strcmp(what, "reduce")) {
        unsigned long long sum = thrust::reduce(d.begin(), d.end(), 0ull);
        unsigned long long want = 0;
        for (int i = 0; i < n; i++) want += h[i];
        printf("reduce %llu %s\n", sum, sum == want ? "ok" : "WRONG");
    } else if (!strcmp(what, "scan")) {
        thrust::device_vector<unsigned> out(n);
        thrust::inclusive_scan(d.begin(), d.end(), out.begin());
        thrust::host_vector<unsigned> r = out;
        unsigned run = 0;
        bool ok = true;
        for (int i = 0; i < n; i++) ok &= r[i] == (run += h[i]);
        printf("scan %u %s\n", r[n - 1], ok ? "ok" : "WRONG");
    } else {
        thrust::sort(d.begin(), d.end());
        thrust::host_vector<unsigned> r = d;
        unsigned long long before = 0, after = r[0];     // sorted, and the same keys
        bool ok = true;
        for (int i = 1; i < n; i++) ok &= r[i - 1] <= r[i];
        for (int i = 0; i < n; i++) before += h[i];
        for (int i = 1; i < n; i++) after += r[i];
        ok &= before == after;
        printf("sort %u..%u %s\n", r[0], r[n - 1], ok ? "ok" : "WRONG");
    }
    return 0;
}
