//! `dtb serve`: the web explorer over the tables of one or more directories.

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use dtb_probe::{Tablebase, ValueKind, Variant};

use crate::tables::open_tables;

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Directory holding tables, as in every other command (repeatable: the Nth --dir goes
    /// with the Nth --variant; two directories of one variant are served together).
    #[arg(long, default_value = "tables")]
    dir: Vec<PathBuf>,
    /// Variant of each --dir, in order (default: english for every --dir). Its count profile
    /// (the preset's, or `count=` as in `--variant english,count=20`) is the one the DTC
    /// tables there were built under: the API answers `counter=` under it.
    #[arg(long)]
    variant: Vec<String>,
    /// Address to listen on: IP:PORT, HOST:PORT (the name resolved, an IPv4 address first:
    /// localhost:8080 is 127.0.0.1:8080) or :PORT (127.0.0.1:PORT). Only this machine can
    /// connect unless an address says otherwise: all interfaces are bound only when asked,
    /// with 0.0.0.0:PORT or [::]:PORT. Port 0: any free port; the address is printed.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    listen: SocketAddr,
}

/// `--listen`: `IP:PORT`, `HOST:PORT` (resolved, IPv4 preferred) or `:PORT` (loopback:
/// never all interfaces unless an address says so).
fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let s = text.trim();
    let port_of = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("{text:?}: the port after ':' must be a number from 0 to 65535"))
    };
    if let Some(port) = s.strip_prefix(':') {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port_of(port)?)));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let Some((host, port)) = s.rsplit_once(':').filter(|(h, _)| !h.is_empty()) else {
        return Err(format!(
            "{text:?}: give IP:PORT (127.0.0.1:8080), HOST:PORT (localhost:8080) or :PORT"
        ));
    };
    let port = port_of(port)?;
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("{text:?}: cannot resolve host {host:?}: {e}"))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| found.first())
        .copied()
        .ok_or_else(|| format!("{text:?}: host {host:?} has no address"))
}

/// DTC tables answer under the count profile they were built with: one built under another
/// than `tb`'s would fail every probe, so the server refuses to start, saying which.
fn check_count_profile(tb: &Tablebase) -> Result<()> {
    let Some(&m) = tb.materials(ValueKind::Dtc).first() else {
        return Ok(());
    };
    if let Err(e) = tb.table(m, ValueKind::Dtc) {
        bail!(
            "{}: give the --variant the DTC tables were built with (its count=, as given to \
             dtb gen)",
            dtb_probe::report(&e)
        );
    }
    Ok(())
}

/// Run the command line `args`; the exit code on success (probe: 1 if any position failed).
///
/// # Errors
/// Any failure, as one message chain for the caller to print.
pub fn run(a: Args) -> Result<ExitCode> {
    let (dirs, variants, listen) = (&a.dir, &a.variant, a.listen);
    if !variants.is_empty() && variants.len() != dirs.len() {
        bail!(
            "{} --dir and {} --variant given: give one --variant for each --dir (or none for english)",
            dirs.len(),
            variants.len()
        );
    }
    let mut tables: Vec<Tablebase> = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let spec = variants.get(i).map_or("english", String::as_str);
        let variant = Variant::parse(spec).map_err(|e| anyhow!("--variant {spec:?}: {e}"))?;
        let rules = variant.rules;
        open_tables(dir, &rules)?;
        match tables.iter_mut().find(|t| t.rules().name == rules.name) {
            Some(tb) if *tb.count_profile() != variant.count => bail!(
                "--variant {spec:?} gives {} another count profile ({}) than an earlier \
                 --variant ({}): one profile per variant served",
                rules.name,
                variant.count.describe(),
                tb.count_profile().describe()
            ),
            Some(tb) => {
                tb.add_directory(dir)?;
            }
            None => tables.push(Tablebase::open_variant(dir, &variant)?),
        }
    }
    for tb in &tables {
        check_count_profile(tb)?;
    }
    let names: Vec<String> = tables
        .iter()
        .map(|t| {
            Variant {
                rules: *t.rules(),
                count: *t.count_profile(),
            }
            .spec()
        })
        .collect();
    let names = names.join(", ");
    dtb_serve::run(dtb_serve::Config::new(listen, tables), |addr| {
        let said = format!("dtb serve: listening on http://{addr}/ ({names})");
        if crate::output::line(format_args!("{said}")).is_err() {
            // Standard output is gone; the address still matters to whoever started us.
            eprintln!("{said}");
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        let local = |port| SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        assert_eq!(parse_listen(":8081"), Ok(local(8081)));
        assert_eq!(parse_listen("localhost:8080"), Ok(local(8080)));
        assert_eq!(parse_listen("127.0.0.1:0"), Ok(local(0)));
        assert_eq!(
            parse_listen("0.0.0.0:80"),
            Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 80)))
        );
        assert_eq!(
            parse_listen("[::1]:8080"),
            Ok(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 8080)))
        );
        assert_eq!(
            parse_listen("8080"),
            Err(
                "\"8080\": give IP:PORT (127.0.0.1:8080), HOST:PORT (localhost:8080) or :PORT"
                    .to_string()
            )
        );
        assert_eq!(
            parse_listen(":"),
            Err("\":\": the port after ':' must be a number from 0 to 65535".to_string())
        );
    }
}
