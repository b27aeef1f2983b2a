//! The prepared image as bytes: an idle VM that has run the prelude (its
//! symbols, globals, global syntax, heap and compiled code), written at
//! build time by a native program and loaded by `Engine::new` in every
//! face, so that no engine compiles the prelude when it starts.
//!
//! The bytes reproduce the VM exactly: symbols and globals keep their
//! numbers, every heap object its slot (free slots and the free list
//! included), templates their order in the prelude's image (which dumps
//! name them by). An engine loaded from them is in the state of one that
//! compiled the prelude; a test writes the image of each and compares the
//! bytes.
//!
//! Layout (integers as in `image.rs`):
//!
//! ```text
//! "ARBPREP\0"  format (u32 LE)  engine fingerprint (32 bytes)
//! source hash (32 bytes: the core's code the image was made by)
//! payload length (u64 LE)  payload  BLAKE3 of everything before (32 bytes)
//! payload: the graph of image.rs over every symbol, global, slot and
//!          template, then the global values, the evaluation stamps, the
//!          prelude's templates in order, the heap's free list and
//!          counters, the global syntax
//! ```
//!
//! Loading checks the magic, the format, the source hash (an image made
//! from other code is stale), the length and the hash, then decodes
//! strictly; any failure is an error, and the engine compiles the prelude
//! instead (`api`).

use std::rc::Rc;

use super::image::{self, Dumper, In, Out, PreludeImage, R};
use super::{PreludeHooks, Vm};
use crate::builtins::PrimTable;
use crate::compiler::globals::GlobalSyntax;
use crate::compiler::special::Special;
use crate::complex::Complex;
use crate::heap::HeapLayout;
use crate::symbol::Sym;
use crate::syntax::scope::Macro;
use crate::syntax::{Atom, Ident, Syn};
use crate::value::code::Template;

const MAGIC: &[u8; 8] = b"ARBPREP\0";
/// The layout of a prepared image; a change makes older images stale.
pub const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 32 + 8;
const HASH_LEN: usize = 32;
/// The deepest syntax a macro of the image may hold.
const MAX_SYNTAX_DEPTH: usize = 1000;

