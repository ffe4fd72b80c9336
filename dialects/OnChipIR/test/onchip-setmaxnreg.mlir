// split(..., worker_num_regs=[24]) (language/OnChip) sets requestedRegisters on the
// ttg.warp_specialize it builds. The OnChip passes keep the attribute, and Triton's
// allocate-warp-groups turns it into the registers of each partition (setmaxnreg in the LLVM
// lowering): the 1-warp producer, padded to a warp group, keeps 24, the 8 consumer warps of the
// default partition get 240 instead of the 168 that 12 warps would have.
// RUN: %opt %s --pass onchip_lower,onchip_prune,allocate_warp_groups --no-debug-info | FileCheck %s
// CHECK: module attributes {ttg.maxnreg = 168 : i32, {{.*}}"ttg.total-num-warps" = 12 : i32}
// CHECK-LABEL: tt.func @producer_with_24_registers
// CHECK: ttg.warp_specialize(%{{.*}}) attributes {actualRegisters = array<i32: 240, 24, 24, 24>, requestedRegisters = array<i32: 24, 16, 16>
// CHECK: partition0(%{{.*}}) num_warps(1)

#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
tt.func @producer_with_24_registers(%bars: !ttg.memdesc<2x1xi64, #bar, #smem, mutable>) {
  ttg.warp_specialize(%bars) attributes {requestedRegisters = array<i32: 24>}
  default {
    ttg.warp_yield
  }
  partition0(%b: !ttg.memdesc<2x1xi64, #bar, #smem, mutable>) num_warps(1) {
    ttg.warp_return
  } : (!ttg.memdesc<2x1xi64, #bar, #smem, mutable>) -> ()
  tt.return
}
}
