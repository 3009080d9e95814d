//! A board's records on their way to the broker: a bounded queue kept on disk
//! (`outbox.jsonl` in the run's `--out`), so that records decided while the broker is away
//! wait, survive a restart of `live`, and go out in the order they were decided.
//!
//! The file is a log appended to and flushed at each change: a line `{"put": ENTRY}` when a
//! record joins the queue, `{"sent": ID}` when the broker acknowledged it, `{"dropped": ID}`
//! when the queue was full and it, the oldest, was given up. Opening the file again rebuilds
//! the queue from the log (a torn last line is ignored); the log is emptied whenever the queue
//! is, and rewritten to what is queued when it grows past twice the queue's bound.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One record to send.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its subject.
    pub subject: String,
    /// The id the server deduplicates it on.
    pub id: String,
    /// The JSON sent.
    pub payload: String,
}

/// A line of the log.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Line {
    Put(Entry),
    Sent(String),
    Dropped(String),
}

/// The queue and its file.
#[derive(Debug)]
pub struct Outbox {
    path: PathBuf,
    file: File,
    queue: VecDeque<Entry>,
    capacity: usize,
    /// Lines in the file.
    lines: usize,
    /// Records given up since the outbox was opened.
    dropped: u64,
}

impl Outbox {
    /// The outbox kept in `path`, holding at most `capacity` records; the records an earlier
    /// run left unsent are queued first, in their order.
    pub fn open(path: &Path, capacity: usize) -> std::io::Result<Outbox> {
        let capacity = capacity.max(1);
        let mut queue: VecDeque<Entry> = VecDeque::new();
        let mut lines = 0;
        if let Ok(file) = File::open(path) {
            for line in BufReader::new(file).lines() {
                let Ok(line) = serde_json::from_str::<Line>(&line?) else { continue };
                lines += 1;
                match line {
                    Line::Put(entry) => queue.push_back(entry),
                    // The first (oldest) entry of that id leaves the queue.
                    Line::Sent(id) | Line::Dropped(id) => {
                        if let Some(i) = queue.iter().position(|e| e.id == id) {
                            queue.remove(i);
                        }
                    }
                }
            }
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let mut outbox = Outbox { path: path.to_owned(), file, queue, capacity, lines, dropped: 0 };
        if !outbox.queue.is_empty() {
            tracing::info!("{}: {} records an earlier run did not send go out first", path.display(), outbox.queue.len());
        }
        while outbox.queue.len() > capacity {
            outbox.drop_oldest()?;
        }
        // Rewritten at once: a torn last line must not run into the next one appended.
        if outbox.queue.is_empty() { outbox.compact()? } else { outbox.rewrite()? }
        Ok(outbox)
    }

    fn append(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()?;
        self.lines += 1;
        Ok(())
    }

    /// Gives up the oldest record, counted and logged.
    fn drop_oldest(&mut self) -> std::io::Result<()> {
        if let Some(entry) = self.queue.pop_front() {
            self.dropped += 1;
            tracing::warn!("the outbox is full ({} records): the oldest, {} ({}), is dropped", self.capacity, entry.id, entry.subject);
            self.append(&Line::Dropped(entry.id))?;
        }
        Ok(())
    }

    /// Queues `entry` last, giving up the oldest where the queue is full.
    pub fn push(&mut self, entry: Entry) -> std::io::Result<()> {
        if self.queue.len() >= self.capacity {
            self.drop_oldest()?;
        }
        self.append(&Line::Put(entry.clone()))?;
        self.queue.push_back(entry);
        Ok(())
    }

    /// The next record to send.
    pub fn front(&self) -> Option<&Entry> {
        self.queue.front()
    }

    /// The next record was acknowledged by the broker: it leaves the queue.
    pub fn sent(&mut self) -> std::io::Result<()> {
        let Some(entry) = self.queue.pop_front() else { return Ok(()) };
        self.append(&Line::Sent(entry.id))?;
        self.compact()
    }

    /// Empties the log where the queue is empty; rewrites it to the queue where it has grown
    /// past twice the bound.
    fn compact(&mut self) -> std::io::Result<()> {
        if self.queue.is_empty() {
            if self.lines > 0 {
                self.file.set_len(0)?;
                self.lines = 0;
            }
            return Ok(());
        }
        if self.lines <= 2 * self.capacity.max(64) {
            return Ok(());
        }
        self.rewrite()
    }

    /// Rewrites the log to what is queued, through a temporary file and a rename.
    fn rewrite(&mut self) -> std::io::Result<()> {
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut text = String::new();
        for entry in &self.queue {
            text.push_str(&serde_json::to_string(&Line::Put(entry.clone())).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)?;
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.lines = self.queue.len();
        Ok(())
    }

    /// Records waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Records given up since the outbox was opened.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64) -> Entry {
        Entry { subject: "touchmove.5.1.move".into(), id: format!("5.1.run.{i}"), payload: format!("{{\"seq\":{i}}}") }
    }

    fn ids(outbox: &Outbox) -> Vec<String> {
        outbox.queue.iter().map(|e| e.id.clone()).collect()
    }

    #[test]
    fn records_replay_in_their_order_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outbox.jsonl");
        let mut outbox = Outbox::open(&path, 100).unwrap();
        (1..=5).for_each(|i| outbox.push(entry(i)).unwrap());
        assert_eq!(outbox.front(), Some(&entry(1)));
        outbox.sent().unwrap();
        outbox.sent().unwrap();
        drop(outbox);
        // The broker was away when `live` stopped: what was not sent goes out first, in order.
        let mut outbox = Outbox::open(&path, 100).unwrap();
        assert_eq!(ids(&outbox), ["5.1.run.3", "5.1.run.4", "5.1.run.5"]);
        outbox.push(entry(6)).unwrap();
        let mut order = Vec::new();
        while let Some(e) = outbox.front() {
            order.push(e.id.clone());
            outbox.sent().unwrap();
        }
        assert_eq!(order, ["5.1.run.3", "5.1.run.4", "5.1.run.5", "5.1.run.6"]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "an empty queue empties its log");
        assert!(Outbox::open(&path, 100).unwrap().is_empty());
    }

