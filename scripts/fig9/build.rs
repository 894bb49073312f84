// SPDX-License-Identifier: GPL-2.0

//! The uapi check: `include/uapi/timerwheel.h` is the source of truth, and
//! `include/uapi/timerwheel.rs` (its Rust twin, compiled into the module and into this tool) must
//! say the same. bindgen reads the header; this script then writes compile-time assertions that
//! fail the build when the two disagree:
//!
//! - every constant of the header exists in the twin with the same value (a string constant
//!   missing from the twin is only warned about: the tool takes it from the header);
//! - every structure of the header exists in the twin with the same fields in the same order,
//!   and the same size, alignment, field offsets and field sizes; the twin has nothing more;
//! - every `TW_IOC_*` request of the header equals the opcode this tool computes with rustix
//!   (`crate::device::TW_IOC_*`), as clang evaluates the header's own `_IOR`/`_IOW`/`_IOWR`;
//! - the module's requests (`glue/uapi.rs`, the kernel crate's `_IOR::<T>(TW_IOC_MAGIC, nr)` and
//!   the like, which the module alone compiles) are the header's: the same names, and each the
//!   opcode rustix computes from the same direction, structure and number.
//!
//! `TW_UAPI_HEADER=path` checks another header instead, and `TW_UAPI_GLUE=path` another copy of
//! `glue/uapi.rs` (to see the check fail on a changed copy); libclang is looked up in
//! `LIBCLANG_PATH`, by default LLVM 19's (scripts/setup.sh).

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::path::PathBuf;

/// Where scripts/setup.sh installs libclang (scripts/lib.sh exports the same).
const DEFAULT_LIBCLANG: &str = "/usr/lib/llvm-19/lib";

