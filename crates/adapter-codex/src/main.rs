//! `checkpoint-codex`: the codex hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_codex::main()
}
