//! `dtb variants`: the presets and their rule fields in words, and the overrides
//! `--variant` takes.

use std::process::ExitCode;

use anyhow::Result;
use dtb_probe::internal::variant::FIELDS;
use dtb_probe::Rules;
use serde_json::json;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The same as one JSON object: {"presets": [{"name", "fields": {FIELD: VALUE}}],
    /// "fields": [{"field", "row", "values"}]}.
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
                json!({"name": r.name, "fields": fields})
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
    }
    outln!("");
    outln!("--variant PRESET[,FIELD=VALUE]... changes fields of a preset, each at most once:");
    for f in &FIELDS {
        outln!("  {:<22} {}", f.key, f.values.join(" | "));
    }
    Ok(ExitCode::SUCCESS)
}
