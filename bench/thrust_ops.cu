// A student's use of Thrust: the calls course and book programs make, over n unsigned ints on the device
// (bench/thrust.py). Each operation checks its result on the host and prints "ok" or "WRONG".
// usage: thrust_ops N reduce|scan|exclusive_scan|sort|sort_by_key|copy_if|unique
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct is_odd {
    __host__ __device__ bool operator()(unsigned x) const { return x & 1; }
};

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
    const char *what = argc > 2 ? argv[2] : "sort";
    thrust::host_vector<unsigned> h(n);
    unsigned s = 12345;                       // a linear congruential sequence: the same keys every run
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        h[i] = s >> 8;
    }
    std::vector<unsigned> want(h.begin(), h.end());     // the host's answer, for the operations that reorder
    thrust::device_vector<unsigned> d = h;
    bool ok = true;
    if (!strcmp(what, "reduce")) {
        unsigned long long sum = thrust::reduce(d.begin(), d.end(), 0ull), expect = 0;
        for (int i = 0; i < n; i++) expect += h[i];
        ok = sum == expect;
        printf("reduce %llu ", sum);
    } else if (!strcmp(what, "scan") || !strcmp(what, "exclusive_scan")) {
        bool inclusive = !strcmp(what, "scan");
        thrust::device_vector<unsigned> out(n);
        if (inclusive)
            thrust::inclusive_scan(d.begin(), d.end(), out.begin());
        else
            thrust::exclusive_scan(d.begin(), d.end(), out.begin());
        thrust::host_vector<unsigned> r = out;
        unsigned run = 0;
        for (int i = 0; i < n; i++) {
            if (inclusive) run += h[i];
            ok &= r[i] == run;
            if (!inclusive) run += h[i];
        }
        printf("%s %u ", what, r[n - 1]);
    } else if (!strcmp(what, "sort") || !strcmp(what, "sort_by_key")) {
        thrust::device_vector<unsigned> values(n);
        thrust::sequence(values.begin(), values.end());
        if (!strcmp(what, "sort"))
            thrust::sort(d.begin(), d.end());
        else
            thrust::sort_by_key(d.begin(), d.end(), values.begin());
        thrust::host_vector<unsigned> r = d, v = values;
        std::sort(want.begin(), want.end());
        for (int i = 0; i < n; i++) ok &= r[i] == want[i];
        if (!strcmp(what, "sort_by_key"))         // each value is the index its key came from
            for (int i = 0; i < n; i++) ok &= v[i] < (unsigned)n && h[v[i]] == r[i];
        printf("%s %u..%u ", what, r[0], r[n - 1]);
    } else if (!strcmp(what, "copy_if")) {
        thrust::device_vector<unsigned> out(n);
        int kept = thrust::copy_if(d.begin(), d.end(), out.begin(), is_odd()) - out.begin();
        thrust::host_vector<unsigned> r = out;
        int k = 0;
        for (int i = 0; i < n; i++)
            if (h[i] & 1) ok &= k < kept && r[k++] == h[i];
        ok &= k == kept;
        printf("copy_if %d kept ", kept);
    } else if (!strcmp(what, "unique")) {
        for (int i = 0; i < n; i++) want[i] = h[i] >> 20;       // runs of equal values to remove
        thrust::device_vector<unsigned> runs(want.begin(), want.end());
        int kept = thrust::unique(runs.begin(), runs.end()) - runs.begin();
        thrust::host_vector<unsigned> r(runs.begin(), runs.begin() + kept);
        int k = std::unique(want.begin(), want.end()) - want.begin();
        ok = k == kept && std::equal(want.begin(), want.begin() + k, r.begin());
        printf("unique %d kept ", kept);
    } else {
        printf("unknown operation %s\n", what);
        return 2;
    }
    printf("%s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
