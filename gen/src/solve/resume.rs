//! Resuming a slice mid-way. A slice of a spilling WLD-only build keeps its outcomes and
//! capture flags in scratch files mapped from disk ([`super::MappedResults`]); the grouped
//! solver finishes them one round (one potential) at a time, and a round only writes its own
//! groups' index ranges. So after a round, with the files' pages written to disk, a small
//! record (`solving-<slice>.json` beside them) can say "rounds `0..k` are final": a run
//! stopped at any moment (even by `SIGKILL`) loses at most the rounds after the last record,
//! and the next run maps the same files again and starts at round `k`.
//!
//! The record names everything the files depend on: the rules, the slice, the positions a
//! side and the number of groups of every round (so a solver that ordered its rounds
//! differently does not take another's files). A record that does not match, or files of
//! the wrong length, start the slice afresh. The record is written whole to a temporary
//! name and renamed, and only after the files were flushed: it never claims more than the
//! files hold. It goes when the solve returns, before anyone changes the values in place.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dtb_probe::internal::material::Material;
use dtb_probe::internal::rules::Rules;

use crate::words::WordFile;

/// Where a slice solved in rounds stands when a run starts or writes a record.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Progress {
    /// Rounds (in the solver's order, highest potential first) whose groups are final.
    pub rounds_done: usize,
    /// Wins, losses and draws of those rounds, per side.
    pub counts: [[u64; 3]; 2],
    /// Most propagation levels of a group in those rounds.
    pub levels: usize,
    /// Solving time of the earlier runs that finished those rounds, in seconds.
    pub seconds: f64,
    /// Threat positions those rounds found, per side (a solver that finds them).
    pub threats: [u64; 2],
}

/// The checkpoints of one slice: its record file, and the mapped files the record speaks
/// for.
pub(crate) struct Checkpoint {
    record: PathBuf,
    identity: String,
    files: Vec<Arc<WordFile>>,
    /// What the record on disk said when the run started (`None`: a fresh start).
    found: Option<(Vec<usize>, Progress)>,
    started: Instant,
    last: Instant,
    /// The least time between two records: a record flushes the slice's files, which costs
    /// little when most of their pages were written back already, but not nothing.
    every: Duration,
}

impl Checkpoint {
    /// What names slice `m` (`n` positions a side) under `rules` in a record: a record of
    /// another slice, rule set or size is not taken over.
    pub(crate) fn identity(rules: &Rules, m: Material, n: u64) -> String {
        format!("{rules:?} slice {m} positions {n}")
    }

    /// The checkpoints of the slice named by `identity` ([`Checkpoint::identity`]), recorded
    /// at `record`, over the mapped `files`, recording at most once every `every`; `resume`:
    /// read what a stopped run recorded there (the files were mapped again as they were),
    /// otherwise start afresh (they are new and zero) and remove any old record.
    pub(crate) fn new(
        identity: String,
        record: PathBuf,
        files: Vec<Arc<WordFile>>,
        resume: bool,
        every: Duration,
    ) -> Checkpoint {
        let found = if resume {
            read_record(&record, &identity)
        } else {
            let _ = std::fs::remove_file(&record);
            None
        };
        let now = Instant::now();
        Checkpoint {
            record,
            identity,
            files,
            found,
            started: now,
            last: now,
            every,
        }
    }

    /// Whether the record at `record` was made for `identity` (a stopped run's files are
    /// worth mapping again).
    pub(crate) fn resumable(identity: &str, record: &Path) -> bool {
        read_record(record, identity).is_some()
    }

    /// Where the slice stands, given the number of groups of each of its rounds: what the
    /// record says if it was made for these rounds, otherwise nothing done (and the caller
    /// must clear the files, which then hold another run's values).
    pub(crate) fn start(&self, rounds: &[usize]) -> Option<Progress> {
        match &self.found {
            Some((r, p)) if r == rounds && p.rounds_done <= rounds.len() => Some(p.clone()),
            _ => None,
        }
    }

    /// Whether [`Checkpoint::start`] found files of another run to clear.
    pub(crate) fn found_other(&self, rounds: &[usize]) -> bool {
        self.found.is_some() && self.start(rounds).is_none()
    }

    /// After a round: if a minute has passed since the last record, flush the files and
    /// record `done` (its `seconds` those of earlier runs; this run's are added).
    ///
    /// # Errors
    /// Flushing a file or writing the record (the path, the error).
    pub(crate) fn after_round(
        &mut self,
        rounds: &[usize],
        done: &Progress,
    ) -> Result<(), (PathBuf, std::io::Error)> {
        if self.last.elapsed() < self.every || done.rounds_done >= rounds.len() {
            return Ok(());
        }
        for f in &self.files {
            f.flush().map_err(|e| (f.path().to_path_buf(), e))?;
        }
        let record = serde_json::json!({
            "identity": self.identity,
            "rounds": rounds,
            "rounds_done": done.rounds_done,
            "counts": done.counts,
            "levels": done.levels,
            "threats": done.threats,
            "seconds": done.seconds + self.started.elapsed().as_secs_f64(),
        });
        let tmp = self.record.with_extension("json.tmp");
        std::fs::write(&tmp, record.to_string())
            .and_then(|()| std::fs::rename(&tmp, &self.record))
            .map_err(|e| (self.record.clone(), e))?;
        self.last = Instant::now();
        Ok(())
    }