impl Vm {
    /// The prepared image of this idle VM, which has just loaded the
    /// prelude, for code whose source hash is `source`. Fails on what the
    /// format cannot hold (a macro defined in a local scope or by a macro,
    /// libraries defined or imported by the prelude), so an image is
    /// never made that would load into another state.
    pub fn prepared_image(&self, source: &[u8; 32]) -> Result<Vec<u8>, String> {
        let image = self.image.as_ref().ok_or("the prelude is not loaded")?;
        if !self.stack.is_empty() || !self.frames.is_empty() {
            return Err("the VM is running".into());
        }
        let g = &self.globals;
        if !g.libraries.is_empty()
            || !g.aliases.is_empty()
            || !g.hidden.is_empty()
            || !g.imported.is_empty()
            || !g.bundled_exports.is_empty()
            || !g.bundled_forms.is_empty()
        {
            return Err(
                "the prelude defined or imported libraries, which an image cannot hold".into(),
            );
        }
        let layout = self.heap.layout()?;
        let empty = PreludeImage::default();
        let mut d = Dumper::whole(self, &image.templates);
        let mut order = Vec::with_capacity(image.templates.len());
        for t in &image.templates {
            order.push(
                d.template_number(t)
                    .ok_or("a prelude template was not found")?,
            );
        }
        let mut syntax = Out::default();
        write_syntax(&mut syntax, self)?;
        let payload = d.graph(&empty, |d, body| {
            body.u(self.globals.values.len() as u64);
            for v in &self.globals.values {
                d.value(body, *v, &empty);
            }
            body.u(self.eval_stamp as u64);
            body.u(self.global_stamps.len() as u64);
            for s in &self.global_stamps {
                body.u(*s as u64);
            }
            body.u(order.len() as u64);
            for i in &order {
                body.u(*i as u64);
            }
            body.u(layout.free_head as u64);
            body.u(layout.free_slots);
            body.u(layout.collections);
            body.u(layout.epoch as u64);
            body.u(layout.births.len() as u64);
            for b in &layout.births {
                body.u(*b as u64);
            }
            body.0.extend_from_slice(&syntax.0);
        });
        let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len() + HASH_LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&FORMAT.to_le_bytes());
        bytes.extend_from_slice(&image.fingerprint);
        bytes.extend_from_slice(source);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&payload);
        let hash = blake3::hash(&bytes);
        bytes.extend_from_slice(hash.as_bytes());
        Ok(bytes)
    }

    /// A VM with `prims` bound, in the state the prepared image `bytes`
    /// records, if they were made from code whose source hash is `source`
    /// and whose prelude is `prelude`, and they are whole.
    pub fn from_prepared_image(
        prims: PrimTable,
        bytes: &[u8],
        source: &[u8; 32],
        prelude: &str,
    ) -> Result<Vm, String> {
        if bytes.len() < HEADER_LEN + HASH_LEN || &bytes[..8] != MAGIC {
            return Err("not a prepared image of Arbores (no ARBPREP header)".into());
        }
        let format = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
        if format != FORMAT {
            return Err(format!(
                "a prepared image in format {format}; this engine reads format {FORMAT}"
            ));
        }
        if bytes[44..76] != source[..] {
            return Err("a stale prepared image: made from other code than this engine's".into());
        }
        let len = u64::from_le_bytes(bytes[76..84].try_into().unwrap_or_default());
        if len != (bytes.len() - HEADER_LEN - HASH_LEN) as u64 {
            return Err("a truncated or extended prepared image".into());
        }
        let (body, hash) = bytes.split_at(bytes.len() - HASH_LEN);
        if blake3::hash(body).as_bytes() != hash {
            return Err("a damaged prepared image: its hash does not match".into());
        }
        let mut fingerprint = [0u8; 32];
        fingerprint.copy_from_slice(&bytes[12..44]);
        let mut vm = Vm::new(prims);
        if image::fingerprint(&vm, prelude) != fingerprint {
            return Err("a prepared image of another prelude or other primitives".into());
        }
        if vm.heap.slot_count() != 0 {
            return Err("a new VM has objects before its image".into());
        }
        let mut inp = In {
            buf: &body[HEADER_LEN..],
            pos: 0,
            base: HEADER_LEN,
        };
        vm.read_prepared(&mut inp, fingerprint)?;
        Ok(vm)
    }

    fn read_prepared(&mut self, inp: &mut In, fingerprint: [u8; 32]) -> R<()> {
        let empty = PreludeImage::default();
        let mut l = self.read_graph_head(inp, &empty)?;
        // Symbols and globals keep their numbers: the new VM interned
        // the primitives', the special forms' and the compiler's names in
        // the same order first.
        if l.symbols()
            .iter()
            .enumerate()
            .any(|(i, s)| s.0 as usize != i)
            || self.syms.len() != l.symbols().len()
        {
            return inp.err("the image's symbols are not numbered as this engine numbers them");
        }
        if l.global_indexes()
            .iter()
            .enumerate()
            .any(|(i, g)| *g as usize != i)
            || self.globals.values.len() != l.global_indexes().len()
        {
            return inp.err("the image's globals are not numbered as this engine numbers them");
        }
        l.whole_heap = true;
        self.read_graph_body(inp, &mut l)?;
        let n = inp.len()?;
        if n != self.globals.values.len() {
            return inp.err("the image's global values do not match its globals");
        }
        for g in 0..n {
            self.globals.values[g] = self.read_value_of(inp, &l)?;
        }
        self.eval_stamp = inp.u32()?;
        let n = inp.len()?;
        let mut stamps = Vec::with_capacity(n);
        for _ in 0..n {
            stamps.push(inp.u32()?);
        }
        self.global_stamps = stamps;
        let n = inp.len()?;
        let mut templates: Vec<Rc<Template>> = Vec::with_capacity(n);
        for _ in 0..n {
            let i = inp.u()? as usize;
            match l.template(i) {
                Some(t) => templates.push(t),
                None => return inp.err("a prelude template out of range"),
            }
        }
        let layout = HeapLayout {
            free_head: inp.u32()?,
            free_slots: inp.u()?,
            collections: inp.u()?,
            epoch: inp.u32()?,
            births: {
                let n = inp.len()?;
                let mut b = Vec::with_capacity(n);
                for _ in 0..n {
                    b.push(inp.u32()?);
                }
                b
            },
        };
        self.heap.restore_layout(layout)?;
        self.read_syntax(inp)?;
        if inp.pos != inp.buf.len() {
            return inp.err("data after the end");
        }
        self.hooks = prelude_hooks(self);
        self.refresh_inline();
        self.image = Some(Rc::new(PreludeImage::with_templates(
            self,
            fingerprint,
            templates,
        )));
        Ok(())
    }

    fn read_syntax(&mut self, inp: &mut In) -> R<()> {
        let n = inp.len()?;
        let nsyms = self.syms.len();
        let mut syntax = std::collections::BTreeMap::new();
        for _ in 0..n {
            let name = Sym(inp.index(nsyms, "symbol")? as u32);
            let entry = match inp.byte()? {
                0 => {
                    let k = inp.index(Special::ALL.len(), "special form")?;
                    GlobalSyntax::Special(Special::ALL[k].1)
                }
                1 => GlobalSyntax::Macro(Rc::new(read_macro(inp, nsyms)?)),
                _ => return inp.err("unknown kind of global syntax"),
            };
            syntax.insert(name, entry);
        }
        self.globals.syntax = syntax;
        Ok(())
    }
}

