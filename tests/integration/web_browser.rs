//! The web pages in a real browser: headless Chromium driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`, which `.ci/run` installs) against `ggp-run web` on a free loopback port. Each
//! test opens the pages as a person would, clicks and types, and saves a screenshot of what it saw
//! under `target/tmp/web-screenshots/`.
//!
//! `GGP_CHROMEDRIVER` and `GGP_CHROMIUM` name the driver and the browser when they are not
//! `chromedriver` on the PATH and the driver's default browser.

use crate::common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

/// A process killed with its children when the test ends, however it ends.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        // The driver runs in a process group of its own, with the browser it started.
        let pid = self.0.id() as i32;
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// `ggp-run web` on a free port, and its address.
fn web_server(args: &[&str]) -> (Process, String) {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-run"))
        .args(["web", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("ggp-run web starts");
    let url = common::listening_address(&mut child);
    (Process(child), url)
}

/// ChromeDriver on a free port, and the port.
/// Starts chromedriver on a free loopback port and waits until it listens there. `Err` when it exits
/// first (another process took the port between `free_port` and its bind) or never listens.
fn chromedriver() -> Result<(Process, u16), String> {
    use std::os::unix::process::CommandExt;
    let port = free_port();
    let driver = std::env::var("GGP_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let child = Command::new(&driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {driver} ({e}): the browser tests need Debian's chromium and \
                 chromium-driver packages (`apt-get install chromium chromium-driver`, which \
                 .ci/run does)"
            )
        });
    let mut process = Process(child);
    for _ in 0..600 {
        if let Ok(Some(status)) = process.0.try_wait() {
            return Err(format!(
                "{driver} exited ({status}) before listening on port {port}"
            ));
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok((process, port));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{driver} never listened on port {port}"))
}

/// A browser on a page of a fresh `ggp-run web`.
struct Browser {
    client: Client,
    base: String,
    _server: Process,
    _driver: Process,
    _profile: common::TempPath,
}

async fn browser(server_args: &[&str]) -> Browser {
    let (server, base) = web_server(server_args);
    // A driver that lost its port to another test's server, or reset the first connection while
    // still starting, is replaced: three tries, each on a fresh port, and every failure is printed.
    let mut failures = Vec::new();
    for _ in 0..3 {
        match session().await {
            Ok((client, driver, profile)) => {
                return Browser {
                    client,
                    base,
                    _server: server,
                    _driver: driver,
                    _profile: profile,
                }
            }
            Err(failure) => {
                eprintln!("browser session failed, trying again: {failure}");
                failures.push(failure);
            }
        }
    }
    panic!("no Chromium session in three tries: {failures:?}");
}

/// A headless Chromium session through a chromedriver of its own.
async fn session() -> Result<(Client, Process, common::TempPath), String> {
    let (driver, port) = chromedriver()?;
    // Removed with the browser (the field is dropped after the driver's).
    let profile = common::TempPath::new(&format!("chromium-{port}"));
    let mut options = json!({
        "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--window-size=1280,900",
            format!("--user-data-dir={}", profile.as_str()),
        ],
    });
    if let Ok(binary) = std::env::var("GGP_CHROMIUM") {
        options["binary"] = Value::String(binary);
    }
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("goog:chromeOptions".into(), options);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .map_err(|e| format!("creating the session on port {port}: {e}"))?;
    Ok((client, driver, profile))
}

impl Browser {
    async fn open(&self, page: &str) {
        self.client
            .goto(&format!("{}/{page}", self.base))
            .await
            .expect("the page opens");
    }

    /// Waits until `condition` (a JavaScript expression) holds; `what` says what was awaited when it
    /// never does. Polls for up to two minutes: a bound against a hang, not a speed target.
    async fn until(&self, condition: &str, what: &str) {
        let script = format!("return Boolean({condition});");
        for _ in 0..1200 {
            let held = self.client.execute(&script, vec![]).await;
            if held.ok().and_then(|v| v.as_bool()) == Some(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = self.text("body").await;
        panic!("never: {what}\nthe page shows:\n{page}");
    }

    async fn js(&self, expression: &str) -> Value {
        self.client
            .execute(&format!("return {expression};"), vec![])
            .await
            .expect("the script runs")
    }

    async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("{css} cannot be clicked: {e}"));
    }

    async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    async fn choose(&self, css: &str, value: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
            .select_by_value(value)
            .await
            .unwrap_or_else(|e| panic!("{css} has no option {value}: {e}"));
    }

    async fn type_into(&self, css: &str, text: &str) {
        let field = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css}: {e}"));
        field.clear().await.expect("the field clears");
        field.send_keys(text).await.expect("the field takes keys");
    }

    /// Saves what the browser shows as `name.png`, for people to look at.
    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("a screenshot");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
        std::fs::create_dir_all(&dir).expect("the screenshot folder");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("the screenshot is saved");
    }

    async fn close(self) {
        let _ = self.client.close().await;
    }
}

