//! Generates the parsers from the lalrpop grammars in `grammar/`.
fn main() {
    println!("cargo:rerun-if-changed=grammar");
    lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .set_in_dir("grammar")
        .emit_rerun_directives(true)
        .process()
        .expect("the lalrpop grammars in grammar/ must compile");
}
