// Host functions run in stream order, on a thread of the runtime's: after the work before them has
// finished, before the work after them starts. cudaLaunchHostFunc returns at once (the host goes on
// while its function waits), cudaStreamSynchronize waits for them, events chain them across
// streams, graphs' host nodes behave the same, and a host function may not call CUDA.
#include <atomic>
#include <cstdio>
#include <pthread.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void put(int *p, int i, int v) { p[i] = v; }
__global__ void take(int *dst, int i, const volatile int *src, int j) { dst[i] = src[j]; }

static pthread_t main_thread;
static int *dev;                    // managed: kernels write it, host functions read it
static volatile int *pinned;        // cudaHostAlloc: host functions write it, kernels read it
static volatile int go[4];          // set by main after it issued the work that waits for them
static int seen[8], waited[4], off_main[4];
static std::atomic<int> order{0};
static int place[8];
static cudaStream_t idle;

// wait (up to 5 s) until main sets go[i]: the host must have gone on past the call that issued us
static int wait_for_main(int i) {
    for (int t = 0; t < 5000 && !go[i]; t++) usleep(1000);
    return go[i];
}

void CUDART_CB sees_kernel(void *) {                // A: sees what the kernel before it wrote
    seen[0] = dev[0];
    off_main[0] = !pthread_equal(pthread_self(), main_thread);
}

void CUDART_CB feeds_kernel(void *) {               // B: the kernel after it reads what it wrote
    waited[1] = wait_for_main(1);
    pinned[1] = 42;
}

void CUDART_CB blocks(void *) { waited[2] = wait_for_main(2); }    // C

void CUDART_CB first(void *) {                      // D: stream a
    usleep(50000);
    pinned[2] = 7;
    place[0] = order++;
}

void CUDART_CB second(void *) {                     // D: stream b, after an event of a
    seen[2] = dev[2];
    place[1] = order++;
}

void CUDART_CB third(void *) { place[2] = order++; }
void CUDART_CB fourth(void *) { place[3] = order++; }

void CUDART_CB graph_node(void *) {                 // G: a graph's host node
    waited[3] = wait_for_main(3);
    seen[3] = dev[3];
    pinned[3] = dev[3] * 2;
    off_main[3] = !pthread_equal(pthread_self(), main_thread);
}

void CUDART_CB calls_cuda(void *) {                 // F: CUDA from a host function
    int device = -1, count = 0, sms = 0;
    void *p = nullptr;
    cudaEvent_t ev;
    cudaPointerAttributes attrs;
    printf("host function calls cudaGetDevice -> %s\n", cudaGetErrorName(cudaGetDevice(&device)));
    printf("host function calls cudaGetDeviceCount -> %s\n", cudaGetErrorName(cudaGetDeviceCount(&count)));
    printf("host function calls cudaDeviceGetAttribute -> %s\n",
           cudaGetErrorName(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0)));
    printf("host function calls cudaPointerGetAttributes -> %s\n",
           cudaGetErrorName(cudaPointerGetAttributes(&attrs, dev)));
    printf("host function calls cudaEventCreate -> %s\n", cudaGetErrorName(cudaEventCreate(&ev)));
    printf("host function calls cudaMalloc -> %s\n", cudaGetErrorName(cudaMalloc(&p, 256)));
    printf("host function calls cudaMemsetAsync -> %s\n", cudaGetErrorName(cudaMemsetAsync(dev + 6, 0, 4, idle)));
    printf("host function calls cudaMemcpyAsync -> %s\n",
           cudaGetErrorName(cudaMemcpyAsync(dev + 7, dev + 6, 4, cudaMemcpyDeviceToDevice, idle)));
    put<<<1, 1, 0, idle>>>(dev, 5, 1);
    printf("host function launches a kernel, cudaGetLastError -> %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("host function calls cudaLaunchHostFunc -> %s\n", cudaGetErrorName(cudaLaunchHostFunc(idle, third, 0)));
    printf("host function calls cudaStreamQuery -> %s\n", cudaGetErrorName(cudaStreamQuery(idle)));
    printf("host function calls cudaStreamSynchronize -> %s\n", cudaGetErrorName(cudaStreamSynchronize(idle)));
    printf("host function calls cudaGetLastError -> %s\n", cudaGetErrorName(cudaGetLastError()));
}