/// The globals holding the prelude procedures the VM calls itself.
pub(super) fn prelude_hooks(vm: &mut Vm) -> PreludeHooks {
    // The engine's own cells (`globals::ENGINE_CELL`): a program's
    // definitions of these names do not change what the VM calls.
    let mut global = |name: &str| {
        let cell = format!("{name}{}", crate::compiler::globals::ENGINE_CELL);
        let s = vm.syms.intern(&cell);
        vm.globals.lookup(s).or_else(|| {
            let s = vm.syms.intern(name);
            vm.globals.lookup(s)
        })
    };
    PreludeHooks {
        raise: global("raise"),
        invoke_continuation: global("%invoke-continuation"),
        run_thunks: global("%arb:run-thunks"),
        par_escape: global("%par-escape"),
        ports: [
            global("current-output-port"),
            global("current-error-port"),
            global("current-input-port"),
        ],
    }
}

// ---- global syntax ------------------------------------------------------------

fn write_syntax(out: &mut Out, vm: &Vm) -> Result<(), String> {
    out.u(vm.globals.syntax.len() as u64);
    for (name, entry) in &vm.globals.syntax {
        out.u(name.0 as u64);
        match entry {
            GlobalSyntax::Special(sp) => {
                out.byte(0);
                let k = Special::ALL
                    .iter()
                    .position(|(_, s)| s == sp)
                    .ok_or("a special form with no name")?;
                out.u(k as u64);
            }
            GlobalSyntax::Macro(m) => {
                out.byte(1);
                write_macro(out, m, vm)?;
            }
        }
    }
    Ok(())
}

fn write_macro(out: &mut Out, m: &Macro, vm: &Vm) -> Result<(), String> {
    let name = vm.syms.name(m.name);
    if m.env.is_some() {
        return Err(format!(
            "the macro {name} is defined in a local scope, which an image cannot hold"
        ));
    }
    write_macro_with(out, m, name, "an image", &mut |s| s.0 as u64)
}

