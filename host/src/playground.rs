//! `arbores playground`: serves the browser playground's static files on
//! 127.0.0.1 with a minimal HTTP/1.1 server (GET and HEAD, one request per
//! connection). The playground runs entirely in the browser; this only
//! delivers the files, with the MIME types browsers insist on for modules
//! and WebAssembly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

pub fn serve(port: u16, dir: Option<PathBuf>) -> Result<(), String> {
    let dir = match dir {
        Some(dir) => dir,
        None => find_web_dir().ok_or(
            "cannot find the playground's files (web/dist); build them with scripts/build, \
             or pass --dir DIR or set ARBORES_WEB_DIR",
        )?,
    };
    let root = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    if !root.is_dir() {
        return Err(format!("{}: not a directory", root.display()));
    }
    if !root.join("index.html").is_file() {
        eprintln!(
            "warning: {} has no index.html; is the playground built?",
            root.display()
        );
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    // Not println!: a closed stdout must not stop the server.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "Arbores playground: http://{addr}/");
    let _ = writeln!(out, "serving {} (Ctrl-C stops)", root.display());
    let _ = out.flush();
    drop(out);

    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let root = root.clone();
        // One short-lived thread per connection: browsers open a few at a
        // time, and a slow client must not hold up the others.
        let _ = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                let _ = handle(stream, &root);
            });
    }
    Ok(())
}

/// --dir, else ARBORES_WEB_DIR, else `web/dist` beside an ancestor of the
/// executable (target/release/arbores in a checkout), of the current
/// directory, or of the source tree this binary was built from.
fn find_web_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ARBORES_WEB_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let mut starts = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        starts.push(exe);
    }
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    starts.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    starts
        .iter()
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("web/dist"))
        .find(|candidate| candidate.join("index.html").is_file())
}

fn handle(stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?.take(16 * 1024));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Drain the headers; none of them matter here.
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut stream = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            b"method not allowed\n",
            true,
        );
    }
    let head_only = method == "HEAD";
    match resolve(root, target) {
        Some(path) => match std::fs::read(&path) {
            Ok(body) => respond(&mut stream, "200 OK", mime_type(&path), &body, !head_only),
            Err(_) => respond(
                &mut stream,
                "404 Not Found",
                "text/plain; charset=utf-8",
                b"not found\n",
                !head_only,
            ),
        },
        None => respond(
            &mut stream,
            "404 Not Found",
            "text/plain; charset=utf-8",
            b"not found\n",
            !head_only,
        ),
    }
}

/// Maps a request target to a file under `root`, refusing anything that
/// would leave it (`..`, or a symbolic link pointing elsewhere).
fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let decoded = percent_decode(path)?;
    let mut file = root.to_path_buf();
    for part in Path::new(decoded.trim_start_matches('/')).components() {
        match part {
            Component::Normal(name) => file.push(name),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    let file = file.canonicalize().ok()?;
    (file.starts_with(root) && file.is_file()).then_some(file)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let decoded = String::from_utf8(out).ok()?;
    (!decoded.contains('\0') && !decoded.contains('\\')).then_some(decoded)
}

pub fn mime_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "scm" | "sld" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    // no-cache: the browser revalidates, so a rebuilt playground shows up
    // on reload.
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_types() {
        assert_eq!(mime_type(Path::new("a/engine_bg.wasm")), "application/wasm");
        assert_eq!(
            mime_type(Path::new("worker.js")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            mime_type(Path::new("index.html")),
            "text/html; charset=utf-8"
        );
    }

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("/a%20b").as_deref(), Some("/a b"));
        assert_eq!(percent_decode("/%2e%2e/x").as_deref(), Some("/../x"));
        assert_eq!(percent_decode("/%zz"), None);
        assert_eq!(percent_decode("/a%5cb"), None);
    }

    #[test]
    fn stays_inside_the_root() {
        let root = std::env::temp_dir().canonicalize().unwrap();
        assert_eq!(resolve(&root, "/../etc/passwd"), None);
        assert_eq!(resolve(&root, "/%2e%2e/etc/passwd"), None);
    }
}
