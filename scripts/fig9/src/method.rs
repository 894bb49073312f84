// SPDX-License-Identifier: GPL-2.0

//! The experiment itself, as data: the curves, the times the callouts are set for, the values
//! of n, and the geometry each instance gets. Nothing here touches the device.

use crate::uapi_defs::*;

/// The n callouts are due at random in `[FAR_LO, FAR_HI)` ticks: "far in the future", and so
/// far that no measurement (nor [`TICK_LIMIT`] ticks of bookkeeping) reaches them.
pub const FAR_LO: u64 = 1 << 19;
pub const FAR_HI: u64 = 1 << 20;
/// The reset timer goes to `[RESET_MIN, RESET_MIN + RESET_SPREAD)`: farther than all of them.
/// These are also TW_IOC_BENCH's `min_ticks` and `spread`; the kernel's own timers (timer_list,
/// hrtimer) then sit in `[RESET_MIN / 2, RESET_MIN)` = `[FAR_LO, FAR_HI)`, the same range.
pub const RESET_MIN: u64 = FAR_HI;
pub const RESET_SPREAD: u64 = FAR_HI;
/// Scheme 4 accepts intervals up to MaxInterval = its slot count: the farthest reset deadline.
pub const SCHEME4_SLOTS: u32 = (RESET_MIN + RESET_SPREAD) as u32;
const _: () = assert!(SCHEME4_SLOTS <= TW_MAX_SLOTS);
/// Ticks of bookkeeping one instance may run before the first callout could fall due.
pub const TICK_LIMIT: u64 = FAR_LO / 2;
const _: () = assert!(TICK_LIMIT < FAR_LO && RESET_MIN >= FAR_HI);
/// Room above n: the reset timer, and the kernel bench's own.
const HEADROOM: u64 = 16;
/// Capacities are rounded up to a multiple of this.
const CAPACITY_STEP: u64 = 64;

/// `(func, arg)` of the legacy interface: opaque to the module, but distinct per callout.
/// Filler i is `(FILLER_FUNC + (i % FILLER_FUNCS) * 0x40, i)`; the reset timer is
/// `(RESET_FUNC, 0)`.
pub const FILLER_FUNC: u64 = 0xf19f_0000_0000_0000;
pub const FILLER_FUNCS: u64 = 8;
pub const RESET_FUNC: u64 = 0xf19e_0000_0000_0000;

/// How a curve reaches its timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Api {
    /// setcallout/unsetcallout: the new interface, with handles.
    Setcallout,
    /// timeout/untimeout: the old interface, `(func, arg)` looked up through a hash.
    Timeout,
    /// The paper's reset in place (`mod_timer`): TW_IOC_RESET on a handle, which keeps it.
    Mod,
}

impl Api {
    /// The interface the n callouts are set through (a reset in place moves a handle).
    pub fn populate(self) -> Api {
        match self {
            Api::Timeout => Api::Timeout,
            Api::Setcallout | Api::Mod => Api::Setcallout,
        }
    }

    /// The TW_IOC_BENCH kind timing this interface's reset.
    pub fn bench_kind(self) -> u32 {
        match self {
            Api::Setcallout => TW_BENCH_SETCALLOUT,
            Api::Timeout => TW_BENCH_TIMEOUT,
            Api::Mod => TW_BENCH_MOD,
        }
    }
}

/// What a curve measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A scheme of the module, through one of its two interfaces.
    Facility { scheme: u32, api: Api },
    /// A timer of the Linux kernel, timed in the kernel only (TW_BENCH_TIMER_LIST, _HRTIMER).
    Kernel { kind: u32 },
}

/// One line of the figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Curve {
    pub name: &'static str,
    pub target: Target,
}

const fn facility(name: &'static str, scheme: u32, api: Api) -> Curve {
    Curve {
        name,
        target: Target::Facility { scheme, api },
    }
}

const fn linux(name: &'static str, kind: u32) -> Curve {
    Curve {
        name,
        target: Target::Kernel { kind },
    }
}

