"""Mutation candidates for bench/mutate.sh, and applying one.

    mutate.py list SEED ROOT FILE...   # every candidate in FILE... (relative to ROOT), one JSON
                                       # object a line, in an order shuffled with SEED
    mutate.py apply ROOT JSON          # applies one candidate to its file in ROOT, and prints
                                       # its file, line, operator, before and after, tab-separated

A candidate changes one occurrence on one source line, in code (never in a string or a
comment; Python is read with `tokenize`, Rust and JS/TS with a small lexer): `+`/`-` (and
`+=`/`-=`), `==`/`!=` (`===`/`!==`), `<`/`<=`, `>`/`>=`, `&&`/`||` (`and`/`or`), `true`/`false`
(`True`/`False`), an integer constant + 1, or a whole statement line deleted (Python: made
`pass`). Rust stops at the first `#[cfg(test)]` of a file (the unit tests below it are tests).
Python candidates that no longer compile are left out; for Rust and JS/TS the runner tells.
"""

import io
import json
import random
import re
import sys
import tokenize

SWAPS = {
    "+": "-",
    "-": "+",
    "+=": "-=",
    "-=": "+=",
    "==": "!=",
    "!=": "==",
    "===": "!==",
    "!==": "===",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "&&": "||",
    "||": "&&",
    "true": "false",
    "false": "true",
    "True": "False",
    "False": "True",
    "and": "or",
    "or": "and",
}
# Operators as whole tokens of a C-like line with its strings and comments blanked: spaces
# around them keep generics (`Vec<u8>`), arrows (`->`, `=>`), shifts and unary minus out.
C_OPERATORS = re.compile(r"(?<= )(===|!==|==|!=|<=|>=|<|>|\+=|-=|\+|-|&&|\|\|)(?= )")
C_WORDS = re.compile(r"\b(true|false)\b")
INTEGER = re.compile(r"(?<![\w.])(0x[0-9a-fA-F]+|[0-9]+)(?![\w.])")


def candidate(path, line, col, before, after, op):
    return {"file": path, "line": line, "col": col, "before": before, "after": after, "op": op}


def blank_c_like(text, rust):
    """`text` with every string, char literal and comment replaced by spaces, line by line."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"`" or (c == "'" and not rust):
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                if text[j] == "\n" and c != "`":
                    break
                j += 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + text[j - 1])
            i = j
        elif c == "'" and rust:
            m = re.compile(r"'(\\.[^']*|[^\\'])'").match(text, i)
            if m:
                out.append(" " * len(m.group(0)))
                i = m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def balanced(code):
    return all(code.count(a) == code.count(b) for a, b in ("()", "[]", "{}"))


def c_like(path, text, rust):
    code_lines = blank_c_like(text, rust).split("\n")
    lines = text.split("\n")
    out = []
    for number, (line, code) in enumerate(zip(lines, code_lines), 1):
        if rust and code.strip().startswith("#[cfg(test)]"):
            break
        stripped = code.strip()
        if not stripped or stripped.startswith(("#", "use ", "import ", "export type", "type ")):
            continue
        # A Rust `+` between trait bounds is no arithmetic.
        bounds = rust and re.search(r"\b(fn|struct|enum|impl|trait|type|where)\b|^\s*\w+:", code)
        for m in C_OPERATORS.finditer(code):
            if bounds and m.group(1) in ("+", "-"):
                continue
            out.append(candidate(path, number, m.start(), m.group(1), SWAPS[m.group(1)], "operator"))
        for m in C_WORDS.finditer(code):
            out.append(candidate(path, number, m.start(), m.group(1), SWAPS[m.group(1)], "boolean"))
        for m in INTEGER.finditer(code):
            value = m.group(1)
            bumped = hex(int(value, 16) + 1) if value.startswith("0x") else str(int(value) + 1)
            out.append(candidate(path, number, m.start(), value, bumped, "constant+1"))
        # A statement on one line, whole: it ends with `;` (or is a `return`, a call or an
        # assignment in a file without semicolons), and leaves no bracket open.
        nxt = code_lines[number].strip() if number < len(code_lines) else ""
        one_line = balanced(stripped) and not nxt.startswith((".", "?", ":", "+", "-", "*", "&&", "||"))
        if rust:
            statement = stripped.endswith(";") and not stripped.startswith(("let ", "pub ", "mod ", "const ", "static ", "type "))
        else:
            statement = re.match(r"(return\b|[\w.\[\]]+\s*(=|\+=|-=|\+\+|--)|[\w.]+\()", stripped) is not None and not stripped.endswith(("{", "(", "[", ",", "=>", "=", "+", "-", "&&", "||", "?", ":"))
        if statement and one_line:
            out.append(candidate(path, number, 0, line, "", "delete statement"))
    return out


def python(path, text):
    out = []
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for tok in tokens:
        kind, string, (row, col) = tok.type, tok.string, tok.start
        if kind == tokenize.OP and string in SWAPS:
            out.append(candidate(path, row, col, string, SWAPS[string], "operator"))
        elif kind == tokenize.NAME and string in ("True", "False", "and", "or"):
            out.append(candidate(path, row, col, string, SWAPS[string], "boolean" if string[0].isupper() else "operator"))
        elif kind == tokenize.NUMBER and re.fullmatch(r"0x[0-9a-fA-F]+|[0-9]+", string):
            bumped = hex(int(string, 16) + 1) if string.startswith("0x") else str(int(string) + 1)
            out.append(candidate(path, row, col, string, bumped, "constant+1"))
    # Whole simple statements on one line: made `pass`.
    lines = text.split("\n")
    starts = {}
    for tok in tokens:
        if tok.type == tokenize.NEWLINE and tok.start[0] == tok.end[0]:
            starts[tok.start[0]] = True
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if number in starts and re.match(r"(return\b|[\w.\[\]]+\s*(=|\+=|-=)[^=]|[\w.]+\()", stripped):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(candidate(path, number, 0, line, indent + "pass", "statement made pass"))
    return [c for c in out if compiles(text, c)]


def apply(text, c):
    lines = text.split("\n")
    line = lines[c["line"] - 1]
    if c["op"] in ("delete statement", "statement made pass"):
        assert line == c["before"], (line, c)
        if c["after"]:
            lines[c["line"] - 1] = c["after"]
        else:
            del lines[c["line"] - 1]
    else:
        col, before = c["col"], c["before"]
        assert line[col : col + len(before)] == before, (line, c)
        lines[c["line"] - 1] = line[:col] + c["after"] + line[col + len(before) :]
    return "\n".join(lines)


def compiles(text, c):
    try:
        compile(apply(text, c), c["file"], "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def main():
    command = sys.argv[1]
    if command == "list":
        seed, root, files = int(sys.argv[2]), sys.argv[3], sys.argv[4:]
        found = []
        for path in sorted(files):
            text = open(f"{root}/{path}", encoding="utf-8").read()
            if path.endswith(".py"):
                found += python(path, text)
            else:
                found += c_like(path, text, rust=path.endswith(".rs"))
        random.Random(seed).shuffle(found)
        for c in found:
            print(json.dumps(c))
    elif command == "apply":
        root, c = sys.argv[2], json.loads(sys.argv[3])
        path = f"{root}/{c['file']}"
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(apply(text, c))
        shown = [json.dumps(c[k].strip())[1:-1].replace("\t", " ") for k in ("before", "after")]
        print("\t".join([c["file"], str(c["line"]), c["op"], *shown]))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
