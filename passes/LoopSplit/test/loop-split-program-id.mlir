// RUN: %opt %s -split-input-file --pass loop_split,canonicalize,cse --no-debug-info | FileCheck %s

// Issue 26 (item 8): the guard's checks on a program id are decided from the
// range Triton guarantees, tt.get_program_id in [0, 2^31 - 1), and nothing
// narrower. `pid * 64` can reach (2^31 - 2) * 64, which wraps i32, so no range
// is known for it and its no-wrap checks stay run-time checks (an analysis
// that assumed ids below 2^24 dropped them, and a causal mask with program
// ids near 2^31 then folded rows that wrapped). For `pid + [lo, hi]` the
// check is dropped exactly when (2^31 - 2) + hi <= INT32_MAX.
// (triton-ext opt has no -split-input-file; the cases are separate functions.)

// A bare causal block: offs_m = pid * 64 + arange(0, 64) against
// offs_n = start_n + arange(0, 64). The check pid * 64 + 63 <= INT32_MAX stays,
// AND-ed into the guard that selects the split points.
// CHECK-LABEL: tt.func @bare_program_id_times_64
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 2147483584 : i32
// CHECK:         %[[PID:.*]] = tt.get_program_id x : i32
// CHECK:         %[[SM:.*]] = arith.muli %[[PID]], %{{.*}} : i32
// CHECK:         %[[NOWRAP:.*]] = arith.cmpi sle, %[[SM]], %[[MAX]] : i32
// CHECK:         %[[OK:.*]] = arith.andi %{{.*}}, %[[NOWRAP]] : i1
// CHECK:         arith.select %[[OK]]
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK:           arith.cmpi sge
// CHECK:         scf.for
// CHECK:         tt.return
tt.func @bare_program_id_times_64(%n: i32) -> tensor<64x64xi32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<64x64xi32>
  %one = arith.constant dense<1> : tensor<64x64xi32>
  %two = arith.constant dense<2> : tensor<64x64xi32>
  %three = arith.constant dense<3> : tensor<64x64xi32>
  %pid = tt.get_program_id x : i32
  %start_m = arith.muli %pid, %c64 : i32
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sm = tt.splat %start_m : i32 -> tensor<64xi32>
  %offs_m = arith.addi %sm, %rm : tensor<64xi32>
  %acc = scf.for %start_n = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<64x64xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<64xi32>
    %offs_n = arith.addi %ns, %r : tensor<64xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %mb = tt.broadcast %me : tensor<64x1xi32> -> tensor<64x64xi32>
    %nb = tt.broadcast %ne : tensor<1x64xi32> -> tensor<64x64xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<64x64xi32>
    %m3 = arith.muli %a, %three : tensor<64x64xi32>
    %v = arith.select %mask, %one, %two : tensor<64x64xi1>, tensor<64x64xi32>
    %s = arith.addi %m3, %v : tensor<64x64xi32>
    scf.yield %s : tensor<64x64xi32>
  }
  tt.return %acc : tensor<64x64xi32>
}

// -----

// The same with rows shifted by 10 (the differential test's kernel, where
// program ids near 2^31 make pid * 64 = 2^31 - 64 and the check fail):
// pid * 64 + 73 <= INT32_MAX.
// CHECK-LABEL: tt.func @program_id_times_64_plus_10
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 2147483574 : i32
// CHECK:         %[[PID:.*]] = tt.get_program_id x : i32
// CHECK:         %[[SM:.*]] = arith.muli %[[PID]], %{{.*}} : i32
// CHECK:         %[[NOWRAP:.*]] = arith.cmpi sle, %[[SM]], %[[MAX]] : i32
// CHECK:         %[[OK:.*]] = arith.andi %{{.*}}, %[[NOWRAP]] : i1
// CHECK:         arith.select %[[OK]]
// CHECK:         tt.return
tt.func @program_id_times_64_plus_10(%n: i32) -> tensor<64x64xi32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<64x64xi32>
  %one = arith.constant dense<1> : tensor<64x64xi32>
  %two = arith.constant dense<2> : tensor<64x64xi32>
  %three = arith.constant dense<3> : tensor<64x64xi32>
  %pid = tt.get_program_id x : i32
  %start_m = arith.muli %pid, %c64 : i32
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %sm = tt.splat %start_m : i32 -> tensor<64xi32>
  %m0 = arith.addi %sm, %rm : tensor<64xi32>
  %offk = arith.constant dense<10> : tensor<64xi32>
  %offs_m = arith.addi %m0, %offk : tensor<64xi32>
  %acc = scf.for %start_n = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<64x64xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<64xi32>
    %offs_n = arith.addi %ns, %r : tensor<64xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %mb = tt.broadcast %me : tensor<64x1xi32> -> tensor<64x64xi32>
    %nb = tt.broadcast %ne : tensor<1x64xi32> -> tensor<64x64xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<64x64xi32>
    %m3 = arith.muli %a, %three : tensor<64x64xi32>
    %v = arith.select %mask, %one, %two : tensor<64x64xi1>, tensor<64x64xi32>
    %s = arith.addi %m3, %v : tensor<64x64xi32>
    scf.yield %s : tensor<64x64xi32>
  }
  tt.return %acc : tensor<64x64xi32>
}

