//! The `posthorn` binary.

use std::process::ExitCode;

use clap::Parser;
use posthorn_runtime::{run_workers, GiveWay, WorkerOptions};
use posthorn_server::config::{Command, Role};
use posthorn_server::store_spec::StoreSpec;
use posthorn_server::{build_engine, export, router, smtp, sqlite_tools, AppState, Config};
use tokio::sync::watch;

// glibc's allocator spent about a sixth of the server's CPU under load (arena locks, chunk
// consolidation); mimalloc's thread-local free lists serve the many small per-request
// allocations far more cheaply.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    init_tracing(&config);
    if let Err(e) = posthorn_server::huge_pages::apply(config.transparent_huge_pages) {
        tracing::warn!("transparent huge pages stay as the system sets them: {e}");
    }
    match run(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("posthorn: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(config: &Config) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if config.log_json {
        builder.json().init();
    } else {
        builder.init();
    }
}

async fn run(config: Config) -> Result<(), Box<dyn std::error::Error>> {
    match &config.command {
        Some(Command::Backup { file }) => return Ok(sqlite_tools::backup(&config, file).await?),
        Some(Command::Export { to }) => return Ok(export::export(&config, to).await?),
        _ => {}
    }
    if matches!(config.command, Some(Command::Migrate)) {
        // Connecting applies the migrations.
        build_engine(&config).await?;
        println!("migrations applied to {}", config.store);
        return Ok(());
    }
    let engine = build_engine(&config).await?;
    // Checked before anything starts, so a malformed SNS setting stops start-up at once.
    let sns = posthorn_server::compose::sns_receiver(&config)?;
    if StoreSpec::parse(&config.store, &config.data_dir)? == StoreSpec::Memory {
        tracing::warn!("POSTHORN_STORE=memory: NOT DURABLE: data lives only in this process and is lost when it stops; use the default `sqlite:` or a postgres:// URL to keep it");
    }
    if let Some((ws, keys)) = engine.bootstrap(&config.bootstrap_domain).await? {
        println!(
            "\nFirst run: created workspace `default` ({}) with sender domain {}.\n  public key: {}\n  secret key: {}\nThese keys are shown once; keep them safe.\n",
            ws.id, config.bootstrap_domain, keys.public_key, keys.secret_key
        );
    }
    // Loaded now so that checking a bounce address (the MX listener, at RCPT) verifies its
    // token without reaching the store.
    engine.bounce_key().await?;
    // One signal stops both: the listener drains and the workers stop claiming at once.
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing requests and jobs in flight");
        let _ = stop_tx.send(true);
    });
    // The API's state, made before the workers so they can watch its requests in flight.
    let api = (config.role != Role::Worker).then(|| {
        let admin_token = config.admin_token.as_ref().map(|t| t.expose().to_string());
        AppState::with_body_limit(engine.clone(), admin_token, config.max_body_bytes).with_sns(sns)
    });
    let worker = (config.role != Role::Api).then(|| {
        // Only workers beside the API have requests to give way to.
        let give_way = api
            .as_ref()
            .filter(|_| config.worker_give_way_at > 0)
            .map(|state| GiveWay {
                requests: state.requests.clone(),
                busy_at: config.worker_give_way_at,
                concurrency: config.worker_busy_concurrency,
            });
        tokio::spawn(run_workers(
            engine.clone(),
            WorkerOptions {
                concurrency: config.worker_concurrency,
                give_way,
            },
            stop_rx.clone(),
        ))
    });
    let mut smtp_listeners = Vec::new();
    if let Some(state) = api {
        let listener = tokio::net::TcpListener::bind(config.listen).await?;
        smtp_listeners = smtp::start(&config, state.clone(), stop_rx.clone()).await?;
        tracing::info!(listen = %config.listen, transport = %config.transport, "posthorn is listening");
        if is_loopback_url(&config.public_url) {
            tracing::warn!(
                public_url = %config.public_url,
                "POSTHORN_PUBLIC_URL points at this machine: open tracking, click links and \
                 unsubscribe links in sent mail will not work from other machines"
            );
        }
        let mut stop = stop_rx.clone();
        axum::serve(listener, router(state))
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            })
            .await?;
    } else {
        let mut stop = stop_rx.clone();
        let _ = stop.wait_for(|stopped| *stopped).await;
    }
    for listener in smtp_listeners {
        let _ = listener.await;
    }
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// Whether `url`'s host is loopback (`localhost`, `127.x`, `::1`): links to it only work here.
fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}
