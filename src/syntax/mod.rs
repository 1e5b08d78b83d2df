//! Stage 1, syntax: reading rule files (KIF and Epilog infix) into a [`ast::Program`].
pub mod ast;
