#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
tt.func @f(%bars: !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable>, %phase: i32, %p: i1) {
  triton_ext_onchip.declare_barriers %bars : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %b0 = ttg.memdesc_index %bars[%c0] : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  %b1 = ttg.memdesc_index %bars[%c1] : !ttg.memdesc<2x1xi64, #bar, #ttg.shared_memory, mutable> -> !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  ttng.arrive_barrier %b0, 1, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  ttng.wait_barrier %b1, %phase, %p : !ttg.memdesc<1xi64, #bar, #ttg.shared_memory, mutable>
  tt.return
}