fn run(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(test);
}

#[test]
fn a_person_opens_the_library_and_wins_or_draws_tictactoe_by_clicking_cells() {
    run(async {
        // A match nobody follows stops after a second: the visit to the library below outlasts it.
        let b = browser(&["--abandon-after", "1"]).await;
        b.open("").await;
        b.until(
            "document.querySelector('#games tr[data-game=\"tictactoe\"] .engine')?.textContent === 'network'",
            "the library shows tic-tac-toe on the network",
        )
        .await;
        assert_eq!(
            b.text("#games tr[data-game=\"connect4\"] .roles").await,
            "red, black"
        );
        b.screenshot("library").await;
        b.click("#games tr[data-game=\"tictactoe\"] a.play").await;
        b.until(
            "document.querySelector('select.seat[data-role=\"o\"]')",
            "the seats",
        )
        .await;
        b.choose("select.seat[data-role=\"x\"]", "human").await;
        b.choose("select.seat[data-role=\"o\"]", "random").await;
        b.type_into("#playclock", "300").await;
        b.click("#start").await;
        for click in 0..5 {
            b.until(
                "document.querySelector('#result').textContent !== '' || \
                 document.querySelector('#board g.square.target')",
                "a square to click or the result",
            )
            .await;
            if !b.text("#result").await.is_empty() {
                break;
            }
            if click == 1 {
                b.screenshot("play").await;
                // A look at the library while the match runs does not stop it.
                let at = b.js("location.hash").await;
                let at = at.as_str().expect("the match's address").to_string();
                b.js("(location.hash = '#library', true)").await;
                b.until("!document.querySelector('#library').hidden", "the library")
                    .await;
                tokio::time::sleep(Duration::from_secs(3)).await;
                b.js(&format!("(location.hash = '{at}', true)")).await;
                // The events replayed up to now: the two moves played so far, and the turn after.
                b.until(
                    "document.querySelector('#result').textContent !== '' || \
                     (document.querySelectorAll('#board text.piece').length >= 2 && \
                      document.querySelector('#board g.square.target'))",
                    "the match again",
                )
                .await;
                let result = b.text("#result").await;
                assert!(!result.contains("stopped"), "{result}");
            }
            b.click("#board g.square.target rect").await;
            // Wait for the reply: the squares to click come back, or the game ends.
            b.until(
                &format!(
                    "document.querySelectorAll('#board text.piece').length >= {} || \
                     document.querySelector('#result').textContent !== ''",
                    2 * click + 2
                ),
                "random's reply",
            )
            .await;
        }
        b.until(
            "document.querySelector('#result').textContent !== ''",
            "the result",
        )
        .await;
        let result = b.text("#result").await;
        assert!(
            result.contains("wins") || result.contains("a draw"),
            "{result}"
        );
        let marks = b
            .js("document.querySelectorAll('#board text.piece').length")
            .await;
        assert!(marks.as_u64().unwrap() >= 5, "{marks}");
        b.screenshot("play-result").await;
        b.close().await;
    });
}

#[test]
fn an_error_typed_into_the_editor_shows_at_its_line() {
    run(async {
        let b = browser(&[]).await;
        b.open("#editor/tictactoe").await;
        b.until(
            "document.querySelector('#check-status').textContent.startsWith('valid')",
            "the bundled rules check",
        )
        .await;
        // The editor's check plays the game too, and says what it played.
        let status = b.text("#check-status").await;
        assert!(
            status.contains("; play-test: 20 random matches, all ended after "),
            "{status}"
        );
        // The caret at the end of line 6 (`role(o)`), then a rule typed with a variable that only
        // its head uses.
        let line6 = b
            .js("document.querySelector('#rules').value.split('\\n')[5]")
            .await;
        assert_eq!(line6, "role(o)");
        b.js("(() => { const t = document.querySelector('#rules'); \
              const end = t.value.split('\\n').slice(0, 6).join('\\n').length; \
              t.focus(); t.setSelectionRange(end, end); return true; })()")
            .await;
        // Key presses go to the focused editor at its caret (an element's "send keys" may move the
        // caret to the end of the text first, as newer ChromeDrivers do).
        let mut keys = KeyActions::new("typing".into());
        for c in "\nlegal(jump(Z)) :- cell(M,N,b)".chars() {
            let c = if c == '\n' { '\u{e007}' } else { c };
            keys = keys
                .then(KeyAction::Down { value: c })
                .then(KeyAction::Up { value: c });
        }
        b.client
            .perform_actions(keys)
            .await
            .expect("the editor takes keys");
        b.until(
            "document.querySelector('#diagnostics li.diagnostic.error[data-line=\"7\"]')",
            "an error at line 7",
        )
        .await;
        let message = b
            .text("#diagnostics li.diagnostic.error[data-line=\"7\"] .message")
            .await;
        assert!(message.contains('Z'), "{message}");
        let column = b
            .js("document.querySelector('#diagnostics li.diagnostic.error[data-line=\"7\"]').dataset.column")
            .await;
        assert_eq!(column, "12", "the error points at `Z`");
        let marked = b
            .js("document.querySelector('#gutter [data-line=\"7\"]').classList.contains('line-error')")
            .await;
        assert_eq!(marked, true);
        let tooltip = b
            .js("document.querySelector('#gutter [data-line=\"7\"]').title")
            .await;
        assert!(
            tooltip
                .as_str()
                .unwrap()
                .starts_with("7:12: unsafe variable `Z`"),
            "{tooltip}"
        );
        assert!(b.text("#check-status").await.contains("error"));
        b.screenshot("editor").await;
        b.close().await;
    });
}

