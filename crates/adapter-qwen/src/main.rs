//! `checkpoint-qwen`: the qwen hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_qwen::main()
}
