"""The CUDA runtime's semantics, once, for the Python host API and whole programs alike.

    ctx = Context(arena)                     # arena: emulator.memory.DeviceMemory (None: no memory)
    s = ctx.stream_create(flags, priority); ev = ctx.event_create(); ctx.event_record(ev, s)
    ctx.copy(dst, src, n, kind, s, sync)     # checks + timeline (+ capture); the caller moves the bytes
    ctx.launch(Function(program, mangled, name, params), grid, block, shared, args, s)
    g = ctx.graph_create(); ctx.add_node(g, "kernel", {...}); e = ctx.instantiate(g); ctx.run_graph(e, s)
    ctx.malloc_async(n, s); ctx.set_limit(limit, value); ctx.attribute(cudaDevAttr)
    ctx.bind(program)                        # device code sees the profile's SMs, clock, attributes, limits
    ctx.node_params("memset", {...})         # a graph node's parameters, checked (any adapter's)

Modules: ``context`` (Context, Stream, Event, Function: memory, streams, events, launches, limits,
pools), ``graphs`` (graphs, capture, conditional nodes), ``pools`` (memory pools), ``memory``
(allocation kinds and copy checks), ``properties`` (cudaDeviceProp and every cudaDevAttr from the
device profile), ``errors`` (CUDA's error codes). Errors are ``cudalab.errors.CudaError`` with
CUDA's names as ``code``.
"""
from .context import Context, Event, Function, Stream  # noqa: F401