#[test]
fn an_mcts_match_of_connect4_advances_while_it_is_watched() {
    run(async {
        let b = browser(&[]).await;
        b.open("#play/connect4").await;
        b.until(
            "document.querySelector('select.seat[data-role=\"black\"]')",
            "the seats",
        )
        .await;
        b.choose("select.seat[data-role=\"red\"]", "mcts").await;
        b.choose("select.seat[data-role=\"black\"]", "mcts").await;
        b.type_into("#playclock", "0.5").await;
        b.click("#start").await;
        b.until(
            "document.querySelectorAll('#log li').length >= 4 && \
             document.querySelectorAll('#board text.piece').length >= 4",
            "four moves played and drawn",
        )
        .await;
        b.until(
            "document.querySelectorAll('#players .candidates tr').length > 2",
            "a player's candidate moves",
        )
        .await;
        let effort = b.text("#players .player .effort").await;
        assert!(effort.contains("simulations"), "{effort}");
        b.screenshot("watch").await;
        b.click("#stop").await;
        b.until(
            "document.querySelector('#result').textContent !== ''",
            "the match to stop",
        )
        .await;
        b.close().await;
    });
}

/// Plays a quick match of tic-tac-toe through the API and waits for its end; its id.
fn finished_match(base: &str) -> u64 {
    finished(
        base,
        json!({"game": "tictactoe", "players": ["random", "random"], "playclock": 0.2}),
    )
}