/// Every curve, in legend order: the paper's three first, then the other schemes, then Linux.
/// `-mod` is the reset in place (the paper's reset; Linux's `mod_timer` on a pending timer)
/// beside the cancel + start of the same structure.
pub const CURVES: [Curve; 14] = [
    facility("bsd-traditional", TW_SCHEME_ORDERED_LIST, Api::Timeout),
    facility("scheme6-timeout", TW_SCHEME_HASHED_UNSORTED, Api::Timeout),
    facility(
        "scheme6-setcallout",
        TW_SCHEME_HASHED_UNSORTED,
        Api::Setcallout,
    ),
    facility("scheme6-mod", TW_SCHEME_HASHED_UNSORTED, Api::Mod),
    facility("scheme7-timeout", TW_SCHEME_HIERARCHICAL, Api::Timeout),
    facility(
        "scheme7-setcallout",
        TW_SCHEME_HIERARCHICAL,
        Api::Setcallout,
    ),
    facility("scheme7-mod", TW_SCHEME_HIERARCHICAL, Api::Mod),
    facility("scheme1-setcallout", 1, Api::Setcallout),
    facility("scheme3-setcallout", 3, Api::Setcallout),
    facility("scheme4-setcallout", TW_SCHEME_BASIC_WHEEL, Api::Setcallout),
    facility(
        "scheme5-setcallout",
        TW_SCHEME_HASHED_SORTED,
        Api::Setcallout,
    ),
    linux("linux-timer_list", TW_BENCH_TIMER_LIST),
    linux("linux-timer_list-mod", TW_BENCH_TIMER_LIST_MOD),
    linux("linux-hrtimer", TW_BENCH_HRTIMER),
];

/// The n the README's comparison rests on: measured for the [`Curve::is_key`] curves even where
/// the time budget has stopped them.
pub const KEY_NS: [u64; 2] = [1000, 1_000_000];

/// The comparisons with Linux also measured in pairs at [`KEY_NS`]: the module's curve and
/// Linux's, in one TW_IOC_BENCH_PAIR that alternates them a millisecond at a time (the measure
/// [`PAIR`]), so that their ratio does not rest on the machine's speed at two moments.
pub const PAIRS: [(&str, &str); 5] = [
    ("scheme7-mod", "linux-timer_list-mod"),
    ("scheme7-mod", "linux-hrtimer"),
    ("scheme7-setcallout", "linux-timer_list"),
    ("scheme6-mod", "linux-timer_list-mod"),
    ("scheme6-setcallout", "linux-timer_list"),
];

/// The measure of the rows of [`PAIRS`] in fig9.csv.
pub const PAIR: &str = "pair";

/// The note of a row of measure [`PAIR`]: the curve of the other half of its pair.
pub fn pair_note(other: &str) -> String {
    format!("with {other}")
}

/// The two n the flatness is taken between, `(low, high)`, among the sweep's `ns`: the smallest
/// key n and the largest n of the sweep up to the largest key n (1e6, or where a shorter sweep
/// ends: 1e4 with `--quick`). `fig9 run` measures the key curves at both back to back, each
/// repeat at the low n just before the same repeat at the high one, so that a drift of the
/// machine between two points of the sweep, minutes apart, does not show as a slope. None when
/// the sweep has no n above the smallest key n (`--max-n 1000`) or does not reach it.
pub fn key_pair(ns: &[u64]) -> Option<(u64, u64)> {
    let lo = KEY_NS[0];
    let top = KEY_NS[KEY_NS.len() - 1];
    let hi = ns.iter().copied().filter(|&n| n > lo && n <= top).max()?;
    ns.contains(&lo).then_some((lo, hi))
}

/// The curves whose per-tick bookkeeping is measured too.
pub const TICK_CURVES: [&str; 2] = ["scheme6-setcallout", "scheme7-setcallout"];

