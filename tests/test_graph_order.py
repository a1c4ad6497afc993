"""The order a graph's nodes run in (runtime/core/graphs.py): each node after its dependencies, the
earliest created first among those ready, as cudaGraphLaunch runs a graph built or captured node by node.

A course's lesson on graphs captures a loop of 131,071 one-thread launches: one chain of that many
nodes. Finding the order, and the nodes a capture's streams joined, must take one pass over the edges,
not one per node."""
import pytest

from cudalab.errors import CudaError
from cudalab.runtime.core.graphs import Graph, GraphAPI, Node


def graph_of(count: int, edges) -> Graph:
    g = Graph(1)
    g.nodes = [Node(k + 10, "empty", {}, g) for k in range(count)]
    g.edges = [(g.nodes[a], g.nodes[b]) for a, b in edges]
    return g


def names(nodes) -> list:
    return [n.handle - 10 for n in nodes]


def test_nodes_run_after_their_dependencies_and_in_creation_order_among_the_ready():
    # 3 waits for 0 and 1; 2 is free; 4 waits for 3: the ready ones go earliest-created first
    g = graph_of(5, [(3, 4), (0, 3), (1, 3)])
    assert names(g.order()) == [0, 1, 2, 3, 4]
    # a node created first but waiting for a later one runs after it, before the others behind it
    g = graph_of(4, [(2, 0), (0, 1)])
    assert names(g.order()) == [2, 0, 1, 3]


def test_a_cycle_is_refused_with_the_reason():
    g = graph_of(3, [(0, 1), (1, 2), (2, 1)])
    with pytest.raises(CudaError, match="cycle"):
        g.order()


def test_a_captured_chain_of_thirty_thousand_launches_orders_and_joins_in_one_pass():
    count = 30_000
    g = graph_of(count, [(k, k + 1) for k in range(count - 1)])
    assert names(g.order()) == list(range(count))
    joined = GraphAPI._ancestors([g.nodes[-1]])          # what the capturing stream waited for: all of it
    assert len(joined) == count and id(g.nodes[0]) in joined
    assert GraphAPI._ancestors([g.nodes[1]]) == {id(g.nodes[0]), id(g.nodes[1])}
