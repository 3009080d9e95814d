//! `touchmove bench`: the monitor's speed on a recording, measured in one run: decode alone,
//! the whole offline pipeline, the model alone, and live latency with the file played in real
//! time.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use opencv::core::Mat;
use serde_json::json;

use super::Exit;
use super::monitor::GameArgs;
use crate::capture::{Capture, Source};
use crate::detect::Model;
use crate::pipeline::{self, Summary};

/// Arguments of `touchmove bench`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Measure throughput, model time, live latency and memory on a recording",
    long_about = "Measures, on one recording and in one run (build with --release):\n\
  decode: frames per second of decoding alone;\n\
  offline: frames per second of `analyse` (nothing dropped), and its ratio to decode (with \
--repeat N, both measured N times alternately: the medians, and the ratio's range);\n\
  model: milliseconds per frame of the board model alone (warped input, --threads threads);\n\
  live: the file played at its own frame rate into the live pipeline: per event, the delay from \
the capture of the frame that revealed it to its emission (50th and 95th percentile), and frames dropped;\n\
  memory: the process's peak resident memory.\n\n\
Exit codes: 0 measured, 1 a failure while running, 2 bad arguments or an unreadable video.",
    after_help = "Example:\n  cargo run --release -- bench fixtures/clips/touch-own-4.3.1/clip.mp4 --calibration fixtures/clips/touch-own-4.3.1/calibration.json --fen '...'"
)]
pub struct Args {
    /// The recording.
    #[arg(value_name = "VIDEO")]
    pub video: PathBuf,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Skip the live run (it takes as long as the video).
    #[arg(long)]
    pub no_live: bool,
    /// Measure decode and offline throughput this many times, alternately, and report the
    /// median and the range of their ratio (a shared machine's speed drifts from run to run).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub repeat: u32,
    /// The board, the game and the model.
    #[command(flatten)]
    pub game: GameArgs,
}

fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    (!sorted.is_empty()).then(|| sorted[((sorted.len() - 1) as f64 * p).round() as usize])
}