/// Starts the match `request` asks for through the API and waits for its end; its id.
fn finished(base: &str, request: Value) -> u64 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut r = agent
        .post(format!("{base}/api/matches"))
        .header("Content-Type", "application/json")
        .send(request.to_string())
        .expect("the match starts");
    let created: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    let id = created["id"].as_u64().expect("an id");
    for _ in 0..1200 {
        let mut r = agent
            .get(format!("{base}/api/matches/{id}"))
            .call()
            .expect("the status");
        let status: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        if status["done"] == true {
            return id;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("match {id} never ended");
}

#[test]
fn a_replay_steps_back_and_forth_by_buttons_and_keys() {
    run(async {
        // Abandoned matches are not stopped here: the match is played without a page watching.
        let b = browser(&["--abandon-after", "3600"]).await;
        let id = finished_match(&b.base);
        b.open(&format!("#replay/match/{id}")).await;
        b.until(
            "document.querySelector('#replay-step').textContent.startsWith('step 0 of')",
            "the replay at its start",
        )
        .await;
        let pieces = "document.querySelectorAll('#replay-board text.piece').length";
        assert_eq!(b.js(pieces).await, 0);
        b.click("#next").await;
        b.click("#next").await;
        assert!(b.text("#replay-step").await.starts_with("step 2 of"));
        assert_eq!(b.js(pieces).await, 2);
        b.client
            .find(Locator::Css("body"))
            .await
            .unwrap()
            .send_keys("\u{E012}") // the left arrow key
            .await
            .unwrap();
        b.until(
            "document.querySelector('#replay-step').textContent.startsWith('step 1 of')",
            "the left arrow to step back",
        )
        .await;
        assert_eq!(b.js(pieces).await, 1);
        assert!(b.text("#replay-moves").await.contains("x mark("));
        b.screenshot("replay").await;
        // The same match from a record file, as it would be uploaded.
        let record = ureq::get(format!("{}/api/matches/{id}/record", b.base))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        // x's first move marked as substituted for an illegal one, as the referee records it.
        let mut record: Value = serde_json::from_str(&record).expect("the record is JSON");
        record["errors"][0][0] = json!("IL mark(9,9)");
        let file = common::TempPath::new("web-record.json");
        std::fs::write(&file, record.to_string()).unwrap();
        b.open("#replay").await;
        b.until("document.querySelector('#record-file')", "the upload field")
            .await;
        b.client
            .find(Locator::Css("#record-file"))
            .await
            .unwrap()
            .send_keys(file.as_str())
            .await
            .unwrap();
        b.click("#replay-open").await;
        b.until(
            "!document.querySelector('#replay-view').hidden && \
             document.querySelector('#replay-step').textContent.startsWith('step 0 of')",
            "the uploaded record's replay",
        )
        .await;
        b.click("#next").await;
        let moves = b.text("#replay-moves").await;
        assert!(
            moves.contains("(substituted for the illegal mark(9,9))"),
            "{moves}"
        );
        // A match of rules typed into the page replays on those rules, not on the editor's (empty
        // in this page).
        let rules = std::fs::read_to_string("games/tictactoe.gdl").expect("the bundled game");
        let typed = finished(
            &b.base,
            json!({"text": rules, "syntax": "gdl", "players": ["random", "random"],
                   "playclock": 0.2}),
        );
        b.open(&format!("#replay/match/{typed}")).await;
        b.until(
            "!document.querySelector('#replay-view').hidden && \
             document.querySelector('#replay-step').textContent.startsWith('step 0 of')",
            "the typed rules' replay",
        )
        .await;
        b.close().await;
    });
}

#[test]
fn a_tournament_fills_its_table_in_the_page() {
    run(async {
        let b = browser(&[]).await;
        b.open("#tournament").await;
        b.until(
            "document.querySelector('#t-game option[value=\"tictactoe\"]')",
            "the games",
        )
        .await;
        b.choose("#t-game", "tictactoe").await;
        b.type_into("#t-players", "random, legal").await;
        b.type_into("#t-games", "2").await;
        b.type_into("#t-playclock", "0.1").await;
        b.click("#t-start").await;
        b.until(
            "!document.querySelector('#t-csv').hidden && \
             document.querySelectorAll('#t-table tbody tr').length === 2",
            "the finished table",
        )
        .await;
        let first = b.js("location.hash").await;
        assert!(
            first.as_str().unwrap_or("").starts_with("#tournament/"),
            "the address names the tournament: {first}"
        );
        let progress = b.text("#t-progress").await;
        assert!(progress.contains(": 2 of 2 games played"), "{progress}");
        b.screenshot("tournament").await;
        // A long one, stopped from the page: its table keeps the games that ended.
        b.type_into("#t-players", "mcts, random").await;
        b.type_into("#t-games", "50").await;
        b.type_into("#t-playclock", "0.5").await;
        b.click("#t-start").await;
        b.until(
            &format!(
                "location.hash.startsWith('#tournament/') && location.hash !== {first} && \
                 !document.querySelector('#t-stop').hidden"
            ),
            "the Stop button",
        )
        .await;
        // Away and back through the list of tournaments: the running one is listed first, and
        // followed again from its link.
        let running = b.js("location.hash").await;
        let running = running.as_str().expect("an address").to_string();
        b.js("(location.hash = '#library', true)").await;
        b.until("!document.querySelector('#library').hidden", "the library")
            .await;
        b.js("(location.hash = '#tournament', true)").await;
        b.until(
            "!document.querySelector('#t-others').hidden && \
             document.querySelectorAll('#t-list tbody tr').length === 2",
            "the list of tournaments",
        )
        .await;
        let first_row = b.text("#t-list tbody tr").await;
        assert!(first_row.contains("playing"), "{first_row}");
        b.click(&format!("#t-list a[href='{running}']")).await;
        b.until(
            "!document.querySelector('#t-stop').hidden && \
             document.querySelector('#t-csv').hidden && \
             document.querySelector('#t-others').hidden",
            "the running tournament followed again",
        )
        .await;
        // A status request that fails (a lost connection) is asked again, not the end of the view.
        b.js(
            "(window.failOnce = true, window.realFetch = window.realFetch || window.fetch, \
              window.fetch = (url, options) => { \
                if (window.failOnce && String(url).startsWith('/api/tournaments/')) { \
                  window.failOnce = false; \
                  return Promise.reject(new TypeError('the connection was lost')); \
                } \
                return window.realFetch(url, options); \
              }, true)",
        )
        .await;
        b.until(
            "document.querySelector('#notice').textContent.includes('asking again')",
            "the failed request noticed",
        )
        .await;
        b.click("#t-stop").await;
        b.until(
            "!document.querySelector('#t-csv').hidden && \
             document.querySelector('#t-progress').textContent.includes('stopped on request')",
            "the stopped tournament's table",
        )
        .await;
        assert!(b
            .text("#t-progress")
            .await
            .contains("of 50 games played (stopped after"));
        b.close().await;
    });
}