/// Writes macro `m` (named `name` in errors) but its scope, each symbol
/// as `sym` numbers it; a renamed identifier is refused, saying what
/// (`what`) cannot hold it. Shared with dumps and snapshots
/// (`vm::image`), which number symbols in their own tables.
pub(super) fn write_macro_with(
    out: &mut Out,
    m: &Macro,
    name: &str,
    what: &str,
    sym: &mut dyn FnMut(Sym) -> u64,
) -> Result<(), String> {
    let mut w = SynWriter {
        out,
        mac: name,
        what,
        sym,
    };
    let s = (w.sym)(m.name);
    w.out.u(s);
    w.out.byte(m.builtin as u8);
    w.ident(&m.ellipsis)?;
    w.out.u(m.literals.len() as u64);
    for l in &m.literals {
        w.ident(l)?;
    }
    w.out.u(m.rules.len() as u64);
    for (pattern, template) in &m.rules {
        w.syn(pattern, 0)?;
        w.syn(template, 0)?;
    }
    Ok(())
}

struct SynWriter<'o, 's> {
    out: &'o mut Out,
    mac: &'s str,
    what: &'s str,
    sym: &'s mut dyn FnMut(Sym) -> u64,
}

impl SynWriter<'_, '_> {
    fn ident(&mut self, id: &Ident) -> Result<(), String> {
        if id.alias.is_some() {
            return Err(format!(
                "the macro {} holds a renamed identifier (made by a macro), which {} cannot hold",
                self.mac, self.what
            ));
        }
        let s = (self.sym)(id.sym);
        self.out.u(s);
        Ok(())
    }

    fn syn(&mut self, s: &Syn, depth: usize) -> Result<(), String> {
        if depth > MAX_SYNTAX_DEPTH {
            return Err(format!(
                "the macro {} is nested too deeply for {}",
                self.mac, self.what
            ));
        }
        match s {
            Syn::Sym(id, p) => {
                self.out.byte(0);
                self.ident(id)?;
                image::pos(self.out, *p);
            }
            Syn::Atom(a, p) => {
                self.out.byte(1);
                write_atom(self.out, a);
                image::pos(self.out, *p);
            }
            Syn::List(items, tail, p) => {
                self.out.byte(2);
                self.out.u(items.len() as u64);
                for x in items.iter() {
                    self.syn(x, depth + 1)?;
                }
                match tail {
                    None => self.out.byte(0),
                    Some(t) => {
                        self.out.byte(1);
                        self.syn(t, depth + 1)?;
                    }
                }
                image::pos(self.out, *p);
            }
            Syn::Vector(items, p) => {
                self.out.byte(3);
                self.out.u(items.len() as u64);
                for x in items.iter() {
                    self.syn(x, depth + 1)?;
                }
                image::pos(self.out, *p);
            }
            Syn::LabelDef(n, x, p) => {
                self.out.byte(4);
                self.out.u(*n as u64);
                self.syn(x, depth + 1)?;
                image::pos(self.out, *p);
            }
            Syn::LabelRef(n, p) => {
                self.out.byte(5);
                self.out.u(*n as u64);
                image::pos(self.out, *p);
            }
        }
        Ok(())
    }
}

fn write_atom(out: &mut Out, a: &Atom) {
    match a {
        Atom::Bool(b) => out.byte(*b as u8),
        Atom::Num(n) => {
            out.byte(2);
            image::num(out, n);
        }
        Atom::Complex(z) => {
            out.byte(3);
            image::num(out, &z.re);
            image::num(out, &z.im);
        }
        Atom::Char(c) => {
            out.byte(4);
            out.u(*c as u64);
        }
        Atom::Str(s) => {
            out.byte(5);
            out.str(s);
        }
        Atom::Bytes(b) => {
            out.byte(6);
            out.bytes(b);
        }
        Atom::Unspecified => out.byte(7),
        Atom::Eof => out.byte(8),
    }
}

