//! `ggp-run`: plays, checks, converts and benchmarks games.
fn main() {
    println!("ggp-run: not yet wired");
}