impl Curve {
    /// The `interface` column: setcallout, timeout, or in-kernel.
    pub fn interface(&self) -> &'static str {
        match self.target {
            Target::Facility {
                api: Api::Setcallout,
                ..
            } => "setcallout",
            Target::Facility {
                api: Api::Timeout, ..
            } => "timeout",
            Target::Facility { api: Api::Mod, .. } => "reset",
            Target::Kernel { .. } => "in-kernel",
        }
    }

    /// Whether the README's comparison rests on this curve: schemes 6 and 7 and Linux.
    pub fn is_key(&self) -> bool {
        match self.target {
            Target::Facility { scheme, .. } => {
                scheme == TW_SCHEME_HASHED_UNSORTED || scheme == TW_SCHEME_HIERARCHICAL
            }
            Target::Kernel { .. } => true,
        }
    }

    /// The curve called `name`.
    pub fn by_name(name: &str) -> Option<Curve> {
        CURVES.iter().copied().find(|c| c.name == name)
    }
}

/// The values of n: 0, then log-spaced up to `max_n` (which is always included).
///
/// Full: 0, 1, 10, 100, then 1 and 3 of each decade. Quick: 0, 10, 100, 1000, 10000.
pub fn sweep(max_n: u64, quick: bool) -> Vec<u64> {
    let mut ns = vec![0];
    let mut decade = 1u64;
    while decade <= max_n {
        let steps: &[u64] = if quick || decade < 1000 {
            &[1]
        } else {
            &[1, 3]
        };
        for &s in steps {
            let n = s * decade;
            let wanted = !quick || (10..=10_000).contains(&n);
            if n <= max_n && wanted {
                ns.push(n);
            }
        }
        decade = match decade.checked_mul(10) {
            Some(d) => d,
            None => break,
        };
    }
    if *ns.last().unwrap_or(&0) != max_n {
        ns.push(max_n);
    }
    ns
}

/// The capacity of an instance for n callouts: n plus headroom, rounded up.
pub fn capacity_for(n: u64) -> u64 {
    (n + HEADROOM).div_ceil(CAPACITY_STEP) * CAPACITY_STEP
}

/// The largest capacity `scheme` accepts.
pub fn max_capacity(scheme: u32) -> u32 {
    if scheme == 1 {
        TW_MAX_CAPACITY_SCHEME1
    } else {
        TW_MAX_CAPACITY
    }
}

/// TW_IOC_CONFIGURE for `scheme` with room for n callouts: a manual clock, so nothing fires
/// (and the kernel runs instance benches on no other).
pub fn config_for(scheme: u32, n: u64, slots: u32) -> tw_config {
    tw_config {
        scheme,
        clock: TW_CLOCK_MANUAL,
        capacity: capacity_for(n) as u32,
        slots: match scheme {
            TW_SCHEME_BASIC_WHEEL => SCHEME4_SLOTS,
            TW_SCHEME_HASHED_SORTED | TW_SCHEME_HASHED_UNSORTED => slots,
            _ => 0,
        },
        ..tw_config::default()
    }
}

/// The random deadlines: the tree's one generator, from the wheel crate.
pub use wheel::rng::Rng;