// -----

// pid + arange(0, 2): (2^31 - 2) + 1 = INT32_MAX fits, the check is decided
// at compile time and dropped (no comparison of the program id).
// CHECK-LABEL: tt.func @program_id_plus_arange_2(
// CHECK:         %[[PID:.*]] = tt.get_program_id x : i32
// CHECK-NOT:     arith.cmpi {{.*}}%[[PID]],
// CHECK:         tt.return
tt.func @program_id_plus_arange_2(%n: i32) -> tensor<2x64xi32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<2x64xi32>
  %one = arith.constant dense<1> : tensor<2x64xi32>
  %two = arith.constant dense<2> : tensor<2x64xi32>
  %three = arith.constant dense<3> : tensor<2x64xi32>
  %pid = tt.get_program_id x : i32
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
  %sm = tt.splat %pid : i32 -> tensor<2xi32>
  %offs_m = arith.addi %sm, %rm : tensor<2xi32>
  %acc = scf.for %start_n = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<2x64xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<64xi32>
    %offs_n = arith.addi %ns, %r : tensor<64xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<2xi32> -> tensor<2x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %mb = tt.broadcast %me : tensor<2x1xi32> -> tensor<2x64xi32>
    %nb = tt.broadcast %ne : tensor<1x64xi32> -> tensor<2x64xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<2x64xi32>
    %m3 = arith.muli %a, %three : tensor<2x64xi32>
    %v = arith.select %mask, %one, %two : tensor<2x64xi1>, tensor<2x64xi32>
    %s = arith.addi %m3, %v : tensor<2x64xi32>
    scf.yield %s : tensor<2x64xi32>
  }
  tt.return %acc : tensor<2x64xi32>
}

// -----

// pid + 1 + arange(0, 2): (2^31 - 2) + 2 wraps, so pid <= INT32_MAX - 2 is
// checked at run time.
// CHECK-LABEL: tt.func @program_id_plus_arange_2_plus_1
// CHECK-DAG:     %[[MAX:.*]] = arith.constant 2147483645 : i32
// CHECK:         %[[PID:.*]] = tt.get_program_id x : i32
// CHECK:         %[[NOWRAP:.*]] = arith.cmpi sle, %[[PID]], %[[MAX]] : i32
// CHECK:         arith.andi %{{.*}}, %[[NOWRAP]] : i1
// CHECK:         tt.return
tt.func @program_id_plus_arange_2_plus_1(%n: i32) -> tensor<2x64xi32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0> : tensor<2x64xi32>
  %one = arith.constant dense<1> : tensor<2x64xi32>
  %two = arith.constant dense<2> : tensor<2x64xi32>
  %three = arith.constant dense<3> : tensor<2x64xi32>
  %pid = tt.get_program_id x : i32
  %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rm = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
  %sm = tt.splat %pid : i32 -> tensor<2xi32>
  %m0 = arith.addi %sm, %rm : tensor<2xi32>
  %offk = arith.constant dense<1> : tensor<2xi32>
  %offs_m = arith.addi %m0, %offk : tensor<2xi32>
  %acc = scf.for %start_n = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<2x64xi32>) : i32 {
    %ns = tt.splat %start_n : i32 -> tensor<64xi32>
    %offs_n = arith.addi %ns, %r : tensor<64xi32>
    %me = tt.expand_dims %offs_m {axis = 1 : i32} : tensor<2xi32> -> tensor<2x1xi32>
    %ne = tt.expand_dims %offs_n {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %mb = tt.broadcast %me : tensor<2x1xi32> -> tensor<2x64xi32>
    %nb = tt.broadcast %ne : tensor<1x64xi32> -> tensor<2x64xi32>
    %mask = arith.cmpi sge, %mb, %nb : tensor<2x64xi32>
    %m3 = arith.muli %a, %three : tensor<2x64xi32>
    %v = arith.select %mask, %one, %two : tensor<2x64xi1>, tensor<2x64xi32>
    %s = arith.addi %m3, %v : tensor<2x64xi32>
    scf.yield %s : tensor<2x64xi32>
  }
  tt.return %acc : tensor<2x64xi32>
}