fn read_macro(inp: &mut In, nsyms: usize) -> R<Macro> {
    let sym = |inp: &mut In| Ok(Sym(inp.index(nsyms, "symbol")? as u32));
    read_macro_with(inp, &sym, &sym)
}

/// Reads a macro written by `write_macro_with` (with no scope), each
/// symbol by `sym`, its ellipsis by `ellipsis` (which may be none: rules
/// that list the ellipsis among their literals have none).
pub(super) fn read_macro_with(
    inp: &mut In,
    sym: &dyn Fn(&mut In) -> R<Sym>,
    ellipsis: &dyn Fn(&mut In) -> R<Sym>,
) -> R<Macro> {
    let name = sym(inp)?;
    let builtin = inp.byte()? != 0;
    let ellipsis = Ident::plain(ellipsis(inp)?);
    let n = inp.len()?;
    let mut literals = Vec::with_capacity(n);
    for _ in 0..n {
        literals.push(Ident::plain(sym(inp)?));
    }
    let n = inp.len()?;
    let mut rules = Vec::with_capacity(n);
    for _ in 0..n {
        let pattern = read_syn(inp, sym, 0)?;
        let template = read_syn(inp, sym, 0)?;
        rules.push((pattern, template));
    }
    Ok(Macro {
        name,
        literals,
        ellipsis,
        rules,
        env: None,
        builtin,
    })
}

fn read_syns(inp: &mut In, sym: &dyn Fn(&mut In) -> R<Sym>, depth: usize) -> R<Rc<[Syn]>> {
    let n = inp.len()?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(read_syn(inp, sym, depth + 1)?);
    }
    Ok(v.into())
}

fn read_syn(inp: &mut In, sym: &dyn Fn(&mut In) -> R<Sym>, depth: usize) -> R<Syn> {
    if depth > MAX_SYNTAX_DEPTH {
        return inp.err("syntax nested too deeply");
    }
    Ok(match inp.byte()? {
        0 => {
            let id = Ident::plain(sym(inp)?);
            Syn::Sym(id, image::read_pos(inp)?)
        }
        1 => {
            let a = read_atom(inp)?;
            Syn::Atom(a, image::read_pos(inp)?)
        }
        2 => {
            let items = read_syns(inp, sym, depth)?;
            let tail = match inp.byte()? {
                0 => None,
                1 => Some(Rc::new(read_syn(inp, sym, depth + 1)?)),
                _ => return inp.err("a list tail neither absent nor present"),
            };
            Syn::List(items, tail, image::read_pos(inp)?)
        }
        3 => {
            let items = read_syns(inp, sym, depth)?;
            Syn::Vector(items, image::read_pos(inp)?)
        }
        4 => {
            let n = inp.u32()?;
            let x = read_syn(inp, sym, depth + 1)?;
            Syn::LabelDef(n, Rc::new(x), image::read_pos(inp)?)
        }
        5 => {
            let n = inp.u32()?;
            Syn::LabelRef(n, image::read_pos(inp)?)
        }
        _ => return inp.err("unknown kind of syntax"),
    })
}

fn read_atom(inp: &mut In) -> R<Atom> {
    Ok(match inp.byte()? {
        0 => Atom::Bool(false),
        1 => Atom::Bool(true),
        2 => Atom::Num(image::read_real(inp)?),
        3 => {
            let re = image::read_real(inp)?;
            let im = image::read_real(inp)?;
            Atom::Complex(Box::new(Complex { re, im }))
        }
        4 => {
            let c = inp.u32()?;
            Atom::Char(char::from_u32(c).ok_or("a character that is not one")?)
        }
        5 => Atom::Str(Rc::from(inp.str()?)),
        6 => Atom::Bytes(Rc::from(inp.bytes()?)),
        7 => Atom::Unspecified,
        8 => Atom::Eof,
        _ => return inp.err("unknown kind of atom"),
    })
}