/// Runs the command: prints the figures.
pub fn run(args: &Args, out: &mut impl std::io::Write) -> Exit {
    let source = Source::File(args.video.clone());
    let scratch = std::env::temp_dir().join(format!("touchmove-bench-{}", std::process::id()));
    let config = match args.game.config(source.clone(), scratch.join("offline"), false, false) {
        Ok(c) => c,
        Err(e) => return Exit::BadInput(e),
    };
    let (frames, first) = match decode(&source) {
        Ok((frames, _, Some(first))) => (frames, first),
        Ok((_, _, None)) => return Exit::BadInput(format!("{}: no frames", args.video.display())),
        Err(e) => return Exit::BadInput(e),
    };
    // the model alone
    let mut model = match Model::load(&config.model, config.threads) {
        Ok(m) => m,
        Err(e) => return Exit::Failed(e.to_string()),
    };
    let warped = match config.calibration.warp(&first, model.layout()) {
        Ok(w) => w,
        Err(e) => return Exit::Failed(e.to_string()),
    };
    let mut model_ms = Vec::new();
    for i in 0..60 {
        let t = Instant::now();
        if let Err(e) = model.read(&warped, 0, 0.0) {
            return Exit::Failed(e.to_string());
        }
        if i >= 10 {
            model_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    model_ms.sort_by(f64::total_cmp);
    drop(model);
    // decode alone and offline, alternately
    let (mut decode_runs, mut offline_runs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut offline = Summary::default();
    for _ in 0..args.repeat {
        let decode_fps = match decode(&source) {
            Ok((n, seconds, _)) => n as f64 / seconds.max(1e-9),
            Err(e) => return Exit::BadInput(e),
        };
        offline = match pipeline::run(&config, Arc::new(AtomicBool::new(false)), &mut |_| {}) {
            Ok(s) => s,
            Err(e) => return Exit::Failed(e.to_string()),
        };
        let offline_fps = offline.frames as f64 / offline.seconds.max(1e-9);
        decode_runs.push(decode_fps);
        offline_runs.push(offline_fps);
        ratios.push(offline_fps / decode_fps);
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        percentile(&v, 0.5).unwrap_or(f64::NAN)
    };
    let (decode_fps, offline_fps, ratio) = (median(&decode_runs), median(&offline_runs), median(&ratios));
    let range = |v: &[f64]| (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    // live
    let live = if args.no_live {
        None
    } else {
        let mut live_config = config.clone();
        live_config.live = true;
        live_config.paced = true;
        live_config.echo = false;
        live_config.out = scratch.join("live");
        match pipeline::run(&live_config, Arc::new(AtomicBool::new(false)), &mut |_| {}) {
            Ok(mut s) => {
                s.latencies.sort_by(f64::total_cmp);
                Some(s)
            }
            Err(e) => return Exit::Failed(e.to_string()),
        }
    };
    let peak = pipeline::peak_mib();
    let decoder_ms = offline.decoder_seconds * 1000.0 / offline.analysed.max(1) as f64;
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |s| format!("{:.1} ms", s * 1000.0));
    let runs = if args.repeat > 1 {
        let (lo, hi) = range(&ratios);
        format!(", medians of {} runs, ratio {lo:.2}-{hi:.2}", args.repeat)
    } else {
        String::new()
    };
    let mut text = format!(
        "{}: {} frames\ndecode only      {decode_fps:.1} frames/s\noffline analyse  {offline_fps:.1} frames/s ({ratio:.2}x decode{runs}; {} of {} frames through the model)\nmodel            {:.2} ms/frame median, {:.2} ms 95th percentile ({} threads)\ngame decoder     {:.3} ms/reading mean\n",
        args.video.display(),
        frames,
        offline.analysed,
        offline.frames,
        percentile(&model_ms, 0.5).unwrap_or(f64::NAN),
        percentile(&model_ms, 0.95).unwrap_or(f64::NAN),
        config.threads,
        decoder_ms
    );
    if let Some(live) = &live {
        text += &format!(
            "live (paced)     event latency {} median, {} 95th percentile over {} events; {} of {} frames dropped\n",
            ms(percentile(&live.latencies, 0.5)),
            ms(percentile(&live.latencies, 0.95)),
            live.latencies.len(),
            live.dropped,
            live.frames + live.dropped
        );
    }
    text += &format!("peak memory      {}\n", peak.map_or("-".into(), |m| format!("{m:.0} MiB")));
    if let Some(path) = &args.json {
        let doc = json!({
            "video": args.video, "frames": frames, "decode_fps": decode_fps, "offline_fps": offline_fps,
            "offline_to_decode": ratio, "analysed": offline.analysed,
            "decode_fps_runs": decode_runs, "offline_fps_runs": offline_runs, "offline_to_decode_runs": ratios,
            "decoder_ms_mean": decoder_ms,
            "model_ms_median": percentile(&model_ms, 0.5), "model_ms_p95": percentile(&model_ms, 0.95), "threads": config.threads,
            "live_latency_s_median": live.as_ref().and_then(|l| percentile(&l.latencies, 0.5)),
            "live_latency_s_p95": live.as_ref().and_then(|l| percentile(&l.latencies, 0.95)),
            "live_events": live.as_ref().map(|l| l.latencies.len()), "live_dropped": live.as_ref().map(|l| l.dropped),
            "peak_mib": peak,
        });
        if let Err(e) = std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n") {
            return Exit::Failed(format!("{}: {e}", path.display()));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    match out.write_all(text.as_bytes()) {
        Ok(()) => Exit::Ok,
        Err(e) => Exit::Failed(e.to_string()),
    }
}

/// Decodes the whole of `source` as fast as it goes: the frames, the seconds it took (from the
/// first read, after opening) and the first frame.
fn decode(source: &Source) -> Result<(u64, f64, Option<Mat>), String> {
    let mut capture = Capture::open(source).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let (mut frames, mut first) = (0u64, None);
    while let Some(f) = capture.next_frame().map_err(|e| e.to_string())? {
        frames += 1;
        first.get_or_insert(f.image);
    }
    Ok((frames, started.elapsed().as_secs_f64(), first))
}
