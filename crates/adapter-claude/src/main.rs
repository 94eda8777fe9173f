//! `checkpoint-claude`: the claude hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_claude::main()
}
