//! Printers.
