//! Hand-written native games.