int main() {
    main_thread = pthread_self();
    cudaMallocManaged(&dev, 8 * sizeof(int));
    cudaHostAlloc((void **)&pinned, 8 * sizeof(int), cudaHostAllocMapped);
    for (int i = 0; i < 8; i++) dev[i] = pinned[i] = 0;
    cudaStream_t a, b, c;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaStreamCreate(&c);
    cudaStreamCreateWithFlags(&idle, cudaStreamNonBlocking);
    cudaEvent_t a_done;
    cudaEventCreate(&a_done);

    // A: after the kernel before it, on a thread of the runtime's
    put<<<1, 1, 0, a>>>(dev, 0, 1);
    SHOW(cudaLaunchHostFunc(a, sees_kernel, 0));
    SHOW(cudaStreamSynchronize(a));
    printf("A: the host function saw %d, on a thread other than main's: %d\n", seen[0], off_main[0]);

    // B: the call returns before the function ran; the kernel after it waits for it
    SHOW(cudaLaunchHostFunc(a, feeds_kernel, 0));
    take<<<1, 1, 0, a>>>(dev, 1, pinned, 1);
    go[1] = 1;
    SHOW(cudaStreamSynchronize(a));
    printf("B: the host function waited for main: %d; the kernel after it read %d\n", waited[1], dev[1]);

    // C: a stream whose host function has not returned is not done
    SHOW(cudaLaunchHostFunc(c, blocks, 0));
    SHOW(cudaStreamQuery(c));
    go[2] = 1;
    SHOW(cudaStreamSynchronize(c));
    SHOW(cudaStreamQuery(c));
    printf("C: the host function waited for main: %d\n", waited[2]);

    // D: stream b waits for an event recorded after a's host function
    SHOW(cudaLaunchHostFunc(a, first, 0));
    SHOW(cudaEventRecord(a_done, a));
    SHOW(cudaStreamWaitEvent(b, a_done, 0));
    take<<<1, 1, 0, b>>>(dev, 2, pinned, 2);
    SHOW(cudaLaunchHostFunc(b, second, 0));
    SHOW(cudaStreamSynchronize(b));
    printf("D: the kernel in b read %d; host functions ran in the order a %d, b %d\n", seen[2], place[0], place[1]);

    // E: several in one stream, one after the other
    SHOW(cudaLaunchHostFunc(c, third, 0));
    SHOW(cudaLaunchHostFunc(c, fourth, 0));
    SHOW(cudaDeviceSynchronize());
    printf("E: third ran %d, fourth ran %d\n", place[2], place[3]);

    // G: a graph's host node between two kernels, while the host goes on past cudaGraphLaunch
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    SHOW(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
    put<<<1, 1, 0, a>>>(dev, 3, 5);
    SHOW(cudaLaunchHostFunc(a, graph_node, 0));
    take<<<1, 1, 0, a>>>(dev, 4, pinned, 3);
    SHOW(cudaStreamEndCapture(a, &graph));
    SHOW(cudaGraphInstantiate(&exec, graph, 0));
    SHOW(cudaGraphLaunch(exec, a));
    go[3] = 1;
    SHOW(cudaStreamSynchronize(a));
    printf("G: the host node saw %d, waited for main: %d, off main: %d; the kernel after it read %d\n", seen[3],
           waited[3], off_main[3], dev[4]);

    // F: CUDA calls from a host function
    SHOW(cudaLaunchHostFunc(b, calls_cuda, 0));
    SHOW(cudaStreamSynchronize(b));
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    printf("F: the kernel launched from the host function wrote %d\n", dev[5]);
    printf("Result = PASS\n");
}
