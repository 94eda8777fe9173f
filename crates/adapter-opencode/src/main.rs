//! `checkpoint-opencode`: the OpenCode hook adapter, run by checkpoint's OpenCode plugin;
//! everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_opencode::main()
}
