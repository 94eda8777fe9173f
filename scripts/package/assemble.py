#!/usr/bin/env python3
"""Assembles checkpoint's packages from already-built release binaries (standard library only).

    assemble.py TARGET_TRIPLE BIN_DIR OUT_DIR STAGE_DIR

writes into OUT_DIR:

- the Python wheel `checkpoint_gate-VERSION-py3-none-PLATFORM.whl`, in the shape maturin's
  `bindings = "bin"` gives ruff's and uv's wheels: the eight binaries under
  `checkpoint_gate-VERSION.data/scripts/` (pip puts them in the environment's `bin`), METADATA,
  WHEEL and a RECORD with sha256 hashes, the licenses under `dist-info/licenses/`;
- the archive `checkpoint-gate-VERSION-TARGET.tar.gz` that the crates' `cargo binstall` metadata
  (`[package.metadata.binstall]`) names: the eight binaries and the licenses in one directory;

and into STAGE_DIR the two npm package directories, in the shape of biome's and esbuild's: `main`
(`checkpoint-gate`: a Node launcher per binary, optional dependencies on one package per
platform) and `platform` (`checkpoint-gate-OS-CPU[-LIBC]`, with `os`/`cpu`/`libc` and the
binaries). scripts/package.sh runs `npm pack` on them. It prints one line per artefact.

The version is the workspace's (`[workspace.package] version` in Cargo.toml).
"""

import base64
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import struct
import sys
import tarfile
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The name in each registry: `checkpoint` and `checkpoint-cli` are taken on PyPI, npm and
# crates.io; `checkpoint-gate` was free on all three.
NAME = "checkpoint-gate"
SUMMARY = "A stop gate and journal for AI coding agents: they stop only when their work is validated"
BINARIES = [
    "checkpoint",
    "checkpoint-claude",
    "checkpoint-gemini",
    "checkpoint-codex",
    "checkpoint-copilot",
    "checkpoint-opencode",
    "checkpoint-qwen",
    "checkpoint-droid",
]
LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"]

# The release targets: the wheel's platform tag (None: read from the binaries), the npm package's
# suffix and its `os`, `cpu` and `libc`, the ELF machine of its binaries (None: not ELF).
TARGETS = {
    "x86_64-unknown-linux-gnu": (None, "linux-x64-gnu", "linux", "x64", "glibc", 62),
    "aarch64-unknown-linux-gnu": (None, "linux-arm64-gnu", "linux", "arm64", "glibc", 183),
    "x86_64-unknown-linux-musl": ("musllinux_1_2_x86_64", "linux-x64-musl", "linux", "x64", "musl", 62),
    "aarch64-unknown-linux-musl": ("musllinux_1_2_aarch64", "linux-arm64-musl", "linux", "arm64", "musl", 183),
    # Rust's own minimum macOS versions for these targets.
    "x86_64-apple-darwin": ("macosx_10_12_x86_64", "darwin-x64", "darwin", "x64", None, None),
    "aarch64-apple-darwin": ("macosx_11_0_arm64", "darwin-arm64", "darwin", "arm64", None, None),
}
MANYLINUX_ARCH = {"x86_64-unknown-linux-gnu": "x86_64", "aarch64-unknown-linux-gnu": "aarch64"}

# Zip and tar entries get this time (or SOURCE_DATE_EPOCH's): the same binaries make the same
# packages.
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's earliest


def fail(message):
    sys.exit(f"package: {message}")


def cargo_version():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def pep440(version):
    """Cargo's SemVer as a Python version: 1.2.3-rc.1 -> 1.2.3rc1."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.(\d+))?", version)
    if not m:
        fail(f"version {version!r}: only X.Y.Z and X.Y.Z-alpha|beta|rc.N have a Python spelling")
    release, pre, n = m.groups()
    return release + ({"alpha": "a", "beta": "b", "rc": "rc"}[pre] + n if pre else "")


def elf_facts(path, machine):
    """(dynamically linked, highest GLIBC_2.N it names) of an ELF executable for `machine`."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail(f"{path}: not a 64-bit little-endian ELF executable")
    (e_machine,) = struct.unpack_from("<H", data, 18)
    if e_machine != machine:
        fail(f"{path}: built for ELF machine {e_machine}, not this target's ({machine})")
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    # PT_INTERP (3): the dynamic loader; a static executable has none.
    dynamic = any(
        struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3 for i in range(phnum)
    )
    needed = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)] if dynamic else []
    return dynamic, max(needed, default=0)


def wheel_platform(target, binaries):
    tag, _, _, _, _, machine = TARGETS[target]
    if tag:
        return [tag]
    arch = MANYLINUX_ARCH[target]
    # A static executable needs no glibc at all; a dynamic one the newest version it names.
    newest = max(elf_facts(b, machine)[1] for b in binaries)
    minor = max(newest, 17)
    tags = [f"manylinux_2_{minor}_{arch}"]
    if minor == 17:
        tags.append(f"manylinux2014_{arch}")  # the same, for pip before 20.3
    return tags


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def zip_entry(name, executable=False):
    info = zipfile.ZipInfo(name, date_time=zip_time())
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix: the mode below is read
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    return info


def zip_time():
    return time.gmtime(max(EPOCH, 315532800))[:6]


