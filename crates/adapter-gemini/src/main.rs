//! `checkpoint-gemini`: the gemini hook adapter. Its wire translation arrives with the adapters issue;
//! until then it answers every event with the agent's no-op (empty stdout, exit 0).

fn main() {}
