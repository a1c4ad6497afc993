"""cupyx.jit's thread-block group: ``jit.cg.this_thread_block()`` is the calling thread's block, its
``sync()`` the block's barrier, ``thread_rank()`` the thread's number in the block and ``size()`` /
``num_threads()`` the block's threads (numba, which compiles cudalab's cupyx.jit kernels, has grid
groups only)."""


def test_a_block_sum_synchronised_through_the_thread_block_group(cp):
    from cupyx import jit

    @jit.rawkernel()
    def block_sums(x, out):
        block = jit.cg.this_thread_block()
        rank = block.thread_rank()
        tile = jit.shared_memory(cp.float32, 64)
        tile[rank] = x[jit.blockIdx.x * jit.blockDim.x + rank]
        block.sync()                                    # every thread's value is in the tile now
        if rank == 0:
            total = cp.float32(0)
            for k in range(block.size()):
                total += tile[k]
            out[jit.blockIdx.x] = total
            out[jit.blockIdx.x + 2] = block.num_threads()

    x = cp.arange(128, dtype=cp.float32)
    out = cp.zeros(4, dtype=cp.float32)
    block_sums((2,), (64,), (x, out))
    assert out.get().tolist() == [sum(range(64)), sum(range(64, 128)), 64, 64]


def test_thread_rank_counts_x_fastest_in_a_2d_block(cp):
    from cupyx import jit

    @jit.rawkernel()
    def ranks(out):
        block = jit.cg.this_thread_block()
        out[jit.threadIdx.y, jit.threadIdx.x] = block.thread_rank()

    out = cp.zeros((3, 4), dtype=cp.int32)
    ranks((1,), (4, 3), (out,))
    assert out.get().ravel().tolist() == list(range(12))


def test_the_groups_indices_and_shape_are_the_blocks_and_the_threads(cp):
    """``group_index()``, ``thread_index()`` and ``dim_threads()`` (CUDA's thread_block methods, which
    CuPy answers as dim3 values) are blockIdx, threadIdx and blockDim."""
    from cupyx import jit

    @jit.rawkernel()
    def where(out):
        block = jit.cg.this_thread_block()
        g, t, d = block.group_index(), block.thread_index(), block.dim_threads()
        i = (g.y * 2 + g.x) * 6 + t.y * d.x + t.x
        out[i, 0] = g.x
        out[i, 1] = g.y
        out[i, 2] = t.x
        out[i, 3] = t.y
        out[i, 4] = d.x * 10 + d.y

    out = cp.zeros((24, 5), dtype=cp.int32)
    where((2, 2), (3, 2), (out,))
    rows = out.get().tolist()
    assert rows[0] == [0, 0, 0, 0, 32] and rows[7] == [1, 0, 1, 0, 32] and rows[23] == [1, 1, 2, 1, 32]
