"""The instructions of the PTX ISA (version 9.0, section 9.7's instruction index), one example each.

Each row: (instruction as the ISA's index names it, an example line, the target it needs, whether the
emulator runs it). ``tests/test_opcodes.py`` checks that every example is real PTX for its target
(ptxas, when it is installed), that the ones marked RUNS decode, and that every other one stops with
a cudaErrorNotSupported naming the instruction. A helper who makes an instruction run moves it to
RUNS here.

Operands use the registers and variables of ``PRELUDE`` (below).
"""

RUNS, NOT_YET = "runs", "not yet"

PRELUDE = """
    .reg .pred %p<8>;
    .reg .b16 %rs<16>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<32>;
    .reg .f32 %f<16>;
    .reg .f64 %fd<8>;
    .reg .b128 %q<4>;
    .shared .align 128 .b8 sh[4096];
"""
MODULE_VARS = """
.global .align 8 .b8 gv[256];
.global .texref tr;
.global .surfref sr;
"""

S90, S90A, S100A = "sm_90", "sm_90a", "sm_100a"

OPCODES = [
    # ------------------------------------------------------------------ 9.7.1 integer arithmetic
    ("add", "add.s32 %r1, %r2, %r3;", S90, RUNS),
    ("add.u16x2", "add.u16x2 %r1, %r2, %r3;", S90, RUNS),
    ("sub", "sub.s64 %rd1, %rd2, %rd3;", S90, RUNS),
    ("mul", "mul.wide.s32 %rd1, %r2, %r3;", S90, RUNS),
    ("mad", "mad.lo.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("mul24", "mul24.lo.s32 %r1, %r2, %r3;", S90, RUNS),
    ("mad24", "mad24.lo.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("sad", "sad.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("div", "div.s32 %r1, %r2, %r3;", S90, RUNS),
    ("rem", "rem.u32 %r1, %r2, %r3;", S90, RUNS),
    ("abs", "abs.s32 %r1, %r2;", S90, RUNS),
    ("neg", "neg.s32 %r1, %r2;", S90, RUNS),
    ("min", "min.s32 %r1, %r2, %r3;", S90, RUNS),
    ("min.s16x2.relu", "min.relu.s16x2 %r1, %r2, %r3;", S90, RUNS),
    ("max", "max.u32 %r1, %r2, %r3;", S90, RUNS),
    ("max.relu.s32", "max.relu.s32 %r1, %r2, %r3;", S90, RUNS),
    ("popc", "popc.b32 %r1, %r2;", S90, RUNS),
    ("clz", "clz.b64 %r1, %rd2;", S90, RUNS),
    ("bfind", "bfind.shiftamt.u32 %r1, %r2;", S90, RUNS),
    ("fns", "fns.b32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("brev", "brev.b32 %r1, %r2;", S90, RUNS),
    ("bfe", "bfe.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("bfi", "bfi.b32 %r1, %r2, %r3, %r4, %r5;", S90, RUNS),
    ("szext", "szext.clamp.s32 %r1, %r2, %r3;", S90, RUNS),
    ("bmsk", "bmsk.wrap.b32 %r1, %r2, %r3;", S90, RUNS),
    ("dp4a", "dp4a.s32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("dp2a", "dp2a.lo.u32.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.2 extended precision
    ("add.cc", "add.cc.u32 %r1, %r2, %r3;", S90, RUNS),
    ("addc", "addc.cc.u32 %r1, %r2, %r3;", S90, RUNS),
    ("sub.cc", "sub.cc.u32 %r1, %r2, %r3;", S90, RUNS),
    ("subc", "subc.u32 %r1, %r2, %r3;", S90, RUNS),
    ("mad.cc", "mad.lo.cc.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("madc", "madc.hi.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.3 floating point
    ("testp", "testp.finite.f32 %p1, %f1;", S90, RUNS),
    ("copysign", "copysign.f32 %f1, %f2, %f3;", S90, RUNS),
    ("add.f32", "add.rz.ftz.f32 %f1, %f2, %f3;", S90, RUNS),
    ("sub.f64", "sub.rn.f64 %fd1, %fd2, %fd3;", S90, RUNS),
    ("mul.f32", "mul.rn.f32 %f1, %f2, %f3;", S90, RUNS),
    ("fma", "fma.rn.f32 %f1, %f2, %f3, %f4;", S90, RUNS),
    ("mad.f32", "mad.rn.f32 %f1, %f2, %f3, %f4;", S90, RUNS),
    ("div.f32", "div.rn.f32 %f1, %f2, %f3;", S90, RUNS),
    ("abs.f32", "abs.ftz.f32 %f1, %f2;", S90, RUNS),
    ("neg.f64", "neg.f64 %fd1, %fd2;", S90, RUNS),
    ("min.f32", "min.NaN.f32 %f1, %f2, %f3;", S90, RUNS),
    ("max.f64", "max.f64 %fd1, %fd2, %fd3;", S90, RUNS),
    ("rcp", "rcp.rn.f32 %f1, %f2;", S90, RUNS),
    ("rcp.approx.ftz.f64", "rcp.approx.ftz.f64 %fd1, %fd2;", S90, RUNS),
    ("sqrt", "sqrt.rn.f64 %fd1, %fd2;", S90, RUNS),
    ("rsqrt", "rsqrt.approx.f32 %f1, %f2;", S90, RUNS),
    ("rsqrt.approx.ftz.f64", "rsqrt.approx.ftz.f64 %fd1, %fd2;", S90, RUNS),
    ("sin", "sin.approx.f32 %f1, %f2;", S90, RUNS),
    ("cos", "cos.approx.ftz.f32 %f1, %f2;", S90, RUNS),
    ("lg2", "lg2.approx.f32 %f1, %f2;", S90, RUNS),
    ("ex2", "ex2.approx.f32 %f1, %f2;", S90, RUNS),
    ("tanh", "tanh.approx.f32 %f1, %f2;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.4 half precision
    ("add.f16x2", "add.rn.f16x2 %r1, %r2, %r3;", S90, RUNS),
    ("sub.bf16", "sub.rn.bf16 %rs1, %rs2, %rs3;", S90, RUNS),
    ("mul.bf16x2", "mul.rn.bf16x2 %r1, %r2, %r3;", S90, RUNS),
    ("fma.f16", "fma.rn.f16 %rs1, %rs2, %rs3, %rs4;", S90, RUNS),
    ("neg.f16x2", "neg.f16x2 %r1, %r2;", S90, RUNS),
    ("abs.bf16x2", "abs.bf16x2 %r1, %r2;", S90, RUNS),
    ("min.f16", "min.f16 %rs1, %rs2, %rs3;", S90, RUNS),
    ("max.bf16x2", "max.NaN.bf16x2 %r1, %r2, %r3;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.5/9.7.6 comparison and selection
    ("set", "set.lt.u32.s32 %r1, %r2, %r3;", S90, RUNS),
    ("setp", "setp.ge.and.f32 %p1|%p2, %f1, %f2, %p3;", S90, RUNS),
    ("selp", "selp.b32 %r1, %r2, %r3, %p1;", S90, RUNS),
    ("slct", "slct.s32.f32 %r1, %r2, %r3, %f1;", S90, RUNS),
    ("set.f16x2", "set.lt.f16x2.f16x2 %r1, %r2, %r3;", S90, RUNS),
    ("setp.bf16x2", "setp.gt.bf16x2 %p1|%p2, %r2, %r3;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.7 logic and shift
    ("and", "and.b32 %r1, %r2, %r3;", S90, RUNS),
    ("or", "or.pred %p1, %p2, %p3;", S90, RUNS),
    ("xor", "xor.b64 %rd1, %rd2, %rd3;", S90, RUNS),
    ("not", "not.b32 %r1, %r2;", S90, RUNS),
    ("cnot", "cnot.b32 %r1, %r2;", S90, RUNS),
    ("lop3", "lop3.b32 %r1, %r2, %r3, %r4, 0x96;", S90, RUNS),
    ("shf", "shf.l.wrap.b32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("shl", "shl.b32 %r1, %r2, %r3;", S90, RUNS),
    ("shr", "shr.s32 %r1, %r2, %r3;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.8 data movement and conversion
    ("mov", "mov.u64 %rd1, %rd2;", S90, RUNS),
    ("shfl.sync", "shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", S90, RUNS),
    ("prmt", "prmt.b32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("ld", "ld.global.v2.u32 {%r1, %r2}, [%rd1];", S90, RUNS),
    ("ld.global.nc", "ld.global.nc.L1::no_allocate.f32 %f1, [%rd1];", S90, RUNS),
    ("ld.shared::cluster", "ld.shared::cluster.u32 %r1, [%r2];", S90, RUNS),
    ("ld.param (through a pointer)", "ld.param.u32 %r1, [%rd1];", S90, RUNS),
    ("ldu", "ldu.global.u32 %r1, [%rd1];", S90, RUNS),
    ("st", "st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};", S90, RUNS),
    ("st.shared::cluster", "st.shared::cluster.u32 [%r2], %r1;", S90, RUNS),
    ("st.async", "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];", S90, NOT_YET),
    ("st.bulk", "st.bulk.weak.shared::cta [%r1], 128, 0;", S100A, NOT_YET),
    ("multimem.ld_reduce", "multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];", S90, NOT_YET),
    ("multimem.st", "multimem.st.relaxed.sys.global.f32 [%rd1], %f1;", S90, NOT_YET),
    ("multimem.red", "multimem.red.relaxed.sys.global.add.u32 [%rd1], %r1;", S90, NOT_YET),
    ("prefetch", "prefetch.global.L2 [%rd1];", S90, RUNS),
    ("prefetchu", "prefetchu.L1 [%rd1];", S90, RUNS),
    ("applypriority", "applypriority.global.L2::evict_normal [%rd1], 128;", S90, RUNS),
    ("discard", "discard.global.L2 [%rd1], 128;", S90, RUNS),
    ("createpolicy", "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;", S90, RUNS),
    ("isspacep", "isspacep.shared::cluster %p1, %rd1;", S90, RUNS),
    ("cvta", "cvta.to.shared.u64 %rd1, %rd2;", S90, RUNS),
    ("cvt", "cvt.rni.s32.f64 %r1, %fd1;", S90, RUNS),
    ("cvt.e4m3x2.f32", "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;", S90, RUNS),
    ("cvt.f16x2.e5m2x2", "cvt.rn.f16x2.e5m2x2 %r1, %rs1;", S90, RUNS),
    ("cvt.e2m3x2.f32", "cvt.rn.satfinite.e2m3x2.f32 %rs1, %f1, %f2;", S100A, RUNS),
    ("cvt.relu.bf16x2.f32", "cvt.rn.relu.bf16x2.f32 %r1, %f1, %f2;", S90, RUNS),
    ("cvt.pack", "cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("mapa", "mapa.shared::cluster.u32 %r1, %r2, %r3;", S90, RUNS),
    ("getctarank", "getctarank.u64 %r1, %rd1;", S90, RUNS),
    ("cp.async", "cp.async.ca.shared.global [%r1], [%rd1], 16;", S90, RUNS),
    ("cp.async.commit_group", "cp.async.commit_group;", S90, RUNS),
    ("cp.async.wait_group", "cp.async.wait_group 0;", S90, RUNS),
    ("cp.async.bulk", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r2];",
     S90, RUNS),
    ("cp.reduce.async.bulk", "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 256;",
     S90, RUNS),
    ("cp.async.bulk.prefetch", "cp.async.bulk.prefetch.L2.global [%rd1], 256;", S90, RUNS),
    ("cp.async.bulk.tensor", "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
     "[%r1], [%rd1, {%r2}], [%r3];", S90, NOT_YET),
    ("cp.reduce.async.bulk.tensor", "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group "
     "[%rd1, {%r2}], [%r1];", S90, NOT_YET),
    ("cp.async.bulk.prefetch.tensor", "cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd1, {%r2}];", S90, RUNS),
    ("cp.async.bulk.commit_group", "cp.async.bulk.commit_group;", S90, RUNS),
    ("cp.async.bulk.wait_group", "cp.async.bulk.wait_group.read 0;", S90, RUNS),
    ("tensormap.replace", "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", S90A, NOT_YET),
    # ------------------------------------------------------------------ 9.7.9/9.7.10 texture and surface
    ("tex", "tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [tr, {%r5}];", S90, NOT_YET),
    ("tld4", "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tr, {%f5, %f6}];", S90, NOT_YET),
    ("txq", "txq.width.b32 %r1, [tr];", S90, NOT_YET),
    ("istypep", "istypep.texref %p1, %rd1;", S90, NOT_YET),
    ("suld", "suld.b.1d.v4.b32.trap {%r1, %r2, %r3, %r4}, [sr, {%r5}];", S90, NOT_YET),
    ("sust", "sust.b.1d.v4.b32.trap [sr, {%r5}], {%r1, %r2, %r3, %r4};", S90, NOT_YET),
    ("sured", "sured.b.add.1d.trap.u32 [sr, {%r5}], %r1;", S90, NOT_YET),
    ("suq", "suq.width.b32 %r1, [sr];", S90, NOT_YET),
    # ------------------------------------------------------------------ 9.7.11 control flow
    ("bra", "bra.uni $L_end;", S90, RUNS),
    ("brx.idx", "brx.idx %r1, $targets;", S90, NOT_YET),
    ("call", "call.uni (%r1), fn, (%r2);", S90, RUNS),
    ("ret", "ret;", S90, RUNS),
    ("exit", "exit;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.12 parallel synchronization and communication
    ("bar.sync", "bar.sync 0;", S90, RUNS),
    ("barrier.sync.aligned", "barrier.sync.aligned 1, 64;", S90, RUNS),
    ("bar.red", "bar.red.popc.u32 %r1, 0, %p1;", S90, RUNS),
    ("bar.warp.sync", "bar.warp.sync -1;", S90, RUNS),
    ("barrier.cluster", "barrier.cluster.arrive.release.aligned;", S90, RUNS),
    ("barrier.cluster.wait", "barrier.cluster.wait.acquire;", S90, RUNS),
    ("membar", "membar.gl;", S90, RUNS),
    ("fence", "fence.acq_rel.cluster;", S90, RUNS),
    ("fence.proxy", "fence.proxy.async.shared::cta;", S90, RUNS),
    ("atom", "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;", S90, RUNS),
    ("atom.shared::cluster", "atom.shared::cluster.add.u32 %r1, [%r2], 1;", S90, RUNS),
    ("red", "red.global.add.f32 [%rd1], %f1;", S90, RUNS),
    ("red.async", "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
     S90, NOT_YET),
    ("vote.sync", "vote.sync.ballot.b32 %r1, %p1, -1;", S90, RUNS),
    ("match.sync", "match.any.sync.b32 %r1, %r2, -1;", S90, RUNS),
    ("activemask", "activemask.b32 %r1;", S90, RUNS),
    ("redux.sync", "redux.sync.add.s32 %r1, %r2, -1;", S90, RUNS),
    ("griddepcontrol", "griddepcontrol.launch_dependents;", S90, RUNS),
    ("elect.sync", "elect.sync %r1|%p1, -1;", S90, RUNS),
    ("mbarrier.init", "mbarrier.init.shared::cta.b64 [%r1], 32;", S90, RUNS),
    ("mbarrier.inval", "mbarrier.inval.shared::cta.b64 [%r1];", S90, RUNS),
    ("mbarrier.expect_tx", "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], 256;", S90, RUNS),
    ("mbarrier.complete_tx", "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r1], 256;", S90, RUNS),
    ("mbarrier.arrive", "mbarrier.arrive.shared::cta.b64 %rd1, [%r1];", S90, RUNS),
    ("mbarrier.arrive_drop", "mbarrier.arrive_drop.shared::cta.b64 %rd1, [%r1];", S90, RUNS),
    ("cp.async.mbarrier.arrive", "cp.async.mbarrier.arrive.shared::cta.b64 [%r1];", S90, RUNS),
    ("mbarrier.test_wait", "mbarrier.test_wait.shared::cta.b64 %p1, [%r1], %rd1;", S90, RUNS),
    ("mbarrier.try_wait", "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", S90, RUNS),
    ("mbarrier.pending_count", "mbarrier.pending_count.b64 %r1, %rd1;", S90, RUNS),
    ("tensormap.cp_fenceproxy", "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned "
     "[%rd1], [%r1], 128;", S90, NOT_YET),
    ("clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
     ".b128 [%r1], [%r2];", S100A, NOT_YET),
    ("clusterlaunchcontrol.query_cancel", "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q1;",
     S100A, NOT_YET),
    # ------------------------------------------------------------------ 9.7.13 warp-level matrix multiply-accumulate
    ("wmma.load", "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, "
     "[%rd1];", S90, RUNS),
    ("wmma.store", "wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, "
     "%f8};", S90, RUNS),
    ("wmma.mma", "wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8, %r9, "
     "%r10, %r11, %r12}, {%r13, %r14, %r15, %r16, %r17, %r18, %r19, %r20}, {%r21, %r22, %r23, %r24};", S90, RUNS),
    ("mma", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6}, {%f5, %f6, %f7, %f8};", S90, RUNS),
    ("mma.sp", "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6, %r7, %r8}, {%f5, %f6, %f7, %f8}, %r9, 0x0;", S90, NOT_YET),
    ("ldmatrix", "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", S90, RUNS),
    ("stmatrix", "stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r5], {%r1, %r2};", S90, RUNS),
    ("movmatrix", "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.14 asynchronous warpgroup MMA (sm_90a)
    ("wgmma.fence", "wgmma.fence.sync.aligned;", S90A, NOT_YET),
    ("wgmma.commit_group", "wgmma.commit_group.sync.aligned;", S90A, NOT_YET),
    ("wgmma.wait_group", "wgmma.wait_group.sync.aligned 0;", S90A, NOT_YET),
    ("wgmma.mma_async", "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, "
     "1, 1, 1, 0, 0;", S90A, NOT_YET),
    # ------------------------------------------------------------------ 9.7.15 tcgen05 (sm_100a)
    ("tcgen05.alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;", S100A, NOT_YET),
    ("tcgen05.dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 32;", S100A, NOT_YET),
    ("tcgen05.relinquish_alloc_permit", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", S100A, NOT_YET),
    ("tcgen05.fence", "tcgen05.fence::before_thread_sync;", S100A, NOT_YET),
    ("tcgen05.wait", "tcgen05.wait::ld.sync.aligned;", S100A, NOT_YET),
    ("tcgen05.commit", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r1];", S100A, NOT_YET),
    ("tcgen05.ld", "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [%r2];", S100A, NOT_YET),
    ("tcgen05.st", "tcgen05.st.sync.aligned.32x32b.x1.b32 [%r2], {%r1};", S100A, NOT_YET),
    ("tcgen05.cp", "tcgen05.cp.cta_group::1.128x256b [%r1], %rd1;", S100A, NOT_YET),
    ("tcgen05.shift", "tcgen05.shift.cta_group::1.down [%r1];", S100A, NOT_YET),
    ("tcgen05.mma", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", S100A, NOT_YET),
    # ------------------------------------------------------------------ 9.7.16 stack manipulation
    ("stacksave", "stacksave.u64 %rd1;", S90, RUNS),
    ("stackrestore", "stackrestore.u64 %rd1;", S90, RUNS),
    ("alloca", "alloca.u64 %rd1, %rd2, 16;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.17 video
    ("vadd", "vadd.s32.s32.s32.sat %r1, %r2.b0, %r3.h1;", S90, RUNS),
    ("vsub", "vsub.s32.s32.u32.sat.add %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vabsdiff", "vabsdiff.u32.u32.u32 %r1.h0, %r2.b2, %r3.b3, %r4;", S90, RUNS),
    ("vmin", "vmin.s32.s32.s32.min %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmax", "vmax.u32.u32.u32.sat %r1, %r2.h1, %r3.h0;", S90, RUNS),
    ("vshl", "vshl.u32.u32.u32.clamp %r1, %r2, %r3;", S90, RUNS),
    ("vshr", "vshr.s32.s32.u32.wrap.add %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmad", "vmad.s32.s32.s32.sat.shr15 %r1, %r2.h0, %r3.h0, %r4;", S90, RUNS),
    ("vset", "vset.s32.u32.lt %r1, %r2, %r3;", S90, RUNS),
    ("vadd2", "vadd2.s32.s32.s32.sat %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vsub2", "vsub2.u32.u32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vavrg2", "vavrg2.u32.u32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vabsdiff2", "vabsdiff2.s32.s32.s32.add %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmin2", "vmin2.s32.s32.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmax2", "vmax2.u32.u32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vset2", "vset2.s32.s32.lt %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vadd4", "vadd4.u32.u32.u32.sat %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vsub4", "vsub4.s32.s32.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vavrg4", "vavrg4.u32.u32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vabsdiff4", "vabsdiff4.u32.u32.u32.add %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmin4", "vmin4.s32.s32.s32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vmax4", "vmax4.u32.u32.u32 %r1, %r2, %r3, %r4;", S90, RUNS),
    ("vset4", "vset4.u32.u32.ne %r1, %r2, %r3, %r4;", S90, RUNS),
    # ------------------------------------------------------------------ 9.7.18 miscellaneous
    ("brkpt", "brkpt;", S90, RUNS),
    ("nanosleep", "nanosleep.u32 100;", S90, RUNS),
    ("pmevent", "pmevent 1;", S90, RUNS),
    ("trap", "trap;", S90, RUNS),
    ("setmaxnreg", "setmaxnreg.inc.sync.aligned.u32 64;", S90A, RUNS),
]


def kernel_ptx(rows, target):
    """One PTX module: every row's example inside one kernel, for ``target``."""
    body = "\n".join(f"    {line}" for _, line, _, _ in rows)
    needs_fn = any(" fn," in line for _, line, _, _ in rows)
    needs_targets = any("$targets" in line for _, line, _, _ in rows)
    fn = (".func (.reg .b32 out) fn (.reg .b32 x)\n{\n    mov.b32 out, x;\n    ret;\n}\n" if needs_fn else "")
    targets = "    $targets: .branchtargets $L_end;\n" if needs_targets else ""
    return (f".version 9.0\n.target {target}\n.address_size 64\n{MODULE_VARS}\n{fn}"
            f".visible .entry probe(.param .u64 probe_p)\n.maxntid 128, 1, 1\n{{\n{PRELUDE}{targets}{body}\n$L_end:\n    ret;\n}}\n")
