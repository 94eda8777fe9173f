//! `checkpoint-gemini`: the gemini hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_gemini::main()
}
