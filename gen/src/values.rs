//! The value kinds a build writes, as a set ([`Values`]): WLD always, and any others (DTW
//! today). A new kind is a variant of [`ValueKind`] (dtb-probe, the file format); the
//! `match`es over it here, in the build, the writer, the verifier and the forecast stop
//! compiling until each says what the new kind needs.

use dtb_probe::internal::format::ValueKind;

/// Every value kind, in the order files are named and written (WLD first).
pub const ALL: [ValueKind; 3] = [ValueKind::Wld, ValueKind::Dtw, ValueKind::Dtc];

/// The place of `k` in [`ALL`] (a new kind fails to compile here: add it to [`ALL`] too).
const fn bit(k: ValueKind) -> u8 {
    match k {
        ValueKind::Wld => 1 << 0,
        ValueKind::Dtw => 1 << 1,
        ValueKind::Dtc => 1 << 2,
    }
}

/// A set of value kinds that contains WLD: what a build writes, one file per kind and slice.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Values(u8);

impl Values {
    /// WLD files only: the build keeps solved slices as outcomes, 2 bits a position
    /// (`dtb gen --values wld`, or `--wld-only`).
    pub const WLD: Values = Values(bit(ValueKind::Wld));
    /// WLD and DTW files (`dtb gen`'s default).
    pub const WLD_DTW: Values = Values(bit(ValueKind::Wld) | bit(ValueKind::Dtw));
    /// WLD and DTC files (`dtb gen --values dtc`): distances to conversion under the plan's
    /// count profile, and the game-theoretic WLD from the same solve.
    pub const WLD_DTC: Values = Values(bit(ValueKind::Wld) | bit(ValueKind::Dtc));

    /// This set and `k`.
    pub const fn with(self, k: ValueKind) -> Values {
        Values(self.0 | bit(k))
    }

    /// Whether `k` is written.
    pub const fn contains(self, k: ValueKind) -> bool {
        self.0 & bit(k) != 0
    }

    /// The kinds, WLD first.
    pub fn iter(self) -> impl Iterator<Item = ValueKind> {
        ALL.into_iter().filter(move |&k| self.contains(k))
    }

    /// Whether the solver must find exact distances to the end of the game: then it keeps
    /// every position's DTW code (16 bits a position; finished slices too), otherwise the
    /// outcome alone (the grouped WLD solver, 2 bits a position, threat positions "don't
    /// care" in version 3 files).
    pub fn solves_distances(self) -> bool {
        self.distance().is_some()
    }

    /// The kind of distance the solver finds, if any: DTW (to the end of the game) or DTC
    /// (to conversion under a count profile). A set holds one at most
    /// ([`std::str::FromStr`] refuses both).
    pub fn distance(self) -> Option<ValueKind> {
        self.iter().find(|k| match k {
            ValueKind::Wld => false,
            ValueKind::Dtw | ValueKind::Dtc => true,
        })
    }

    /// The kinds as the command line writes them: `wld,dtw`.
    pub fn names(self) -> String {
        self.iter()
            .map(ValueKind::extension)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Values({})", self.names())
    }
}

impl std::fmt::Display for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.names())
    }
}

impl std::str::FromStr for Values {
    type Err = String;

    /// Kinds by their file extensions, comma-separated, in any order and any case (`wld,dtw`,
    /// `dtw`, `DTW`); WLD is always written, named or not.
    fn from_str(s: &str) -> Result<Values, String> {
        let known = || {
            ALL.iter()
                .map(|k| k.extension())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut v = Values::WLD;
        for name in s.split(',').map(str::trim) {
            let Some(k) = ALL
                .into_iter()
                .find(|k| k.extension().eq_ignore_ascii_case(name))
            else {
                let shown: String = name.chars().take(20).collect();
                return Err(format!(
                    "no value kind '{shown}'; the kinds are {} (comma-separated)",
                    known()
                ));
            };
            v = v.with(k);
        }
        if v.contains(ValueKind::Dtw) && v.contains(ValueKind::Dtc) {
            return Err(
                "dtw and dtc are solved apart (one kind of distance a build): run \
                        `dtb gen` once with --values dtw and once with --values dtc into the \
                        same directory"
                    .to_string(),
            );
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_parse_print_and_say_whether_distances_are_solved() {
        assert_eq!("wld".parse::<Values>(), Ok(Values::WLD));
        assert_eq!("dtw".parse::<Values>(), Ok(Values::WLD_DTW));
        assert_eq!("dtw, wld".parse::<Values>(), Ok(Values::WLD_DTW));
        // Any case, as `mtc` is taken (cli's `--values`).
        assert_eq!("DTW".parse::<Values>(), Ok(Values::WLD_DTW));
        assert_eq!("Wld,Dtc".parse::<Values>(), Ok(Values::WLD_DTC));
        assert_eq!(Values::WLD_DTW.to_string(), "wld,dtw");
        assert_eq!(Values::WLD.iter().collect::<Vec<_>>(), [ValueKind::Wld]);
        assert!(!Values::WLD.solves_distances());
        assert!(Values::WLD_DTW.solves_distances());
        assert!(Values::WLD.with(ValueKind::Dtw) == Values::WLD_DTW);
        let e = "wld,dtz".parse::<Values>().unwrap_err();
        assert_eq!(
            e,
            "no value kind 'dtz'; the kinds are wld, dtw, dtc (comma-separated)"
        );
        assert_eq!("dtc".parse::<Values>(), Ok(Values::WLD_DTC));
        assert_eq!(Values::WLD_DTC.distance(), Some(ValueKind::Dtc));
        assert_eq!(Values::WLD_DTW.distance(), Some(ValueKind::Dtw));
        assert_eq!(Values::WLD.distance(), None);
        assert!("dtw,dtc".parse::<Values>().unwrap_err().contains("apart"));
        assert!("".parse::<Values>().is_err());
        let long = "x".repeat(10_000);
        assert!(long.parse::<Values>().unwrap_err().len() < 100);
    }
}
