//! Well-formedness checking.
