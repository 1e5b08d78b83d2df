//! What the integration tests and benches share: where the shared material (`games/kif/`,
//! `conformance/`) is. One place, so no test or bench can name one machine's path.

use std::path::{Path, PathBuf};

/// The shared material: `$GGP_SHARED`, or `../shared` beside the checkout.
pub fn shared() -> PathBuf {
    std::env::var_os("GGP_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}
