// SPDX-License-Identifier: BSD-2-Clause
// A Rust program for test-report.sh: a method of a type in a module and a generic
// function, whose mangled names (v0 "_R..." or legacy "_ZN...17h<hash>E", as
// rustc is told) the report must print demangled, as perf does.  Built by the test
// itself with the rustc it finds (none is a Debian package of the build).
use std::hint::black_box;
use std::time::{Duration, Instant};

pub mod outer {
    pub struct Thing(pub u64);

    impl Thing {
        #[inline(never)]
        pub fn spin(&self, n: u64) -> u64 {
            let mut a = self.0;
            for i in 0..n {
                a = a.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            a
        }
    }
}

#[inline(never)]
fn generic<T: Into<u64>>(x: T, secs: f64) -> u64 {
    let t = outer::Thing(x.into());
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut a = 0;
    while Instant::now() < end {
        a ^= t.spin(black_box(200000));
    }
    a
}

fn main() {
    let secs = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    println!("{}", generic(black_box(5u32), secs));
}
