//! Picks the memory layout of the QEMU machine that runs the firmware for the
//! target being built (cortex-m-rt's `link.x` includes `memory.x`; for
//! riscv-rt, `.cargo/config.toml` passes `-Tmemory.x` before `-Tlink.x`).

use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let machine = if target.starts_with("thumbv6m") {
        "microbit"
    } else if target.starts_with("thumbv7m") {
        "lm3s6965evb"
    } else if target.starts_with("thumbv7em") {
        "mps2-an386"
    } else if target.starts_with("riscv32") {
        "virt"
    } else {
        panic!("tripword-on-target: no QEMU machine for target `{target}`");
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy(format!("memory/{machine}.x"), out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-env=TRIPWORD_QEMU_MACHINE={machine}");
    println!("cargo:rustc-env=TRIPWORD_TARGET={target}");
    // Cortex-M0 has no compare-and-swap: this firmware gives portable-atomic
    // its `critical-section` backend there (see Cargo.toml).
    println!("cargo::rustc-check-cfg=cfg(cs_atomics)");
    if target.starts_with("thumbv6m") {
        println!("cargo:rustc-cfg=cs_atomics");
    }
    println!("cargo:rerun-if-changed=memory");
    println!("cargo:rerun-if-changed=build.rs");
}
