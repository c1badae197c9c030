//! `dtb variants`: the presets and their rule fields in words, and the overrides
//! `--variant` takes.

use std::process::ExitCode;

use anyhow::Result;
use dtb_probe::internal::variant::FIELDS;
use dtb_probe::{CountProfile, Rules};
use serde_json::json;

/// A limit in plies as moves each (`80` -> `40`, `25` -> `12.5`).
fn moves(plies: u16) -> serde_json::Value {
    if plies.is_multiple_of(2) {
        json!(plies / 2)
    } else {
        json!(f64::from(plies) / 2.0)
    }
}

/// `rules`' count profile as JSON: `{"rule": bool, "source", "regimes": [{"name",
/// "material", "limit_plies", "limit_moves", "resets"}]}` (limits null where a regime has
/// none).
fn count_json(rules: &Rules) -> serde_json::Value {
    let p = CountProfile::for_rules(rules);
    let source = CountProfile::preset_for(rules).map(|c| c.source);
    let regimes: Vec<_> = p
        .regimes()
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "material": r.material_words,
                "limit_plies": r.limit,
                "limit_moves": r.limit.map(moves),
                "resets": r.resets.words(),
            })
        })
        .collect();
    json!({"rule": !p.is_none(), "source": source, "regimes": regimes})
}

/// `rules`' count profile in lines of text.
fn count_lines(rules: &Rules) -> Vec<String> {
    let p = CountProfile::for_rules(rules);
    let mut out = Vec::new();
    if p.is_none() {
        out.push("  count                  no count rule (game-theoretic values only)".into());
        return out;
    }
    out.push("  count".into());
    for r in p.regimes() {
        let limit = match r.limit {
            Some(l) => format!("{l} plies ({} moves each)", moves(l)),
            None => "no limit".into(),
        };
        out.push(format!(
            "    {:<20} {limit}; {}; reset by {}",
            r.name,
            r.material_words,
            r.resets.words()
        ));
    }
    if let Some(c) = CountProfile::preset_for(rules) {
        out.push(format!("    source: {}", c.source));
    }
    out
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The same as one JSON object: {"presets": [{"name", "fields": {FIELD: VALUE}, "count":
    /// {"rule", "source", "regimes": [{"name", "material", "limit_plies", "limit_moves",
    /// "resets"}]}}], "fields": [{"field", "row", "values"}]}.
    #[arg(long)]
    json: bool,
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    if a.json {
        let presets: Vec<_> = Rules::PRESETS
            .iter()
            .map(|r| {
                let fields: serde_json::Map<String, serde_json::Value> = r
                    .fields()
                    .iter()
                    .map(|(k, v)| (k.to_string(), json!(v)))
                    .collect();
                json!({"name": r.name, "fields": fields, "count": count_json(r)})
            })
            .collect();
        let fields: Vec<_> = FIELDS
            .iter()
            .map(|f| json!({"field": f.key, "row": f.row, "values": f.values}))
            .collect();
        outln!("{}", json!({"presets": presets, "fields": fields}));
        return Ok(ExitCode::SUCCESS);
    }
    for r in Rules::PRESETS {
        outln!("{}", r.name);
        for (f, (key, value)) in FIELDS.iter().zip(r.fields()) {
            outln!("  {key:<22} {value:<24} ({})", f.row);
        }
        for line in count_lines(r) {
            outln!("{line}");
        }
    }
    outln!("");
    outln!("--variant PRESET[,FIELD=VALUE]... changes fields of a preset, each at most once:");
    for f in &FIELDS {
        outln!("  {:<22} {}", f.key, f.values.join(" | "));
    }
    outln!(
        "  {:<22} PLIES | REGIME:PLIES,... | none (limits in plies, half-moves; the regimes \
         above; WLD and DTW values ignore it)",
        "count"
    );
    Ok(ExitCode::SUCCESS)
}
