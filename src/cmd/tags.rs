//! The options that fill the PGN's tags, shared by `analyse`, `live` and `rules`.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::pgn::{Date, Tags};

/// The tags of the PGN written (PGN's seven-tag roster; the result is the game's).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "PGN tags")]
pub struct PgnArgs {
    /// The event.
    #[arg(long, default_value = "touchmove", value_name = "NAME")]
    pub event: String,
    /// Where the game is played.
    #[arg(long, default_value = "?", value_name = "PLACE")]
    pub site: String,
    /// The date, YYYY.MM.DD with ? for digits not known (default: today for `live`, else
    /// unknown).
    #[arg(long, value_name = "YYYY.MM.DD")]
    pub date: Option<Date>,
    /// The round.
    #[arg(long, default_value = "?", value_name = "ROUND")]
    pub round: String,
    /// White's player, "Surname, Forename" by PGN's convention.
    #[arg(long, default_value = "?", value_name = "NAME")]
    pub white: String,
    /// Black's player.
    #[arg(long, default_value = "?", value_name = "NAME")]
    pub black: String,
}

impl PgnArgs {
    /// The tags; `live` dates the game today where no date is given.
    pub fn tags(&self, live: bool) -> Tags {
        let date = match &self.date {
            Some(date) => date.clone(),
            None if live => Date::of_unix(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())),
            None => Date::unknown(),
        };
        Tags { event: self.event.clone(), site: self.site.clone(), date, round: self.round.clone(), white: self.white.clone(), black: self.black.clone() }
    }
}
