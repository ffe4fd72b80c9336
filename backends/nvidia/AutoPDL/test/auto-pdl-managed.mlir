// RUN: %opt %s --pass nvidia_auto_pdl --no-debug-info | FileCheck %s
// RUN: %opt %s --pass 'nvidia_auto_pdl{launch-dependents=after-wait}' --no-debug-info | FileCheck %s
// RUN: env MLIR_ENABLE_DIAGNOSTICS=remarks %opt %s --pass 'nvidia_auto_pdl{remarks=true}' --no-debug-info 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Already managed by the author (gdc_wait written by hand): left alone, and the
// module is not marked for a PDL launch. With remarks=true, a remark on the
// author's wait says so.
// CHECK-NOT: triton_ext.launch_pdl
// CHECK-LABEL: tt.func public @hand_managed
// CHECK:         tt.load
// CHECK-NEXT:    tt.grid_dependency_wait
// CHECK-NOT:     tt.grid_dependency_launch_dependents
// CHECK:         tt.return
tt.func public @hand_managed(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
  %v = tt.load %x : !tt.ptr<f32>
  // REMARK: auto-pdl-managed.mlir:[[@LINE+1]]:3: remark: nvidia_auto_pdl: not applied: the module already manages grid dependencies (this tt.grid_dependency_wait; every kernel of it is left alone)
  tt.grid_dependency_wait
  tt.store %y, %v : !tt.ptr<f32>
  tt.return
}
