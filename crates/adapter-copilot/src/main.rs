//! `checkpoint-copilot`: the GitHub Copilot CLI hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_copilot::main()
}