/// A seed per curve and n, so that each point is reproducible on its own.
pub fn seed_for(base: u64, curve: &str, n: u64) -> u64 {
    // FNV-1a over the name.
    let h = curve.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    base ^ h ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_sweep_is_log_spaced_from_zero_to_a_million() {
        assert_eq!(
            sweep(1_000_000, false),
            vec![0, 1, 10, 100, 1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
        );
    }

    #[test]
    fn quick_sweep_is_five_points() {
        assert_eq!(sweep(10_000, true), vec![0, 10, 100, 1000, 10_000]);
        assert_eq!(sweep(1000, true), vec![0, 10, 100, 1000]);
    }

    #[test]
    fn max_n_off_the_grid_is_still_the_last_point() {
        assert_eq!(sweep(5000, false), vec![0, 1, 10, 100, 1000, 3000, 5000]);
        assert_eq!(sweep(0, false), vec![0]);
        assert_eq!(sweep(2_000_000, false).last(), Some(&2_000_000));
    }

    #[test]
    fn every_sweep_is_strictly_increasing() {
        for max in [0, 1, 7, 99, 12_345, 4_000_000] {
            for quick in [false, true] {
                let s = sweep(max, quick);
                assert!(s.windows(2).all(|w| w[0] < w[1]), "{max} {quick}: {s:?}");
            }
        }
    }

    #[test]
    fn capacity_has_headroom_and_is_rounded() {
        assert_eq!(capacity_for(0), 64);
        assert_eq!(capacity_for(48), 64);
        assert_eq!(capacity_for(49), 128);
        assert_eq!(capacity_for(1_000_000), 1_000_064);
        assert!(capacity_for(1_000_000) <= TW_MAX_CAPACITY as u64);
        // Scheme 1: 3e4 fits, 1e5 does not.
        assert!(capacity_for(30_000) <= max_capacity(1) as u64);
        assert!(capacity_for(100_000) > max_capacity(1) as u64);
    }

    #[test]
    fn scheme4_covers_the_farthest_reset() {
        let c = config_for(TW_SCHEME_BASIC_WHEEL, 10, 4096);
        assert!(c.slots as u64 >= RESET_MIN + RESET_SPREAD - 1);
        assert_eq!(config_for(6, 10, 4096).slots, 4096);
        assert_eq!(config_for(7, 10, 4096).slots, 0);
        assert_eq!(config_for(6, 10, 4096).clock, TW_CLOCK_MANUAL);
    }

    #[test]
    fn rng_range_and_shuffle() {
        let mut r = Rng::new(1);
        for _ in 0..10_000 {
            let x = r.range(FAR_LO, FAR_HI);
            assert!((FAR_LO..FAR_HI).contains(&x));
        }
        let mut v: Vec<u32> = (0..100).collect();
        r.shuffle(&mut v);
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn curve_names_are_unique_and_found() {
        for c in CURVES {
            assert_eq!(Curve::by_name(c.name), Some(c));
        }
        for t in TICK_CURVES {
            assert!(Curve::by_name(t).is_some());
        }
        assert_eq!(
            Curve::by_name("bsd-traditional").unwrap().interface(),
            "timeout"
        );
        assert_eq!(
            Curve::by_name("linux-hrtimer").unwrap().interface(),
            "in-kernel"
        );
        assert_eq!(Curve::by_name("scheme7-mod").unwrap().interface(), "reset");
    }

    #[test]
    fn the_readme_rests_on_schemes_6_and_7_and_linux() {
        let key: Vec<&str> = CURVES
            .iter()
            .filter(|c| c.is_key())
            .map(|c| c.name)
            .collect();
        assert_eq!(key.len(), 9, "{key:?}");
        assert!(!Curve::by_name("bsd-traditional").unwrap().is_key());
        assert!(!Curve::by_name("scheme5-setcallout").unwrap().is_key());
        for n in KEY_NS {
            assert!(sweep(1_000_000, false).contains(&n));
        }
    }

    #[test]
    fn the_key_pair_is_the_widest_the_sweep_allows_up_to_the_key_n() {
        assert_eq!(key_pair(&sweep(1_000_000, false)), Some((1000, 1_000_000)));
        assert_eq!(key_pair(&sweep(4_000_000, false)), Some((1000, 1_000_000)));
        assert_eq!(key_pair(&sweep(300_000, false)), Some((1000, 300_000)));
        assert_eq!(key_pair(&sweep(10_000, true)), Some((1000, 10_000)));
        // A quick sweep past 1e6 jumps from 1e4 to max_n: the pair stays within the key n.
        assert_eq!(key_pair(&sweep(100_000_000, true)), Some((1000, 10_000)));
        assert_eq!(key_pair(&sweep(1000, false)), None);
        assert_eq!(key_pair(&sweep(1000, true)), None);
        assert_eq!(key_pair(&sweep(500, false)), None);
        assert_eq!(KEY_NS[0], KEY_NS.into_iter().min().unwrap());
        assert_eq!(KEY_NS[1], KEY_NS.into_iter().max().unwrap());
    }

    #[test]
    fn a_reset_in_place_moves_a_handle() {
        assert_eq!(Api::Mod.populate(), Api::Setcallout);
        assert_eq!(Api::Mod.bench_kind(), TW_BENCH_MOD);
        assert_eq!(Api::Timeout.populate(), Api::Timeout);
    }
}
