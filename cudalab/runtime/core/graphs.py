"""CUDA graphs: graphs built node by node or by stream capture, instantiated, launched, updated.

A graph is nodes and edges (CUDA Programming Guide, "CUDA Graphs"). Node parameters are plain
data: a kernel node keeps its function and its packed parameter bytes; memcpy, memset and host
nodes keep addresses and numbers, because the bytes they move may be host memory of the program
(only its process can touch it) — running a graph therefore yields those nodes to the adapter
(``run``) and runs kernels, events and conditionals here. ``cudaGraphInstantiate`` snapshots the
graph (a clone), so later changes to the graph do not reach the executable graph until
``cudaGraphExecUpdate``; ``cudaGraphExec*SetParams`` change the snapshot only.

Stream capture records the work issued to a capturing stream as nodes instead of running it;
other streams join the capture by waiting on an event recorded in it, and must join back before
``cudaStreamEndCapture`` (else cudaErrorStreamCaptureUnjoined). What capture forbids (a
synchronize or query of a capturing stream, potentially unsafe calls like cudaMalloc outside
relaxed mode) fails and invalidates the capture, as on an H100
(tests/runtime_api/h100/graphs_captured.out).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ...emulator import why_slow
from ...errors import CudaError

TYPES = {"kernel": 0, "memcpy": 1, "memset": 2, "host": 3, "graph": 4, "empty": 5, "wait_event": 6,
         "event_record": 7, "mem_alloc": 10, "mem_free": 11, "conditional": 13}
TYPE_NAMES = {v: k for k, v in TYPES.items()}
GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2           # cudaStreamCaptureMode
NONE, ACTIVE, INVALIDATED = 0, 1, 2               # cudaStreamCaptureStatus
COND_IF, COND_WHILE, COND_SWITCH = 0, 1, 2        # cudaGraphConditionalNodeType
ASSIGN_DEFAULT = 1                                # cudaGraphCondAssignDefault
UPDATE_SUCCESS, UPDATE_TOPOLOGY_CHANGED, UPDATE_NODE_TYPE_CHANGED = 0, 2, 3
ENABLE_TYPES = ("kernel", "memcpy", "memset")     # cudaGraphNodeSetEnabled accepts these only
MAX_WHILE_ITERATIONS = 1 << 20


@dataclass(eq=False)
class Node:
    handle: int
    type: str
    params: dict
    graph: "Graph"
    origin: "Node | None" = None       # the node this one was cloned from
    enabled: bool = True


@dataclass(eq=False)
class Graph:
    handle: int
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)          # (from Node, to Node), in the order they were added
    conditionals: list = field(default_factory=list)   # handles created for this graph
    owner: "Node | None" = None                        # the conditional or child-graph node it is the body of

    def deps(self, node) -> list:
        return [a for a, b in self.edges if b is node]

    def dependents(self, node) -> list:
        return [b for a, b in self.edges if a is node]

    def roots(self) -> list:
        """Nodes without dependencies, newest first (as an H100 lists them: graphs_explicit.out)."""
        targets = {id(b) for _, b in self.edges}
        return [n for n in reversed(self.nodes) if id(n) not in targets]

    def order(self) -> list:
        """The nodes in a dependency order (creation order among the ready ones); raises on a cycle.

        One pass over the edges and a heap of the ready nodes by creation: a captured loop of
        launches is a chain of as many nodes (a course's 131,071 one-thread kernels), and a search of
        every node and edge for each one cost hours where this costs a fraction of a second."""
        place = {id(n): k for k, n in enumerate(self.nodes)}
        pending, after = [0] * len(self.nodes), [[] for _ in self.nodes]
        for a, b in self.edges:
            pending[place[id(b)]] += 1
            after[place[id(a)]].append(place[id(b)])
        ready = [k for k, count in enumerate(pending) if count == 0]
        heapq.heapify(ready)
        out = []
        while ready:
            k = heapq.heappop(ready)
            out.append(self.nodes[k])
            for m in after[k]:
                pending[m] -= 1
                if pending[m] == 0:
                    heapq.heappush(ready, m)
        if len(out) < len(self.nodes):
            raise CudaError("the graph has a cycle: its dependencies loop back on themselves, so no node "
                            "can run first.", "cudaErrorInvalidValue")
        return out


@dataclass(eq=False)
class GraphExec:
    handle: int
    graph: Graph                        # the snapshot it runs
    flags: int = 0
    aliases: dict = field(default_factory=dict)   # id(node of a user graph) -> node of the snapshot
    launched: bool = False
    alloc_bytes: int = 0


@dataclass(eq=False)
class Capture:
    """One capture sequence: the graph it builds and each joined stream's current dependencies."""

    id: int
    graph: Graph
    origin: object                      # the stream that began it
    mode: int
    status: int = ACTIVE
    deps: dict = field(default_factory=dict)      # stream -> [Node]


@dataclass
class Conditional:
    handle: int
    graph: Graph
    default: int = 0
    flags: int = 0


class GraphAPI:
    """The graph half of the runtime core (a mixin of core.Context)."""

    def _init_feature(self):
        self.graphs: dict = {}          # handle -> Graph (also conditional bodies and child graphs)
        self.nodes: dict = {}           # handle -> Node
        self.execs: dict = {}           # handle -> GraphExec
        self.conditionals: dict = {}    # handle -> Conditional
        self.conditional_values: dict = {}   # handle -> value, shared with every Program (graphcalls.py)
        self.captures = 0
        self.capture_mode = GLOBAL      # this thread's cudaThreadExchangeStreamCaptureMode

    # ------------------------------------------------------------------ lookups
    def graph(self, handle) -> Graph:
        g = self.graphs.get(handle)
        if g is None:
            raise CudaError(f"0x{handle or 0:x} is not a graph this program created (or it was destroyed).",
                            "cudaErrorInvalidValue")
        return g

    def node(self, handle) -> Node:
        n = self.nodes.get(handle)
        if n is None:
            raise CudaError(f"0x{handle or 0:x} is not a graph node (or it was destroyed).", "cudaErrorInvalidValue")
        return n

    def graph_exec(self, handle) -> GraphExec:
        e = self.execs.get(handle)
        if e is None:
            raise CudaError(f"0x{handle or 0:x} is not an instantiated graph (cudaGraphInstantiate makes one), or "
                            "it was destroyed.", "cudaErrorInvalidValue")
        return e

    def typed_node(self, handle, kind: str | None) -> Node:
        """The node a handle names, which must be a ``kind`` node (cudaGraph*NodeGetParams); None: any kind."""
        n = self.node(handle)
        if kind is not None and n.type != kind:
            raise CudaError(f"node 0x{handle:x} is a {n.type.replace('_', ' ')} node, not a "
                            f"{kind.replace('_', ' ')} node.", "cudaErrorInvalidValue")
        return n

    # ------------------------------------------------------------------ building
    def graph_create(self) -> Graph:
        g = Graph(self.new_handle())
        self.graphs[g.handle] = g
        return g

    def add_node(self, graph: Graph, kind: str, params: dict, deps=()) -> Node:
        """Add a node after ``deps`` (nodes of the same graph)."""
        deps = list(deps)
        for d in deps:
            if d.graph is not graph:
                raise CudaError("a dependency given for the new node belongs to another graph.", "cudaErrorInvalidValue")
        if len({id(d) for d in deps}) != len(deps):
            raise CudaError("the same dependency was given twice.", "cudaErrorInvalidValue")
        n = Node(self.new_handle(), kind, params, graph)
        graph.nodes.append(n)
        graph.edges.extend((d, n) for d in deps)
        self.nodes[n.handle] = n
        if kind == "graph":
            params["graph"].owner = n
        return n

    def node_params(self, kind: str, p: dict) -> dict:
        """A node's parameters (``p``: its fields by name) checked as cudaGraphAdd*Node and
        cudaGraph*SetParams check them; a child graph is copied, a memory node gets its address."""
        if kind == "kernel":
            self.check_launch(p["function"], p["grid"], p["block"], p["shared"])
            return dict(p, cluster=None, attributes={})
        if kind == "memcpy":
            self.memory.check_copy(p["dst"], p["src"], p["width"], p["kind"], "a graph memcpy node",
                                   p["height"] * p["depth"], p["dpitch"], p["spitch"])
        elif kind == "memset":
            if p["element"] not in (1, 2, 4):
                raise CudaError(f"a memset node's element size is 1, 2 or 4 bytes, not {p['element']}.",
                                "cudaErrorInvalidValue")
            p = dict(p, pitch=p["pitch"] or p["width"] * p["element"])
            self.memory.check(p["dst"], p["pitch"] * (p["height"] - 1) + p["width"] * p["element"],
                              "a graph memset node")
        elif kind == "host" and not p["fn"]:
            raise CudaError("a host node needs a function to call.", "cudaErrorInvalidValue")
        elif kind in ("event_record", "wait_event"):
            return {"event": self.event(p["event"]).handle}
        elif kind == "graph":
            return {"graph": self.clone(p["graph"])}
        elif kind == "mem_alloc":
            return {"address": self.graph_alloc(p["size"]), "size": p["size"], "pool": p.get("pool", 0)}
        return p

    def graph_alloc(self, size: int) -> int:
        """The memory of a graph's allocation node: its address is fixed when the node is made, and
        it is freed when no graph (or clone, or executable graph) holds it any more."""
        addr = self.memory.alloc(size, "graph")
        self.graph_allocations[addr] += 1
        return addr

    def add_conditional_node(self, graph: Graph, handle: int, kind: int, size: int, deps=()) -> Node:
        cond = self.conditionals.get(handle)
        if cond is None or cond.graph is not graph:
            raise CudaError("the conditional handle was not created for this graph "
                            "(cudaGraphConditionalHandleCreate(&handle, graph, ...)).", "cudaErrorInvalidValue")
        if kind not in (COND_IF, COND_WHILE, COND_SWITCH) or size < 1 or (kind == COND_WHILE and size != 1) or \
                (kind == COND_IF and size > 2):
            raise CudaError("a conditional node is an if (1 or 2 bodies), a while (1 body) or a switch (1 or more "
                            "bodies).", "cudaErrorInvalidValue")
        bodies = [self.graph_create() for _ in range(size)]
        n = self.add_node(graph, "conditional", {"handle": handle, "kind": kind, "bodies": bodies}, deps)
        for b in bodies:
            b.owner = n
        return n

    def conditional_create(self, graph: Graph, default: int, flags: int) -> int:
        h = self.new_handle()
        self.conditionals[h] = Conditional(h, graph, default, flags)
        graph.conditionals.append(h)
        return h

    def add_edges(self, graph: Graph, pairs):
        for a, b in pairs:
            if a.graph is not graph or b.graph is not graph or a is b:
                raise CudaError("an edge must join two different nodes of the same graph.", "cudaErrorInvalidValue")
            if any(x is a and y is b for x, y in graph.edges):
                raise CudaError("that edge exists already.", "cudaErrorInvalidValue")
        graph.edges.extend(pairs)

    def remove_edges(self, graph: Graph, pairs):
        for a, b in pairs:
            k = next((i for i, (x, y) in enumerate(graph.edges) if x is a and y is b), None)
            if k is None:
                raise CudaError("there is no such edge to remove.", "cudaErrorInvalidValue")
            graph.edges.pop(k)

    def destroy_node(self, node: Node):
        g = node.graph
        g.nodes.remove(node)
        g.edges = [(a, b) for a, b in g.edges if a is not node and b is not node]
        self.nodes.pop(node.handle, None)

    def graph_destroy(self, graph: Graph):
        for n in graph.nodes:
            self.nodes.pop(n.handle, None)
            if n.type == "mem_alloc":
                self.release_graph_allocation(n.params["address"])
            for child in self._bodies(n):
                self.graph_destroy(child)
        for h in graph.conditionals:
            self.conditionals.pop(h, None)
        self.graphs.pop(graph.handle, None)

    @staticmethod
    def _bodies(node) -> list:
        if node.type == "graph":
            return [node.params["graph"]]
        if node.type == "conditional":
            return list(node.params["bodies"])
        return []

    def clone(self, graph: Graph, register: bool = True) -> Graph:
        """A copy with new handles; each copied node's ``origin`` is its original."""
        g = Graph(self.new_handle(), conditionals=list(graph.conditionals))
        copies = {}
        for n in graph.nodes:
            params = dict(n.params)
            if n.type == "graph":
                params["graph"] = self.clone(n.params["graph"], register)
            elif n.type == "conditional":
                params["bodies"] = [self.clone(b, register) for b in n.params["bodies"]]
            c = Node(self.new_handle(), n.type, params, g, origin=n, enabled=n.enabled)
            if n.type == "mem_alloc":
                self.graph_allocations[params["address"]] += 1
            for body in self._bodies(c):
                body.owner = c
            copies[id(n)] = c
            g.nodes.append(c)
            if register:
                self.nodes[c.handle] = c
        g.edges = [(copies[id(a)], copies[id(b)]) for a, b in graph.edges]
        if register:
            self.graphs[g.handle] = g
        return g

    @staticmethod
    def find_in_clone(node: Node, clone: Graph) -> Node:
        for n in clone.nodes:
            if n.origin is node:
                return n
        raise CudaError("that node has no copy in the given graph (it is not a clone of the node's graph).",
                        "cudaErrorInvalidValue")

    # ------------------------------------------------------------------ instantiate, update, launch
    def instantiate(self, graph: Graph, flags: int = 0) -> GraphExec:
        graph.order()                                  # a cycle is refused here
        snap = self.clone(graph, register=False)
        e = GraphExec(self.new_handle(), snap, flags)
        e.aliases = {id(n.origin): n for n in snap.nodes}
        e.alloc_bytes = sum(n.params["size"] for n in self._walk(snap) if n.type == "mem_alloc")
        self.execs[e.handle] = e
        return e

    def _walk(self, graph: Graph):
        for n in graph.nodes:
            yield n
            for b in self._bodies(n):
                yield from self._walk(b)

    def exec_node(self, e: GraphExec, node: Node) -> Node:
        n = e.aliases.get(id(node))
        if n is None:
            raise CudaError("that node is not part of the graph this executable graph was made from.",
                            "cudaErrorInvalidValue")
        return n

    @staticmethod
    def node_enabled(node: Node, on: bool | None = None) -> bool:
        """cudaGraphNodeSetEnabled (``on``) / cudaGraphNodeGetEnabled on a node of an executable graph."""
        if node.type not in ENABLE_TYPES:
            raise CudaError("only kernel, memcpy and memset nodes can be disabled.", "cudaErrorInvalidValue")
        if on is not None:
            node.enabled = bool(on)
        return node.enabled

    def exec_destroy(self, e: GraphExec):
        self.graph_memory.destroyed(e.handle)
        self._release_all(e.graph)
        self.execs.pop(e.handle, None)

    def _release_all(self, graph: Graph):
        for n in self._walk(graph):
            if n.type == "mem_alloc":
                self.release_graph_allocation(n.params["address"])

    def exec_update(self, e: GraphExec, graph: Graph) -> int:
        """cudaGraphExecUpdate: the new graph's parameters into ``e`` when only parameters changed.
        Returns the cudaGraphExecUpdateResult; raises cudaErrorGraphExecUpdateFailure otherwise."""
        old, new = e.graph, graph
        if len(old.nodes) != len(new.nodes):
            return self._update_failed(UPDATE_TOPOLOGY_CHANGED, "the graphs have different numbers of nodes")
        for a, b in zip(old.nodes, new.nodes):
            if a.type != b.type:
                return self._update_failed(UPDATE_NODE_TYPE_CHANGED, f"a {a.type} node became a {b.type} node")
        index = {id(n): k for k, n in enumerate(new.nodes)}
        old_index = {id(n): k for k, n in enumerate(old.nodes)}
        if sorted((old_index[id(a)], old_index[id(b)]) for a, b in old.edges) != \
                sorted((index[id(a)], index[id(b)]) for a, b in new.edges):
            return self._update_failed(UPDATE_TOPOLOGY_CHANGED, "the graphs' edges differ")
        for a, b in zip(old.nodes, new.nodes):
            a.params = dict(b.params)
            e.aliases[id(b)] = a
        return UPDATE_SUCCESS

    @staticmethod
    def _update_failed(result, why):
        err = CudaError(f"cudaGraphExecUpdate: {why}, so the executable graph cannot be updated in place; "
                        "instantiate the new graph instead.", "cudaErrorGraphExecUpdateFailure")
        err.result = result
        raise err

    def graph_launch(self, e: GraphExec, stream):
        """cudaGraphLaunch: ``run_graph``'s generator, or None when ``stream`` is capturing (the graph
        becomes a child graph node of the capture)."""
        if stream.capture is not None:
            self.capture_node(stream, "graph", {"graph": self.clone(e.graph)})
            return None
        calls_host = self.calls_host(e.graph)
        if (self.follows(stream) or calls_host) and self.on_device_only(e.graph):
            # behind queued work, or with a host node (which runs when the stream gets there, the host
            # going on meanwhile), a graph of kernels, events, host nodes and copies within the arena
            # waits in the stream like a kernel, and moves its bytes itself when it runs
            def run():
                for n in self.run_graph(e, stream):
                    self.carry_out(n)
            self.enqueue(stream, run, wait=calls_host)
            return iter(())
        self.finish(self.follows(stream))        # the work queued before it in the stream runs first
        return self.run_graph(e, stream)

    def on_device_only(self, graph: Graph) -> bool:
        """Does the graph run here alone: memcpy and memset nodes only between memory in the arena
        (device, managed, cudaMallocHost), which ``carry_out`` can move? (Host nodes run through
        ``run_host_function``, as host functions do.)"""
        return all((n.type not in ("memcpy", "memset") or self.in_arena_node(n)) and
                   (n.type != "graph" or self.on_device_only(n.params["graph"])) and
                   (n.type != "conditional" or all(self.on_device_only(b) for b in n.params["bodies"]))
                   for n in graph.nodes)

    def calls_host(self, graph: Graph) -> bool:
        """Does the graph (or a child graph, or a conditional body) have a host node?"""
        return any(n.type == "host" or n.type == "graph" and self.calls_host(n.params["graph"]) or
                   n.type == "conditional" and any(self.calls_host(b) for b in n.params["bodies"])
                   for n in graph.nodes)

    def in_arena_node(self, node) -> bool:
        p, memory = node.params, self.memory
        if node.type == "memset":
            return memory.in_arena(p["dst"], p["pitch"] * (p["height"] - 1) + p["width"] * p["element"])
        span = lambda pitch, rows: ((p["depth"] - 1) * rows + p["height"] - 1) * pitch + p["width"]   # noqa: E731
        return memory.in_arena(p["dst"], span(p["dpitch"], p["dheight"])) and \
            memory.in_arena(p["src"], span(p["spitch"], p["sheight"]))

    def carry_out(self, node):
        """A memcpy or memset node between memory in the arena, done here as the program's side
        does the others (shim/graphs.c's cudaGraphLaunch): rows of ``width`` bytes (elements for a
        memset), slices of ``dheight`` rows."""
        import numpy as np
        p, arena = node.params, self.memory.arena
        if node.type == "memcpy":
            for z in range(p["depth"]):
                for y in range(p["height"]):
                    arena.write(p["dst"] + (z * p["dheight"] + y) * p["dpitch"],
                                arena.read(p["src"] + (z * p["sheight"] + y) * p["spitch"], p["width"]))
            return
        size = p["element"]
        value = np.frombuffer(int(p["value"] & ((1 << 8 * size) - 1)).to_bytes(size, "little"), np.uint8)
        for y in range(p["height"]):
            arena.write(p["dst"] + y * p["pitch"], np.tile(value, p["width"]))

    @staticmethod
    def debug_dot(graph: Graph) -> str:
        """cudaGraphDebugDotPrint: the graph in Graphviz's DOT language, kernels by name."""
        lines = [f'digraph "graph {graph.handle}" {{']
        for n in graph.nodes:
            label = n.params["function"].name if n.type == "kernel" else n.type.replace("_", " ")
            lines.append(f'  n{n.handle} [label="{label}"];')
        lines += [f"  n{a.handle} -> n{b.handle};" for a, b in graph.edges]
        return "\n".join(lines) + "\n}\n"

    def run_graph(self, e: GraphExec, stream):
        """Run an instantiated graph on ``stream``: a generator that yields the memcpy and memset
        nodes for the caller to carry out (their memory may be the program's), in order; host nodes
        run through ``run_host_function``."""
        e.launched = True
        for h in e.graph.conditionals:
            c = self.conditionals.get(h)
            if c is not None and c.flags & ASSIGN_DEFAULT:
                self.conditional_values[h] = c.default
        self._allocated = []
        yield from self._run_nodes(e.graph, stream)
        if e.alloc_bytes:
            self.graph_memory.launched(e.handle, e.alloc_bytes, self._allocated)

    def _run_nodes(self, graph: Graph, stream):
        for n in graph.order():
            if not n.enabled:
                continue
            p = n.params
            if n.type == "kernel":
                why_slow.IN_GRAPH = why_slow.ON        # (--why-slow tells a graph's launches apart)
                try:
                    self.run_kernel(p["function"], p["grid"], p["block"], p["shared"], p["args"], stream,
                                    cluster=p.get("cluster"))
                finally:
                    why_slow.IN_GRAPH = False
            elif n.type == "host":
                self.run_host_function(stream, p["fn"], p["data"], "host node")
            elif n.type in ("memcpy", "memset"):
                self.node_timeline(n, stream)
                yield n
            elif n.type == "graph":
                yield from self._run_nodes(p["graph"], stream)
            elif n.type == "event_record":
                self.event_record(self.event(p["event"]), stream)
            elif n.type == "wait_event":
                self.stream_wait_event(stream, self.event(p["event"]))
            elif n.type == "conditional":
                yield from self._run_conditional(p, stream)
            elif n.type == "mem_alloc":
                self._allocated.append(p["address"])
            elif n.type == "mem_free" and p["address"] in self._allocated:
                self._allocated.remove(p["address"])
            elif n.type == "mem_free":
                self.graph_memory.freed(p["address"])

    def _run_conditional(self, p, stream):
        h, bodies = p["handle"], p["bodies"]
        value = lambda: self.conditional_values.get(h, 0)   # noqa: E731 - read after each body runs
        if p["kind"] == COND_IF:
            chosen = bodies[0] if value() else (bodies[1] if len(bodies) > 1 else None)
            if chosen is not None:
                yield from self._run_nodes(chosen, stream)
        elif p["kind"] == COND_SWITCH:
            v = value()
            if v < len(bodies):
                yield from self._run_nodes(bodies[v], stream)
        else:
            for _ in range(MAX_WHILE_ITERATIONS):
                if not value():
                    return
                yield from self._run_nodes(bodies[0], stream)
            raise CudaError(f"a conditional while node ran its body {MAX_WHILE_ITERATIONS:,} times: does a kernel "
                            "in the body ever call cudaGraphSetConditional(handle, 0)?", "cudaErrorLaunchTimeout")

    # ------------------------------------------------------------------ stream capture
    def begin_capture(self, s, mode: int, graph: Graph | None = None, deps=()):
        if s.handle == 0:
            raise CudaError("the legacy default stream (0) cannot be captured: capture a stream you created "
                            "(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)).", "cudaErrorStreamCaptureUnsupported")
        if s.capture is not None:
            raise CudaError("this stream is capturing already: end that capture first.", "cudaErrorIllegalState")
        if mode not in (GLOBAL, THREAD_LOCAL, RELAXED):
            raise CudaError(f"{mode} is not a cudaStreamCaptureMode.", "cudaErrorInvalidValue")
        self.captures += 1
        c = Capture(self.captures, graph or self.graph_create(), s, mode)
        c.deps[s] = list(deps)
        s.capture = c
        return c

    def end_capture(self, s) -> Graph:
        c = s.capture
        if c is None:
            raise CudaError("cudaStreamEndCapture: this stream is not capturing (cudaStreamBeginCapture starts a "
                            "capture).", "cudaErrorIllegalState")
        if c.origin is not s:
            raise CudaError("a capture must end in the stream that began it.", "cudaErrorStreamCaptureUnmatched")
        for t in c.deps:
            t.capture = None
        if c.status == INVALIDATED:
            self._drop_captured(c)
            raise CudaError("the capture was invalidated by an operation that capture does not allow (see the "
                            "error that call returned); no graph was made.", "cudaErrorStreamCaptureInvalidated")
        joined = self._ancestors(c.deps[s])
        for t, deps in c.deps.items():
            if t is not s and any(id(d) not in joined for d in deps):
                self._drop_captured(c)
                raise CudaError("a stream forked from the capture (by waiting on an event recorded in it) has work "
                                "that the capturing stream never waited for: record an event in that stream and "
                                "cudaStreamWaitEvent on it in the capturing stream before ending the capture.",
                                "cudaErrorStreamCaptureUnjoined")
        return c.graph

    @staticmethod
    def capture_info(s):
        """cudaStreamGetCaptureInfo: (status, capture id, graph, the stream's current dependencies);
        None when the stream is not capturing."""
        c = s.capture
        return None if c is None else (c.status, c.id, c.graph, c.deps.get(s, []))

    @staticmethod
    def update_capture_dependencies(s, nodes, replace: bool):
        """cudaStreamUpdateCaptureDependencies: set (``replace``) or add to the stream's dependencies."""
        if s.capture is None:
            raise CudaError("cudaStreamUpdateCaptureDependencies: the stream is not capturing.",
                            "cudaErrorIllegalState")
        s.capture.deps[s] = list(nodes) if replace else s.capture.deps.get(s, []) + list(nodes)

    def _drop_captured(self, c):
        if c.graph.owner is None and c.graph.handle in self.graphs:
            self.graph_destroy(c.graph)

    @staticmethod
    def _ancestors(nodes) -> set:
        """The ids of ``nodes`` and of every node before them, by one map of each graph's edges (a long
        captured chain asked its edge list once per node)."""
        before = {}
        for graph in {id(n.graph): n.graph for n in nodes}.values():
            for a, b in graph.edges:
                before.setdefault(id(b), []).append(a)
        seen, todo = set(), list(nodes)
        while todo:
            n = todo.pop()
            if id(n) not in seen:
                seen.add(id(n))
                todo.extend(before.get(id(n), ()))
        return seen

    def capture_node(self, s, kind: str, params: dict) -> Node:
        """Record an operation issued to capturing stream ``s`` as a node after its dependencies."""
        c = s.capture
        if c.status == INVALIDATED:
            raise CudaError("the stream's capture was invalidated by an earlier error; end it and capture again.",
                            "cudaErrorStreamCaptureInvalidated")
        n = self.add_node(c.graph, kind, params, c.deps.get(s, []))
        c.deps[s] = [n]
        return n

    def invalidate(self, c, error: str, message: str):
        c.status = INVALIDATED
        raise CudaError(message, error)

    def forbid_while_capturing(self, s, call: str):
        """cudaStreamSynchronize/cudaStreamQuery of a capturing stream: an error, and the capture is lost."""
        if s.capture is not None:
            self.invalidate(s.capture, "cudaErrorStreamCaptureUnsupported",
                            f"{call} is not allowed while the stream is being captured (nothing runs during "
                            "a capture); the capture is now invalid.")

    def unsafe_call(self, call: str):
        """Potentially unsafe calls (cudaMalloc, ...) fail during a capture unless capture is relaxed."""
        if self.capture_mode == RELAXED:
            return
        for c in self.active_captures():
            if c.mode != RELAXED:
                self.invalidate(c, "cudaErrorStreamCaptureUnsupported",
                                f"{call} may not be called while a stream is being captured in "
                                f"{'global' if c.mode == GLOBAL else 'thread-local'} mode: allocate before the "
                                "capture, or capture with cudaStreamCaptureModeRelaxed.")

    def active_captures(self) -> list:
        seen = []
        for s in self.streams.values():
            if s.capture is not None and s.capture not in seen:
                seen.append(s.capture)
        return seen

    def legacy_stream_used(self, call: str):
        """Work on the legacy stream would wait for every blocking stream, a capturing one too."""
        for c in self.active_captures():
            if any(not t.non_blocking for t in c.deps):
                self.invalidate(c, "cudaErrorStreamCaptureImplicit",
                                f"{call} on the legacy default stream would wait for a blocking stream that is being "
                                "captured; capture streams made with cudaStreamNonBlocking, or use another stream.")

    def capture_wait(self, s, event):
        """cudaStreamWaitEvent on an event recorded during a capture: ``s`` joins (or merges into) it."""
        c, deps = event.captured
        if c.status == INVALIDATED:
            raise CudaError("the event was recorded in a capture that was invalidated.",
                            "cudaErrorStreamCaptureInvalidated")
        if s.capture is None:
            s.capture = c
            c.deps[s] = list(deps)
        elif s.capture is c:
            c.deps[s] = c.deps.get(s, []) + [d for d in deps if d not in c.deps.get(s, [])]
        else:
            raise CudaError("the stream is capturing another sequence; two captures cannot be merged.",
                            "cudaErrorStreamCaptureMerge")
