//! Tiers: what an evaluation context may do with the knowledge base. The
//! one list of their names and levels; every face (command line, WIT
//! interface, browser) converts through it.

/// What an evaluation context may do with the knowledge base.
///
/// Lower is more: the system tier may do everything, read-write everything
/// but move the current version, read-only only read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Tier {
    /// T0: the operator's own command line or REPL.
    System = 0,
    /// T1: scripts, `arb:eval`, agent sessions.
    #[default]
    ReadWrite = 1,
    /// T2: `arb:eval-readonly` and read-only sessions.
    ReadOnly = 2,
}

impl Tier {
    /// Every tier, most rights first (index = level), with its name.
    pub const ALL: [(Tier, &'static str); 3] = [
        (Tier::System, "system"),
        (Tier::ReadWrite, "read-write"),
        (Tier::ReadOnly, "read-only"),
    ];

    /// 0, 1 or 2: the number after `T` in T0, T1, T2.
    pub fn level(self) -> u8 {
        self as u8
    }

    pub fn from_level(level: u8) -> Option<Tier> {
        Tier::ALL.get(level as usize).map(|(t, _)| *t)
    }

    /// The name used on command lines, in messages and across every
    /// boundary: "system", "read-write" or "read-only".
    pub fn as_str(self) -> &'static str {
        Tier::ALL[self as usize].1
    }

    /// A tier by its name or as `T0`/`T1`/`T2` (either case).
    pub fn from_name(name: &str) -> Option<Tier> {
        if let Some((t, _)) = Tier::ALL.iter().find(|(_, n)| *n == name) {
            return Some(*t);
        }
        let level = name.strip_prefix(['T', 't'])?;
        match level {
            "0" | "1" | "2" => Tier::from_level(level.as_bytes()[0] - b'0'),
            _ => None,
        }
    }

    /// What code in this tier may do, in a few words (for `--help` and
    /// the like).
    pub fn rights(self) -> &'static str {
        match self {
            Tier::System => "Everything, including moving the current version (arb:switch-version)",
            Tier::ReadWrite => "Read and commit changes, but not move the current version",
            Tier::ReadOnly => "Only read; nothing is ever written to the store",
        }
    }

    /// The error text for a name [`Tier::from_name`] does not know.
    pub fn unknown_name(name: &str) -> String {
        format!("unknown tier {name:?}: expected \"system\", \"read-write\" or \"read-only\" (or T0, T1, T2)")
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Tier;

    #[test]
    fn names_and_levels_round_trip() {
        for (i, (t, name)) in Tier::ALL.iter().enumerate() {
            assert_eq!(t.level() as usize, i);
            assert_eq!(Tier::from_level(i as u8), Some(*t));
            assert_eq!(Tier::from_name(name), Some(*t));
            assert_eq!(Tier::from_name(&format!("T{i}")), Some(*t));
            assert_eq!(Tier::from_name(&format!("t{i}")), Some(*t));
            assert_eq!(t.to_string(), *name);
        }
        assert_eq!(Tier::from_level(3), None);
        for bad in ["", "T", "T3", "T01", "root", "System"] {
            assert_eq!(Tier::from_name(bad), None, "{bad}");
        }
        assert!(Tier::System < Tier::ReadWrite && Tier::ReadWrite < Tier::ReadOnly);
    }
}
