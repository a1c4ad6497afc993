"""cupyx.jit's cooperative groups beyond the thread block's methods: ``from cupyx.jit import cg``, the
free functions ``cg.sync(group)``, ``cg.memcpy_async``/``cg.wait``, and the grid group
(``jit.cg.this_grid()``) with its barrier, ranks and counts, as CUDA's ``grid_group`` numbers them."""
import pytest


def test_cg_imported_from_cupyx_jit_syncs_a_block_with_the_free_function(cp):
    from cupyx import jit
    from cupyx.jit import cg

    @jit.rawkernel()
    def reverse(x, out):
        block = cg.this_thread_block()
        tile = jit.shared_memory(cp.int32, 32)
        tile[block.thread_rank()] = x[block.thread_rank()]
        cg.sync(block)                  # cg::sync(block): every thread's value is in the tile
        out[block.thread_rank()] = tile[block.size() - 1 - block.thread_rank()]

    x = cp.arange(32, dtype=cp.int32)
    out = cp.zeros(32, dtype=cp.int32)
    reverse((1,), (32,), (x, out))
    assert out.get().tolist() == list(range(31, -1, -1))


def test_the_grid_group_numbers_threads_and_blocks_and_its_barrier_spans_blocks(cp):
    """Each thread writes its own rank, the grid meets, then each reads its neighbour's, which
    another block wrote when the neighbour is the first thread of the next block."""
    from cupyx import jit

    @jit.rawkernel()
    def neighbours(x, out, blocks):
        grid = jit.cg.this_grid()
        rank = grid.thread_rank()
        x[rank] = rank
        grid.sync()
        out[rank] = x[(rank + 1) % grid.size()]
        if rank == 0:
            blocks[0] = grid.num_blocks()
            blocks[1] = grid.num_threads()
        if jit.threadIdx.x == 0:
            blocks[2 + grid.block_rank()] = grid.block_index().x * 10 + grid.dim_blocks().x

    x = cp.zeros(24, dtype=cp.int64)
    out = cp.zeros(24, dtype=cp.int64)
    blocks = cp.zeros(5, dtype=cp.int64)
    neighbours((3,), (8,), (x, out, blocks))
    assert out.get().tolist() == [(i + 1) % 24 for i in range(24)]
    assert blocks.get().tolist() == [3, 24, 3, 13, 23]


def test_a_grid_rank_counts_blocks_x_fastest_then_threads_in_the_block(cp):
    from cupyx import jit

    @jit.rawkernel()
    def ranks(out):
        grid = jit.cg.this_grid()
        out[grid.thread_rank()] = grid.block_rank() * 100 + jit.threadIdx.y * 2 + jit.threadIdx.x
        jit.cg.sync(grid)               # cg::sync(grid), the free function's form

    out = cp.zeros(24, dtype=cp.int64)
    ranks((3, 2), (2, 2), (out,))
    expected = [b * 100 + t for b in range(6) for t in range(4)]
    assert out.get().tolist() == expected


def test_memcpy_async_fills_a_shared_tile_that_the_block_reads_after_wait(cp):
    from cupyx import jit

    @jit.rawkernel()
    def shifted(src, out):
        block = jit.cg.this_thread_block()
        tile = jit.shared_memory(cp.float32, 64)
        jit.cg.memcpy_async(block, tile, 0, src, jit.blockIdx.x * 64, 64 * 4)   # 64 floats, in bytes
        jit.cg.wait(block)
        t = jit.threadIdx.x
        out[jit.blockIdx.x * 64 + t] = tile[(t + 1) % 64]

    src = cp.arange(128, dtype=cp.float32)
    out = cp.zeros(128, dtype=cp.float32)
    shifted((2,), (64,), (src, out))    # one thread a float: each reads one its neighbour copied
    want = [b * 64 + (t + 1) % 64 for b in range(2) for t in range(64)]
    assert out.get().tolist() == want


def test_group_functions_called_on_the_host_say_where_they_work(cp):
    from cupyx.jit import cg

    with pytest.raises(NotImplementedError, match="inside a cupyx.jit kernel"):
        cg.this_grid()
