//! A real `nats-server` (Debian's, installed by `scripts/setup`) for the broker's tests and
//! measurements: started on a free loopback port with JetStream and a store directory of its
//! own, killed with SIGKILL and started again on the same store, and a TCP relay in front of it
//! that can cut a client off for a while.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A free port on loopback (bound, then let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something listens on `port`.
fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `nats-server -js` on loopback, killed when dropped.
pub struct NatsServer {
    /// Its port.
    pub port: u16,
    /// Its store (kept over a restart).
    pub store: tempfile::TempDir,
    args: Vec<String>,
    child: Option<Child>,
}

impl NatsServer {
    /// A server with JetStream, anonymous.
    pub fn start() -> NatsServer {
        NatsServer::with_args(&[])
    }

    /// A server with JetStream and `args` (`--auth TOKEN`, `-c FILE`).
    pub fn with_args(args: &[&str]) -> NatsServer {
        let mut server = NatsServer { port: free_port(), store: tempfile::tempdir().unwrap(), args: args.iter().map(|a| a.to_string()).collect(), child: None };
        server.run();
        server
    }

    fn run(&mut self) {
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string(), "-sd"])
            .arg(self.store.path())
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server (scripts/setup installs it)");
        self.child = Some(child);
        wait_listening(self.port);
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server with SIGKILL: nothing flushed, nothing said to its clients.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Starts it again on the same port and store.
    pub fn restart(&mut self) {
        self.kill9();
        self.run();
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A TCP relay to a port on loopback, whose clients can be cut off (their connections closed,
/// new ones closed at once) and let back.
pub struct Relay {
    /// The relay's port.
    pub port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16384];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

impl Relay {
    /// A relay to `target`.
    pub fn to(target: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (is_cut, conns) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if is_cut.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let mut open = conns.lock().unwrap();
                open.push(client.try_clone().unwrap());
                open.push(server.try_clone().unwrap());
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pump(client, server));
                std::thread::spawn(move || pump(s2, c2));
            }
        });
        Relay { port, cut, open }
    }

    /// `nats://127.0.0.1:PORT` of the relay.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Cuts every client off until [`Relay::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Lets clients connect again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}