    #[test]
    fn a_full_outbox_drops_the_oldest_and_counts_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outbox.jsonl");
        let mut outbox = Outbox::open(&path, 3).unwrap();
        (1..=5).for_each(|i| outbox.push(entry(i)).unwrap());
        assert_eq!(ids(&outbox), ["5.1.run.3", "5.1.run.4", "5.1.run.5"]);
        assert_eq!(outbox.dropped(), 2);
        drop(outbox);
        // A torn last line (a crash mid-write) is ignored.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"put\":{\"subject\":\"touchm").unwrap();
        let mut outbox = Outbox::open(&path, 3).unwrap();
        assert_eq!(ids(&outbox), ["5.1.run.3", "5.1.run.4", "5.1.run.5"]);
        outbox.sent().unwrap();
        outbox.push(entry(6)).unwrap();
        drop(outbox);
        let outbox = Outbox::open(&path, 3).unwrap();
        assert_eq!(ids(&outbox), ["5.1.run.4", "5.1.run.5", "5.1.run.6"], "what follows a torn line is kept");
        // Opened with a smaller bound, the oldest go.
        drop(outbox);
        let outbox = Outbox::open(&path, 2).unwrap();
        assert_eq!(ids(&outbox), ["5.1.run.5", "5.1.run.6"]);
        assert_eq!(outbox.dropped(), 1);
    }

    #[test]
    fn the_log_stays_bounded_while_the_queue_is_never_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outbox.jsonl");
        let mut outbox = Outbox::open(&path, 4).unwrap();
        outbox.push(entry(0)).unwrap();
        for i in 1..1000 {
            outbox.push(entry(i)).unwrap();
            outbox.sent().unwrap();
        }
        assert!(outbox.lines <= 2 * 64 + 2, "{} lines", outbox.lines);
        drop(outbox);
        assert_eq!(ids(&Outbox::open(&path, 4).unwrap()), ["5.1.run.999"]);
    }
}