def wheel(target, binaries, out_dir, version):
    dist = NAME.replace("-", "_")
    pyversion = pep440(version)
    platforms = wheel_platform(target, binaries)
    data_dir = f"{dist}-{pyversion}.data"
    info_dir = f"{dist}-{pyversion}.dist-info"
    readme = (ROOT / "scripts/package/README.md").read_text()
    metadata = "\n".join(
        [
            "Metadata-Version: 2.4",
            f"Name: {NAME}",
            f"Version: {pyversion}",
            f"Summary: {SUMMARY}",
            "License-Expression: MIT OR Apache-2.0",
            *[f"License-File: {name}" for name in LICENSES],
            f"Project-URL: Repository, {repository()}",
            "Description-Content-Type: text/markdown",
            "",
            readme,
        ]
    )
    wheel_file = "".join(
        [
            "Wheel-Version: 1.0\n",
            "Generator: checkpoint scripts/package.sh\n",
            "Root-Is-Purelib: false\n",
            *[f"Tag: py3-none-{p}\n" for p in platforms],
        ]
    )
    entries = [(f"{data_dir}/scripts/{b.name}", b.read_bytes(), True) for b in binaries]
    entries += [(f"{info_dir}/licenses/{n}", (ROOT / n).read_bytes(), False) for n in LICENSES]
    entries += [
        (f"{info_dir}/METADATA", metadata.encode(), False),
        (f"{info_dir}/WHEEL", wheel_file.encode(), False),
    ]
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data, _ in entries)
    record += f"{info_dir}/RECORD,,\n"
    entries.append((f"{info_dir}/RECORD", record.encode(), False))
    path = out_dir / f"{dist}-{pyversion}-py3-none-{'.'.join(platforms)}.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data, executable in entries:
            z.writestr(zip_entry(name, executable), data)
    return path


def archive(target, binaries, out_dir, version):
    """The tarball `[package.metadata.binstall]` in the crates' manifests points at."""
    top = f"{NAME}-{version}-{target}"
    path = out_dir / f"{top}.tar.gz"
    files = [(b.name, b.read_bytes(), 0o755) for b in binaries]
    files += [(n, (ROOT / n).read_bytes(), 0o644) for n in LICENSES]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in files:
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode, info.mtime = len(data), mode, EPOCH
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(raw.getvalue(), mtime=EPOCH))
    return path


def repository():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["repository"]


def npm(target, binaries, stage, version):
    _, suffix, os_name, cpu, libc, _ = TARGETS[target]
    common = {
        "version": version,
        "license": "MIT OR Apache-2.0",
        "repository": {"type": "git", "url": repository()},
    }
    main, platform = stage / "main", stage / "platform"
    for d in (main, platform):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for n in LICENSES:
            shutil.copyfile(ROOT / n, d / n)
    # The platform package: the binaries, installed only where `os`, `cpu` (and `libc`) match.
    (platform / "bin").mkdir()
    for b in binaries:
        shutil.copyfile(b, platform / "bin" / b.name)
        (platform / "bin" / b.name).chmod(0o755)
    platform_manifest = {
        "name": f"{NAME}-{suffix}",
        **common,
        "description": f"The {target} binaries of {NAME} (installed by {NAME})",
        "os": [os_name],
        "cpu": [cpu],
        **({"libc": [libc]} if libc else {}),
        "files": ["bin", *LICENSES],
        "preferUnplugged": True,
    }
    write_json(platform / "package.json", platform_manifest)
    (platform / "README.md").write_text(
        f"# {NAME}-{suffix}\n\nThe `{target}` binaries of [`{NAME}`](https://www.npmjs.com/package/{NAME}); install that package instead.\n"
    )
    # The main package: a launcher per binary, the platform packages as optional dependencies
    # (npm installs the one whose `os`/`cpu`/`libc` match).
    (main / "bin").mkdir()
    (main / "lib").mkdir()
    shutil.copyfile(ROOT / "scripts/package/run.js", main / "lib/run.js")
    for name in BINARIES:
        launcher = main / "bin" / f"{name}.js"
        launcher.write_text(
            f"#!/usr/bin/env node\n'use strict';\nrequire('../lib/run.js').run({json.dumps(name)});\n"
        )
        launcher.chmod(0o755)
    shutil.copyfile(ROOT / "scripts/package/README.md", main / "README.md")
    # The package's module is checkpoint's OpenCode plugin (the one the repository commits):
    # `"plugin": ["checkpoint-gate"]` in opencode.json loads it.
    shutil.copyfile(ROOT / "plugins/opencode/checkpoint.js", main / "opencode.mjs")
    main_manifest = {
        "name": NAME,
        **common,
        "description": SUMMARY,
        "main": "opencode.mjs",
        "bin": {name: f"bin/{name}.js" for name in BINARIES},
        "files": ["bin", "lib", "opencode.mjs", *LICENSES],
        "engines": {"node": ">=18"},
        "optionalDependencies": {
            f"{NAME}-{t[1]}": version for t in sorted(TARGETS.values(), key=lambda t: t[1])
        },
    }
    write_json(main / "package.json", main_manifest)
    return main, platform


def write_json(path, value):
    path.write_text(json.dumps(value, indent=2) + "\n")


def main(argv):
    if len(argv) != 5:
        fail("usage: assemble.py TARGET_TRIPLE BIN_DIR OUT_DIR STAGE_DIR")
    target, bin_dir, out_dir, stage = argv[1], Path(argv[2]), Path(argv[3]), Path(argv[4])
    if target not in TARGETS:
        fail(f"unknown target {target!r}; the release targets are: {', '.join(TARGETS)}")
    binaries = [bin_dir / name for name in BINARIES]
    missing = [str(b) for b in binaries if not b.is_file()]
    if missing:
        fail(f"missing binaries (build them first): {', '.join(missing)}")
    machine = TARGETS[target][5]
    if machine is not None:
        for b in binaries:
            elf_facts(b, machine)
    version = cargo_version()
    out_dir.mkdir(parents=True, exist_ok=True)
    print(wheel(target, binaries, out_dir, version))
    print(archive(target, binaries, out_dir, version))
    for d in npm(target, binaries, stage, version):
        print(d)


if __name__ == "__main__":
    main(sys.argv)