fn main() {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let uapi = dir.join("../../include/uapi");
    let header = env::var_os("TW_UAPI_HEADER").map_or(uapi.join("timerwheel.h"), PathBuf::from);
    let twin = uapi.join("timerwheel.rs");
    let glue = env::var_os("TW_UAPI_GLUE").map_or(dir.join("../../glue/uapi.rs"), PathBuf::from);
    for f in [&header, &twin, &glue] {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    println!("cargo:rerun-if-env-changed=TW_UAPI_HEADER");
    println!("cargo:rerun-if-env-changed=TW_UAPI_GLUE");
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
    if env::var_os("LIBCLANG_PATH").is_none() {
        env::set_var("LIBCLANG_PATH", DEFAULT_LIBCLANG);
    }
    let c = bindings(&header);
    let twin_text = fs::read_to_string(&twin).unwrap_or_else(|e| panic!("{}: {e}", twin.display()));
    let glue_text = fs::read_to_string(&glue).unwrap_or_else(|e| panic!("{}: {e}", glue.display()));
    // Each error names the file that disagrees with the header.
    let against = |file: &Path| {
        let what = format!(
            "uapi check: {} against {}",
            file.display(),
            header.display()
        );
        move |e: String| format!("{what}: {e}")
    };
    let check = Check::new(&c, &twin_text)
        .map_err(against(&twin))
        .and_then(|mut check| {
            check.glue(&c, &glue_text).map_err(against(&glue))?;
            Ok(check)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    for w in &check.warnings {
        println!("cargo:warning={w}");
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    write(&out.join("uapi_c.rs"), &c);
    write(&out.join("uapi_check.rs"), &check.code);
}

fn write(path: &Path, text: &str) {
    fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The `TW_IOC_*` requests the header defines with `_IO*`.
fn requests(header: &str) -> Vec<String> {
    header
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("#define"))
                .then(|| words.next())
                .flatten()
                .filter(|name| name.starts_with("TW_IOC_"))
                .filter(|_| words.next().is_some_and(|v| v.starts_with("_IO")))
                .map(String::from)
        })
        .collect()
}

/// bindgen's Rust for the header, with each request's value as clang computes it: an enum
/// constant `TWCHECK_<request>` (bindgen cannot evaluate `_IOR` in a macro, clang can in an
/// enum).
fn bindings(header: &Path) -> String {
    let text = fs::read_to_string(header).unwrap_or_else(|e| panic!("{}: {e}", header.display()));
    let mut wrapper = format!("#include \"{}\"\nenum {{\n", header.display());
    for r in requests(&text) {
        let _ = writeln!(wrapper, "\tTWCHECK_{r} = {r},");
    }
    wrapper.push_str("};\n");
    bindgen::Builder::default()
        .header_contents("tw_check.h", &wrapper)
        .allowlist_type("tw_.*")
        .allowlist_var("TW_.*|TWCHECK_.*")
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on {}: {e}", header.display()))
        .to_string()
}

/// What one side declares: constants (string constants apart) and structures with their fields.
#[derive(Default)]
struct Decls {
    consts: Vec<String>,
    strings: BTreeMap<String, String>,
    structs: BTreeMap<String, Vec<String>>,
}

impl Decls {
    fn parse(text: &str) -> Result<Decls, String> {
        let file = syn::parse_file(text).map_err(|e| format!("parse: {e}"))?;
        let mut d = Decls::default();
        for item in file.items {
            match item {
                syn::Item::Const(c) => match string_value(&c.expr) {
                    Some(s) => {
                        d.strings.insert(c.ident.to_string(), s);
                    }
                    None => d.consts.push(c.ident.to_string()),
                },
                syn::Item::Struct(s) => {
                    let fields = s
                        .fields
                        .iter()
                        .map(|f| f.ident.as_ref().map_or("?".into(), ToString::to_string))
                        .collect();
                    d.structs.insert(s.ident.to_string(), fields);
                }
                _ => {}
            }
        }
        Ok(d)
    }

    fn has(&self, name: &str) -> bool {
        self.consts.iter().any(|c| c == name) || self.strings.contains_key(name)
    }
}

/// The text of a string constant: `"..."`, or bindgen's `b"...\0"`.
fn string_value(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Lit(lit) = expr else {
        return None;
    };
    match &lit.lit {
        syn::Lit::Str(s) => Some(s.value()),
        syn::Lit::ByteStr(b) => {
            let v = b.value();
            Some(String::from_utf8_lossy(v.strip_suffix(b"\0").unwrap_or(&v)).into_owned())
        }
        _ => None,
    }
}

/// rustix's opcode for a request of the module, `_IOR::<T>(TW_IOC_MAGIC, nr)` and the like (or
/// `_IO(TW_IOC_MAGIC, nr)`): the same direction, with `T` from the Rust twin (or a primitive
/// type) and the same number.
fn glue_request(expr: &syn::Expr) -> Option<String> {
    let syn::Expr::Call(call) = expr else {
        return None;
    };
    let syn::Expr::Path(func) = &*call.func else {
        return None;
    };
    let seg = func.path.segments.last()?;
    let direction = match seg.ident.to_string().as_str() {
        "_IO" => "none",
        "_IOR" => "read",
        "_IOW" => "write",
        "_IOWR" => "read_write",
        _ => return None,
    };
    let ty = match &seg.arguments {
        syn::PathArguments::None if direction == "none" => String::new(),
        syn::PathArguments::AngleBracketed(generics) if direction != "none" => {
            let [syn::GenericArgument::Type(syn::Type::Path(ty))] =
                generics.args.iter().collect::<Vec<_>>()[..]
            else {
                return None;
            };
            // A structure of the twin, or a fixed-width integer: what the uapi passes.
            let ty = ty.path.get_ident()?.to_string();
            if ty.starts_with("tw_") {
                format!("::<rs::{ty}>")
            } else if ["u8", "u16", "u32", "u64", "i32", "i64"].contains(&ty.as_str()) {
                format!("::<{ty}>")
            } else {
                return None;
            }
        }
        _ => return None,
    };
    let [magic, nr] = call.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let magic = match magic {
        syn::Expr::Path(p) if p.path.is_ident("TW_IOC_MAGIC") => "rs::TW_IOC_MAGIC as u8",
        _ => return None,
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(nr),
        ..
    }) = nr
    else {
        return None;
    };
    // The number alone, whatever its suffix: the request's `nr` is a u8 in `_IOC`.
    let nr = nr.base10_parse::<u8>().ok()?;
    Some(format!(
        "rustix::ioctl::opcode::{direction}{ty}({magic}, {nr})"
    ))
}

/// The generated assertions, and what is worth a warning.
struct Check {
    code: String,
    warnings: Vec<String>,
}

impl Check {
    fn new(c_text: &str, twin_text: &str) -> Result<Check, String> {
        let c = Decls::parse(c_text).map_err(|e| format!("bindgen output: {e}"))?;
        let rs = Decls::parse(twin_text).map_err(|e| format!("timerwheel.rs: {e}"))?;
        let mut check = Check {
            code: String::from(PRELUDE),
            warnings: Vec::new(),
        };
        check.constants(&c, &rs)?;
        check.strings(&c, &rs);
        check.structs(&c, &rs)?;
        Ok(check)
    }

    fn assert(&mut self, cond: &str, what: &str) {
        let _ = writeln!(
            self.code,
            "const _: () = assert!({cond}, \"{what}: timerwheel.h and timerwheel.rs disagree\");"
        );
    }

    fn constants(&mut self, c: &Decls, rs: &Decls) -> Result<(), String> {
        for name in &c.consts {
            if let Some(request) = name.strip_prefix("TWCHECK_") {
                let cond = format!("c::{name} as u64 == crate::device::{request} as u64");
                self.assert(&cond, &format!("{request} (rustix's opcode)"));
            } else if rs.has(name) {
                self.assert(&format!("c::{name} as i128 == rs::{name} as i128"), name);
            } else {
                return Err(format!("the header defines {name}, the Rust twin does not"));
            }
        }
        match rs.consts.iter().find(|n| !c.has(n)) {
            Some(extra) => Err(format!(
                "the Rust twin defines {extra}, the header does not"
            )),
            None => Ok(()),
        }
    }

    /// String constants: compared where the twin has them, and all of them offered to the tool
    /// as `&str` in `header`, so that it can take them from the header.
    fn strings(&mut self, c: &Decls, rs: &Decls) {
        self.code
            .push_str("\n/// The header's string constants.\npub mod header {\n");
        for (name, value) in &c.strings {
            let _ = writeln!(self.code, "    pub const {name}: &str = {value:?};");
        }
        self.code.push_str("}\n\n");
        for name in c.strings.keys() {
            if rs.strings.contains_key(name) {
                self.assert(&format!("str_eq(header::{name}, rs::{name})"), name);
            } else {
                self.warnings.push(format!(
                    "include/uapi/timerwheel.rs lacks the header's {name}: fig9 takes it from \
                     the header"
                ));
            }
        }
    }

    /// The module's requests, in `glue/uapi.rs`: each `const TW_IOC_*: u32 = _IO*::<T>(TW_IOC_MAGIC,
    /// nr)` must be the header's request of that name, which rustix computes likewise from the
    /// same direction, type and number; and the module must have every request of the header.
    fn glue(&mut self, c_text: &str, glue_text: &str) -> Result<(), String> {
        let c = Decls::parse(c_text).map_err(|e| format!("bindgen output: {e}"))?;
        let file = syn::parse_file(glue_text).map_err(|e| format!("parse: {e}"))?;
        let mut seen = Vec::new();
        for item in file.items {
            let syn::Item::Const(k) = item else { continue };
            let name = k.ident.to_string();
            if !name.starts_with("TW_IOC_") {
                continue;
            }
            let request = glue_request(&k.expr).ok_or_else(|| {
                format!(
                    "{name} is not `_IO(TW_IOC_MAGIC, nr)` or `_IOR|_IOW|_IOWR::<T>(TW_IOC_MAGIC, \
                     nr)`, T a tw_ structure or a fixed-width integer, nr a number below 256"
                )
            })?;
            if !c.consts.contains(&format!("TWCHECK_{name}")) {
                return Err(format!("the module defines {name}, the header does not"));
            }
            let cond = format!("c::TWCHECK_{name} as u64 == {request} as u64");
            let _ = writeln!(
                self.code,
                "const _: () = assert!({cond}, \"{name}: timerwheel.h and the module's \
                 glue/uapi.rs disagree\");"
            );
            seen.push(name);
        }
        match c
            .consts
            .iter()
            .filter_map(|n| n.strip_prefix("TWCHECK_"))
            .find(|n| !seen.iter().any(|s| s == n))
        {
            Some(missing) => Err(format!("the header defines {missing}, the module does not")),
            None => Ok(()),
        }
    }

    fn structs(&mut self, c: &Decls, rs: &Decls) -> Result<(), String> {
        for (name, fields) in &c.structs {
            let Some(mine) = rs.structs.get(name) else {
                return Err(format!(
                    "the header has struct {name}, the Rust twin does not"
                ));
            };
            if mine != fields {
                return Err(format!(
                    "struct {name}: the header's fields are {fields:?}, the Rust twin's {mine:?}"
                ));
            }
            for f in ["size_of", "align_of"] {
                let cond =
                    format!("core::mem::{f}::<c::{name}>() == core::mem::{f}::<rs::{name}>()");
                self.assert(&cond, &format!("{f}::<{name}>"));
            }
            for field in fields {
                let off = format!(
                    "core::mem::offset_of!(c::{name}, {field}) == \
                     core::mem::offset_of!(rs::{name}, {field})"
                );
                self.assert(&off, &format!("offset of {name}.{field}"));
                let size = format!(
                    "field_size(|s: &c::{name}| &s.{field}) == field_size(|s: &rs::{name}| &s.{field})"
                );
                self.assert(&size, &format!("size of {name}.{field}"));
            }
        }
        match rs.structs.keys().find(|n| !c.structs.contains_key(*n)) {
            Some(extra) => Err(format!(
                "the Rust twin has struct {extra}, the header does not"
            )),
            None => Ok(()),
        }
    }
}

const PRELUDE: &str = r#"// Generated by build.rs from include/uapi/timerwheel.h and include/uapi/timerwheel.rs.

/// The header as bindgen sees it.
#[allow(non_camel_case_types, non_upper_case_globals, dead_code, clippy::all)]
pub mod c {
    include!(concat!(env!("OUT_DIR"), "/uapi_c.rs"));
}

use crate::uapi_defs as rs;

/// The size of the field `_f` selects.
const fn field_size<S, F>(_f: fn(&S) -> &F) -> usize {
    core::mem::size_of::<F>()
}

/// `a == b`, in a constant.
#[allow(dead_code)]
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

"#;