    /// The solve is over: the record goes (the values may change in place from now on).
    pub(crate) fn finish(self) {
        let _ = std::fs::remove_file(&self.record);
    }
}

/// What the record at `path` says, if it exists, parses and was made for `identity`.
fn read_record(path: &Path, identity: &str) -> Option<(Vec<usize>, Progress)> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    if v.get("identity")?.as_str()? != identity {
        return None;
    }
    let uint = |x: &serde_json::Value| x.as_u64();
    let rounds = v
        .get("rounds")?
        .as_array()?
        .iter()
        .map(|x| uint(x).and_then(|x| usize::try_from(x).ok()))
        .collect::<Option<Vec<usize>>>()?;
    let mut counts = [[0u64; 3]; 2];
    let sides = v.get("counts")?.as_array()?;
    if sides.len() != 2 {
        return None;
    }
    for (side, c) in counts.iter_mut().zip(sides) {
        let c = c.as_array()?;
        if c.len() != 3 {
            return None;
        }
        for (x, y) in side.iter_mut().zip(c) {
            *x = uint(y)?;
        }
    }
    // Threat counts: absent from the records of a solver that does not find them.
    let mut threats = [0u64; 2];
    if let Some(t) = v.get("threats") {
        let t = t.as_array()?;
        if t.len() != 2 {
            return None;
        }
        for (x, y) in threats.iter_mut().zip(t) {
            *x = uint(y)?;
        }
    }
    let progress = Progress {
        rounds_done: usize::try_from(uint(v.get("rounds_done")?)?).ok()?,
        counts,
        levels: usize::try_from(uint(v.get("levels")?)?).ok()?,
        seconds: v.get("seconds")?.as_f64().filter(|s| *s >= 0.0)?,
        threats,
    };
    Some((rounds, progress))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    /// A record written after a round reads back for the same rules, slice and rounds, and
    /// for nothing else; a damaged one reads as none.
    #[test]
    fn a_record_reads_back_only_for_what_it_was_made_for() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("solving-1111.json");
        let m = Material::parse("1111").unwrap();
        let rounds = vec![1, 4, 9, 4, 1];
        let mut c = Checkpoint::new(
            Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            record.clone(),
            vec![],
            false,
            MINUTE,
        );
        assert_eq!(c.start(&rounds), None);
        c.every = Duration::ZERO;
        let done = Progress {
            rounds_done: 2,
            counts: [[1, 2, 3], [4, 5, 6]],
            levels: 7,
            seconds: 10.0,
            threats: [8, 9],
        };
        c.after_round(&rounds, &done).unwrap();
        let again = Checkpoint::new(
            Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            record.clone(),
            vec![],
            true,
            MINUTE,
        );
        let p = again.start(&rounds).unwrap();
        assert_eq!((p.rounds_done, p.counts, p.levels), (2, done.counts, 7));
        assert_eq!(p.threats, [8, 9]);
        assert!(p.seconds >= 10.0, "{p:?}");
        assert!(!again.found_other(&rounds));
        // Other rounds, rules, slice or size: nothing to resume.
        assert_eq!(again.start(&[1, 4, 9, 4]), None);
        assert!(again.found_other(&[1, 4, 9, 4]));
        assert!(Checkpoint::resumable(
            &Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            &record
        ));
        assert!(!Checkpoint::resumable(
            &Checkpoint::identity(&Rules::ENGLISH, m, 1001),
            &record
        ));
        assert!(!Checkpoint::resumable(
            &Checkpoint::identity(&Rules::INTERNATIONAL, m, 1000),
            &record
        ));
        let other = Material::parse("1112").unwrap();
        assert!(!Checkpoint::resumable(
            &Checkpoint::identity(&Rules::ENGLISH, other, 1000),
            &record
        ));
        // Another solver's record of the same slice.
        let bits = format!(
            "{} bit-parallel",
            Checkpoint::identity(&Rules::ENGLISH, m, 1000)
        );
        assert!(!Checkpoint::resumable(&bits, &record));
        // A torn or foreign record is none.
        let text = std::fs::read_to_string(&record).unwrap();
        std::fs::write(&record, &text[..text.len() / 2]).unwrap();
        assert!(!Checkpoint::resumable(
            &Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            &record
        ));
        std::fs::write(&record, text.replace("\"levels\":7", "\"levels\":-7")).unwrap();
        assert!(!Checkpoint::resumable(
            &Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            &record
        ));
        // Within a minute of the last record, and after the last round, nothing is written.
        let mut c = Checkpoint::new(
            Checkpoint::identity(&Rules::ENGLISH, m, 1000),
            record.clone(),
            vec![],
            false,
            MINUTE,
        );
        assert!(!record.exists(), "a fresh start removes the old record");
        c.after_round(&rounds, &done).unwrap();
        assert!(!record.exists());
        c.every = Duration::ZERO;
        let all = Progress {
            rounds_done: 5,
            ..done.clone()
        };
        c.after_round(&rounds, &all).unwrap();
        assert!(!record.exists());
        c.after_round(&rounds, &done).unwrap();
        assert!(record.exists());
        c.finish();
        assert!(!record.exists());
    }
}
