//! Suspended evaluations as bytes: a parked evaluation and the session it
//! needs (every global the session defined or changed, and every object
//! and compiled procedure they reach) written to a versioned, checked
//! byte format, and read back into any engine built from the same core.
//!
//! What is shared by every engine of one build is not written but named:
//! the prelude's procedures and objects (by their place in the prelude),
//! primitives and globals (by name). A dump therefore holds only what the
//! program made, and a small program's dump is a few kilobytes.
//!
//! Layout (integers are LEB128, signed ones zigzag):
//!
//! ```text
//! "ARBSUSP\0"  format (u32 LE)  engine fingerprint (32 bytes)
//! payload length (u64 LE)  payload
//! BLAKE3 of everything before it (32 bytes; keyed by the engine's dump key)
//! payload: symbols, global names, templates, objects, global values,
//!          the parked continuation, its calls, the forms still to run,
//!          the evaluation's budget, the session's syntax and imports
//!          (`session_syntax.rs`)
//! ```
//!
//! Loading checks the magic, the format, the fingerprint (the same
//! prelude and primitives) and the hash before decoding, then decodes
//! strictly: every index is checked against what it indexes, so corrupt
//! bytes are an error naming the byte offset, never a panic.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;

use super::suspend::Parked;
use super::verify;
use super::Vm;
use crate::builtins::Fault;
use crate::compiler::globals::GlobalSyntax;
use crate::complex::Number;
use crate::heap::Heap;
use crate::number::Num;
use crate::pos::Pos;
use crate::printer;
use crate::reader;
use crate::repo::Tier;
use crate::symbol::Sym;
use crate::value::code::{Frame, Op, Template};
use crate::value::table::{HashTable, Kind as TableKind};
use crate::value::{
    Closure, Continuation, ErrorObject, ErrorObjectKind, Escape, Object, Port, PortKind,
    RecordType, Ref, Value,
};

const MAGIC: &[u8; 8] = b"ARBSUSP\0";
/// The byte format; a change of it makes older dumps foreign.
pub const FORMAT: u32 = 3;
pub(super) const HASH_LEN: usize = 32;
pub(super) const HEADER_LEN: usize = 8 + 4 + 32 + 8;

/// What every engine of one build shares, recorded when the prelude is
/// loaded: a dump names these instead of writing them.
#[derive(Default)]
pub(crate) struct PreludeImage {
    /// Every template the prelude compiled (collector roots, like
    /// `values`).
    pub templates: Vec<Rc<Template>>,
    template_ids: BTreeMap<*const Template, u32>,
    /// The globals' values when the prelude was loaded (collector roots:
    /// a dump may name them long after the globals changed).
    pub values: Vec<Value>,
    objects: BTreeMap<Ref, u32>,
    /// The global syntax the prelude defined.
    syntax: BTreeMap<Sym, GlobalSyntax>,
    /// BLAKE3 of the prelude text, the primitives' names and the format.
    pub fingerprint: [u8; 32],
}

impl PreludeImage {
    /// Whether the global syntax `s` is `entry` as the prelude left it.
    pub(super) fn same_syntax(&self, s: Sym, entry: &GlobalSyntax) -> bool {
        match (self.syntax.get(&s), entry) {
            (Some(GlobalSyntax::Special(a)), GlobalSyntax::Special(b)) => a == b,
            (Some(GlobalSyntax::Macro(a)), GlobalSyntax::Macro(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The global syntax as the prelude left it.
    pub(super) fn prelude_syntax(&self) -> BTreeMap<Sym, GlobalSyntax> {
        self.syntax.clone()
    }

    /// The names of the global syntax the prelude defined.
    pub(super) fn syntax_names(&self) -> impl Iterator<Item = Sym> + '_ {
        self.syntax.keys().copied()
    }

    /// The image of `vm`, which has just run `prelude`, whose top-level
    /// forms compiled to `templates`.
    pub fn new(vm: &Vm, prelude: &str, templates: Vec<Rc<Template>>) -> PreludeImage {
        let mut all: Vec<Rc<Template>> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<Rc<Template>> = templates.into();
        while let Some(t) = queue.pop_front() {
            if seen.insert(Rc::as_ptr(&t)) {
                queue.extend(t.children.iter().cloned());
                all.push(t);
            }
        }
        PreludeImage::with_templates(vm, fingerprint(vm, prelude), all)
    }

    /// The image of `vm` with every template of its prelude given, in the
    /// order `new` numbers them, and its fingerprint (a prepared image
    /// brings both: `vm::prepared`).
    pub fn with_templates(vm: &Vm, fingerprint: [u8; 32], all: Vec<Rc<Template>>) -> PreludeImage {
        let template_ids = all
            .iter()
            .enumerate()
            .map(|(i, t)| (Rc::as_ptr(t), i as u32))
            .collect();
        let values = vm.globals.values.clone();
        let objects = values
            .iter()
            .enumerate()
            .filter_map(|(g, v)| match v {
                Value::Obj(r) => Some((*r, g as u32)),
                _ => None,
            })
            .collect();
        PreludeImage {
            templates: all,
            template_ids,
            values,
            objects,
            syntax: vm.globals.syntax.clone(),
            fingerprint,
        }
    }
}

/// What names an engine's build for dumps: BLAKE3 of the dump format, the
/// prelude text and the primitives' names.
pub(super) fn fingerprint(vm: &Vm, prelude: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&FORMAT.to_le_bytes());
    h.update(prelude.as_bytes());
    for p in &vm.prims.prims {
        h.update(p.name.as_bytes());
        h.update(b"\0");
    }
    *h.finalize().as_bytes()
}

// ---- bytes ----------------------------------------------------------------------

#[derive(Default)]
pub(super) struct Out(pub(super) Vec<u8>);

impl Out {
    pub(super) fn u(&mut self, mut n: u64) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    fn i(&mut self, n: i64) {
        self.u(((n << 1) ^ (n >> 63)) as u64);
    }
    pub(super) fn byte(&mut self, b: u8) {
        self.0.push(b);
    }
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.u(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    pub(super) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

pub(super) struct In<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
    /// Offset of `buf` in the whole dump, for messages.
    pub(super) base: usize,
}

pub(super) type R<T> = Result<T, String>;

impl<'a> In<'a> {
    pub(super) fn err<T>(&self, what: &str) -> R<T> {
        Err(format!("{what} at byte {}", self.base + self.pos))
    }
    pub(super) fn byte(&mut self) -> R<u8> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.err("truncated"),
        }
    }
    pub(super) fn u(&mut self) -> R<u64> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        self.err("integer too long")
    }
    fn i(&mut self) -> R<i64> {
        let z = self.u()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }
    pub(super) fn u32(&mut self) -> R<u32> {
        let n = self.u()?;
        u32::try_from(n).or_else(|_| self.err("integer out of range"))
    }
    fn u16(&mut self) -> R<u16> {
        let n = self.u()?;
        u16::try_from(n).or_else(|_| self.err("integer out of range"))
    }
    pub(super) fn len(&mut self) -> R<usize> {
        let n = self.u()?;
        // Every element takes at least one byte: a longer count is corrupt.
        if n as usize > self.buf.len() - self.pos {
            return self.err("count larger than the data");
        }
        Ok(n as usize)
    }
    pub(super) fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.len()?;
        let b = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }
    pub(super) fn str(&mut self) -> R<&'a str> {
        let b = self.bytes()?;
        std::str::from_utf8(b).or_else(|_| self.err("text is not UTF-8"))
    }
    pub(super) fn index(&mut self, limit: usize, what: &str) -> R<usize> {
        let n = self.u()? as usize;
        if n >= limit {
            return self.err(&format!("{what} {n} out of range (0..{limit})"));
        }
        Ok(n)
    }
}

// ---- dumping ----------------------------------------------------------------------

/// Value tags.
mod tag {
    pub const NULL: u8 = 0;
    pub const FALSE: u8 = 1;
    pub const TRUE: u8 = 2;
    pub const INT: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const CHAR: u8 = 5;
    pub const SYM: u8 = 6;
    pub const UNSPECIFIED: u8 = 7;
    pub const UNDEFINED: u8 = 8;
    pub const EOF: u8 = 9;
    pub const PRIM: u8 = 10;
    pub const OBJ: u8 = 11;
    pub const PRELUDE_OBJ: u8 = 12;
    /// An object of another binding of a session snapshot: the global
    /// that binding names (an index in the table of global names) and the
    /// object's number in its entry.
    pub const EXTERN: u8 = 13;
}

/// Template references.
const T_HALT: u64 = 0;
const T_RESTORE_TIER: u64 = 1;
const T_PRELUDE: u64 = 2;
const T_LOCAL: u64 = 3;
const T_ESCAPE_RETURN: u64 = 4;

/// Which binding of a session snapshot writes each object (its entry, and
/// its number there): an object reached from several bindings is written
/// once, by its owner, and named by the others, so that sharing (and
/// mutable state shared between closures) survives a restore.
#[derive(Default)]
pub(super) struct Claims {
    pub(super) owner: BTreeMap<Ref, (u32, u32)>,
    /// The global each entry binds.
    pub(super) binding: Vec<u32>,
}

pub(super) struct Dumper<'a> {
    vm: &'a Vm,
    /// In a session snapshot: the owners of objects, and the entry being
    /// written.
    claims: Option<(&'a Claims, u32)>,
    syms: Vec<Sym>,
    sym_ids: BTreeMap<Sym, u32>,
    objs: Vec<Ref>,
    obj_ids: BTreeMap<Ref, u32>,
    tmpls: Vec<Rc<Template>>,
    tmpl_ids: BTreeMap<*const Template, u32>,
    globals: Vec<u32>,
    global_ids: BTreeMap<u32, u32>,
}

impl Vm {
    /// The bytes of parked evaluation `id` with the session it needs.
    pub fn dump_parked(&self, id: u64, key: &[u8; 32]) -> Result<Vec<u8>, String> {
        let Some(parked) = self.parking.parked.get(&id) else {
            return Err(format!(
                "no suspended evaluation {id} (finished, abandoned or never made)"
            ));
        };
        let image = self
            .image
            .as_ref()
            .ok_or("the engine has no prelude image")?;
        let (syntax, refused) = self.write_session_syntax(image, "a dump");
        if let Some((_, why)) = refused.first() {
            let names: Vec<&str> = refused.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!(
                "the session defines syntax a dump cannot hold ({}): {why}",
                names.join(" ")
            ));
        }
        let mut queue = String::new();
        for (form, env) in &parked.queue {
            if env.is_some() {
                return Err(
                    "the evaluation suspended inside a library body, which a dump cannot hold yet"
                        .into(),
                );
            }
            queue.push_str(&printer::syn_to_string(form, &self.syms));
            queue.push('\n');
        }
        let mut d = Dumper::new(self, None);
        // The session: every global the program defined or changed.
        let saved: Vec<(u32, Value)> = self.session_globals(image);
        let roots: Vec<Value> = saved
            .iter()
            .map(|(_, v)| *v)
            .chain([parked.k, parked.calls])
            .collect();
        d.discover(&roots, image);
        let payload = d.graph(image, |d, body| {
            body.u(saved.len() as u64);
            for (g, v) in &saved {
                let gid = d.global(*g);
                body.u(gid as u64);
                d.value(body, *v, image);
            }
            d.value(body, parked.k, image);
            d.value(body, parked.calls, image);
            body.str(&queue);
            match parked.budget {
                None => body.u(0),
                Some(b) => {
                    body.u(1);
                    body.u(b.max);
                    body.u(b.used);
                }
            }
            body.bytes(&syntax);
        });
        Ok(seal(MAGIC, image, &payload, key))
    }

    /// The globals a dump carries: prelude globals whose value changed and
    /// every global made since, except the values of stored nodes (loaded
    /// again from the knowledge base on use).
    pub(super) fn session_globals(&self, image: &PreludeImage) -> Vec<(u32, Value)> {
        let mut out = Vec::new();
        for (g, v) in self.globals.values.iter().enumerate() {
            let changed = match image.values.get(g) {
                Some(old) => !old.eq(*v),
                None => !matches!(v, Value::Undefined),
            };
            let name = self.syms.name(self.globals.names[g]);
            if changed && !name.contains("@#") {
                out.push((g as u32, *v));
            }
        }
        out
    }
}

/// Whether template `t` needs no number of its own: already numbered,
/// or one of the VM's internal templates.
fn self_or_known(d: &Dumper, t: &Rc<Template>, p: *const Template) -> bool {
    d.tmpl_ids.contains_key(&p)
        || Rc::ptr_eq(t, &d.vm.halt)
        || Rc::ptr_eq(t, &d.vm.restore_tier)
        || Rc::ptr_eq(t, &d.vm.escape_return)
}

/// `payload` in an envelope: the magic, the format, the engine's
/// fingerprint, the payload's length, and a hash of it all keyed by `key`.
pub(super) fn seal(
    magic: &[u8; 8],
    image: &PreludeImage,
    payload: &[u8],
    key: &[u8; 32],
) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len() + HASH_LEN);
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&image.fingerprint);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    let hash = blake3::keyed_hash(key, &bytes);
    bytes.extend_from_slice(hash.as_bytes());
    bytes
}

impl<'a> Dumper<'a> {
    pub(super) fn new(vm: &'a Vm, claims: Option<(&'a Claims, u32)>) -> Dumper<'a> {
        Dumper {
            vm,
            claims,
            syms: vec![],
            sym_ids: BTreeMap::new(),
            objs: vec![],
            obj_ids: BTreeMap::new(),
            tmpls: vec![],
            tmpl_ids: BTreeMap::new(),
            globals: vec![],
            global_ids: BTreeMap::new(),
        }
    }

    /// A dumper of the whole of an idle `vm`, for a prepared image: every
    /// symbol and global numbered as the VM numbers them, every slot of
    /// the heap (free ones too) as the object of its number, and every
    /// template of `roots` or of an object, children before parents.
    /// Nothing is named as the prelude's: `image` is empty.
    pub(super) fn whole(vm: &'a Vm, roots: &[Rc<Template>]) -> Dumper<'a> {
        let mut d = Dumper::new(vm, None);
        d.syms = (0..vm.syms.len() as u32).map(Sym).collect();
        d.sym_ids = d.syms.iter().map(|s| (*s, s.0)).collect();
        d.globals = (0..vm.globals.values.len() as u32).collect();
        d.global_ids = d.globals.iter().map(|g| (*g, *g)).collect();
        let n = vm.heap.slot_count() as Ref;
        d.objs = (0..n).collect();
        d.obj_ids = d.objs.iter().map(|r| (*r, *r as u32)).collect();
        let mut tqueue: VecDeque<Rc<Template>> = roots.iter().cloned().collect();
        for r in 0..n {
            crate::heap::children(vm.heap.get(r), &mut |t| tqueue.push_back(t.clone()));
        }
        while let Some(t) = tqueue.pop_front() {
            let p = Rc::as_ptr(&t);
            if self_or_known(&d, &t, p) {
                continue;
            }
            d.tmpl_ids.insert(p, d.tmpls.len() as u32);
            tqueue.extend(t.children.iter().cloned());
            d.tmpls.push(t);
        }
        d.order_templates();
        d
    }

    /// The number of template `t` in the payload, if it was discovered.
    pub(super) fn template_number(&self, t: &Rc<Template>) -> Option<u32> {
        self.tmpl_ids.get(&Rc::as_ptr(t)).copied()
    }

    /// The objects discovered, in the order they are numbered.
    pub(super) fn objects_found(&self) -> &[Ref] {
        &self.objs
    }

    /// The discovered graph written as a payload: the symbols and global
    /// names it uses, its templates and objects, then what `rest` writes
    /// (values in it may refer to all of these).
    pub(super) fn graph(
        &mut self,
        image: &PreludeImage,
        rest: impl FnOnce(&mut Self, &mut Out),
    ) -> Vec<u8> {
        let mut body = Out::default();
        self.templates(&mut body, image);
        self.objects(&mut body, image);
        rest(self, &mut body);
        // Names last discovered, written first.
        let mut payload = Out::default();
        payload.u(self.syms.len() as u64);
        for s in &self.syms {
            payload.str(self.vm.syms.name(*s));
        }
        payload.u(self.globals.len() as u64);
        for g in &self.globals {
            let name = self.vm.globals.names[*g as usize];
            payload.str(self.vm.syms.name(name));
        }
        payload.0.extend_from_slice(&body.0);
        payload.0
    }

    /// Whether `r` is written by another entry of a session snapshot.
    fn foreign(&self, r: Ref) -> bool {
        match self.claims {
            Some((c, me)) => c.owner.get(&r).is_some_and(|(e, _)| *e != me),
            None => false,
        }
    }

    fn sym(&mut self, s: Sym) -> u32 {
        let next = self.syms.len() as u32;
        *self.sym_ids.entry(s).or_insert_with(|| {
            self.syms.push(s);
            next
        })
    }

    pub(super) fn global(&mut self, g: u32) -> u32 {
        let next = self.globals.len() as u32;
        *self.global_ids.entry(g).or_insert_with(|| {
            self.globals.push(g);
            next
        })
    }

    /// Numbers every object and template the roots reach (templates in
    /// discovery order: a parent before its children).
    pub(super) fn discover(&mut self, roots: &[Value], image: &PreludeImage) {
        let mut stack: Vec<Value> = roots.to_vec();
        let mut tqueue: VecDeque<Rc<Template>> = VecDeque::new();
        loop {
            if let Some(v) = stack.pop() {
                let Value::Obj(r) = v else { continue };
                if image.objects.contains_key(&r)
                    || self.obj_ids.contains_key(&r)
                    || self.foreign(r)
                {
                    continue;
                }
                self.obj_ids.insert(r, self.objs.len() as u32);
                self.objs.push(r);
                let mut ts = Vec::new();
                stack.extend(crate::heap::children(self.vm.heap.get(r), &mut |t| {
                    ts.push(t.clone())
                }));
                tqueue.extend(ts);
            } else if let Some(t) = tqueue.pop_front() {
                let p = Rc::as_ptr(&t);
                if image.template_ids.contains_key(&p)
                    || self.tmpl_ids.contains_key(&p)
                    || Rc::ptr_eq(&t, &self.vm.halt)
                    || Rc::ptr_eq(&t, &self.vm.restore_tier)
                    || Rc::ptr_eq(&t, &self.vm.escape_return)
                {
                    continue;
                }
                self.tmpl_ids.insert(p, self.tmpls.len() as u32);
                stack.extend(t.consts.iter().copied());
                tqueue.extend(t.children.iter().cloned());
                self.tmpls.push(t);
            } else {
                break;
            }
        }
        self.order_templates();
    }

    /// Puts every template after its children (post-order), so that a
    /// loader builds children first.
    fn order_templates(&mut self) {
        let mut order: Vec<Rc<Template>> = Vec::with_capacity(self.tmpls.len());
        let mut done: BTreeSet<*const Template> = BTreeSet::new();
        for root in &self.tmpls {
            // (template, whether its children were pushed)
            let mut stack = vec![(root.clone(), false)];
            while let Some((t, expanded)) = stack.pop() {
                let p = Rc::as_ptr(&t);
                if done.contains(&p) || !self.tmpl_ids.contains_key(&p) {
                    continue;
                }
                if expanded {
                    done.insert(p);
                    order.push(t);
                } else {
                    stack.push((t.clone(), true));
                    for c in t.children.iter().rev() {
                        stack.push((c.clone(), false));
                    }
                }
            }
        }
        self.tmpl_ids = order
            .iter()
            .enumerate()
            .map(|(i, t)| (Rc::as_ptr(t), i as u32))
            .collect();
        self.tmpls = order;
    }

    fn template_ref(&mut self, out: &mut Out, t: &Rc<Template>, image: &PreludeImage) {
        let p = Rc::as_ptr(t);
        if Rc::ptr_eq(t, &self.vm.halt) {
            out.u(T_HALT);
        } else if Rc::ptr_eq(t, &self.vm.restore_tier) {
            out.u(T_RESTORE_TIER);
        } else if Rc::ptr_eq(t, &self.vm.escape_return) {
            out.u(T_ESCAPE_RETURN);
        } else if let Some(i) = image.template_ids.get(&p) {
            out.u(T_PRELUDE);
            out.u(*i as u64);
        } else {
            out.u(T_LOCAL);
            out.u(self.tmpl_ids[&p] as u64);
        }
    }

    pub(super) fn value(&mut self, out: &mut Out, v: Value, image: &PreludeImage) {
        match v {
            Value::Null => out.byte(tag::NULL),
            Value::Bool(false) => out.byte(tag::FALSE),
            Value::Bool(true) => out.byte(tag::TRUE),
            Value::Int(n) => {
                out.byte(tag::INT);
                out.i(n);
            }
            Value::Float(f) => {
                out.byte(tag::FLOAT);
                out.0.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Char(c) => {
                out.byte(tag::CHAR);
                out.u(c as u64);
            }
            Value::Sym(s) => {
                out.byte(tag::SYM);
                let i = self.sym(s);
                out.u(i as u64);
            }
            Value::Unspecified => out.byte(tag::UNSPECIFIED),
            Value::Undefined => out.byte(tag::UNDEFINED),
            Value::Eof => out.byte(tag::EOF),
            Value::Prim(p) => {
                out.byte(tag::PRIM);
                let name = self.vm.prims.get(p).map(|p| p.name).unwrap_or("");
                out.str(name);
            }
            Value::Obj(r) => {
                if let Some(g) = image.objects.get(&r) {
                    out.byte(tag::PRELUDE_OBJ);
                    out.u(*g as u64);
                } else if let Some(i) = self.obj_ids.get(&r) {
                    out.byte(tag::OBJ);
                    out.u(*i as u64);
                } else {
                    // Discovery stops only at the prelude's objects and at
                    // those another entry claimed.
                    let (c, _) = self.claims.expect(
                        "discovery numbered every object but the prelude's and other entries'",
                    );
                    let (entry, i) = c.owner[&r];
                    let g = self.global(c.binding[entry as usize]);
                    out.byte(tag::EXTERN);
                    out.u(g as u64);
                    out.u(i as u64);
                }
            }
        }
    }

    fn values(&mut self, out: &mut Out, vs: &[Value], image: &PreludeImage) {
        out.u(vs.len() as u64);
        for v in vs {
            self.value(out, *v, image);
        }
    }

    fn templates(&mut self, out: &mut Out, image: &PreludeImage) {
        out.u(self.tmpls.len() as u64);
        for t in self.tmpls.clone() {
            out.u(t.code.len() as u64);
            for op in &t.code {
                // Fused pairs are written unfused (`code::fuse`).
                let (tag, args) = op_parts(*op);
                out.byte(tag);
                for (i, a) in args.iter().enumerate() {
                    if i == 0 && is_global_op(tag) {
                        let g = self.global(*a as u32);
                        out.u(g as u64);
                    } else {
                        out.i(*a);
                    }
                }
            }
            self.values(out, &t.consts, image);
            out.u(t.children.len() as u64);
            for c in &t.children {
                self.template_ref(out, c, image);
            }
            out.u(t.nparams as u64);
            out.byte(t.rest as u8 | (t.internal as u8) << 1);
            out.u(t.nfree as u64);
            match t.name {
                Some(s) => {
                    let i = self.sym(s);
                    out.u(i as u64 + 1);
                }
                None => out.u(0),
            }
            pos(out, t.pos);
            out.u(t.positions.len() as u64);
            for (pc, p) in &t.positions {
                out.u(*pc as u64);
                pos(out, *p);
            }
        }
    }

    fn objects(&mut self, out: &mut Out, image: &PreludeImage) {
        out.u(self.objs.len() as u64);
        for r in self.objs.clone() {
            self.object(out, r, image);
        }
    }

    // Long by design: one arm per kind of object.
    fn object(&mut self, out: &mut Out, r: Ref, image: &PreludeImage) {
        let heap: &Heap = &self.vm.heap;
        match heap.get(r).clone() {
            // Only a prepared image writes free slots (`Dumper::whole`).
            Object::Free(next) => {
                out.byte(0);
                out.u(next as u64);
            }
            Object::Pair(a, d) => {
                out.byte(1);
                self.value(out, a, image);
                self.value(out, d, image);
            }
            Object::Str(s) => {
                out.byte(2);
                out.str(&s.iter().collect::<String>());
            }
            Object::Vector(v) => {
                out.byte(3);
                self.values(out, &v, image);
            }
            Object::Bytevector(b) => {
                out.byte(4);
                out.bytes(&b);
            }
            Object::Big(b) => {
                out.byte(5);
                out.bytes(&b.to_signed_bytes_le());
            }
            Object::Rat(q) => {
                out.byte(6);
                out.bytes(&q.numer().to_signed_bytes_le());
                out.bytes(&q.denom().to_signed_bytes_le());
            }
            Object::Closure(c) => {
                out.byte(7);
                self.template_ref(out, &c.template, image);
                self.values(out, &c.free, image);
            }
            Object::CaseLambda(v) => {
                out.byte(8);
                self.values(out, &v, image);
            }
            Object::Box(v) => {
                out.byte(9);
                self.value(out, v, image);
            }
            Object::Continuation(k) => {
                out.byte(10);
                self.values(out, &k.stack, image);
                out.u(k.frames.len() as u64);
                for f in &k.frames {
                    self.template_ref(out, &f.template, image);
                    out.u(f.pc as u64);
                    out.u(f.fp as u64);
                    self.value(out, f.closure, image);
                }
                self.value(out, k.winders, image);
                self.value(out, k.handlers, image);
                out.byte(k.tier.level());
            }
            Object::Escape(e) => {
                out.byte(22);
                out.u(e.frame as u64);
                out.u(e.height as u64);
                self.value(out, e.winders, image);
                self.value(out, e.handlers, image);
                out.byte(e.tier.level());
            }
            Object::Values(v) => {
                out.byte(11);
                self.values(out, &v, image);
            }
            Object::Record(t, f) => {
                out.byte(12);
                self.value(out, t, image);
                self.values(out, &f, image);
            }
            Object::RecordType(t) => {
                out.byte(13);
                let name = self.sym(t.name);
                out.u(name as u64);
                out.u(t.fields.len() as u64);
                for f in &t.fields {
                    let i = self.sym(*f);
                    out.u(i as u64);
                }
            }
            Object::Promise { done, value } => {
                out.byte(14);
                out.byte(done as u8);
                self.value(out, value, image);
            }
            Object::Parameter { value, converter } => {
                out.byte(15);
                self.value(out, value, image);
                self.value(out, converter, image);
            }
            Object::Error(e) => {
                out.byte(16);
                out.byte(match e.kind {
                    ErrorObjectKind::Error => 0,
                    ErrorObjectKind::Read => 1,
                    ErrorObjectKind::File => 2,
                });
                self.value(out, e.message, image);
                self.value(out, e.irritants, image);
            }
            Object::Port(p) => {
                out.byte(17);
                // Bits 3-5: the kind (bit 3 alone was the console flag
                // of older dumps: the standard output).
                let kind: u8 = match p.kind {
                    PortKind::Memory => 0,
                    PortKind::Output => 1,
                    PortKind::Error => 2,
                    PortKind::Input => 3,
                    PortKind::File(_) => 4,
                };
                out.byte(p.input as u8 | (p.textual as u8) << 1 | (p.open as u8) << 2 | kind << 3);
                if let PortKind::File(path) = &p.kind {
                    out.str(path);
                }
                out.str(&p.chars.iter().collect::<String>());
                out.bytes(&p.bytes);
                out.u(p.pos as u64);
            }
            // 18: the top level (the only environment of older dumps).
            Object::Environment(Value::Bool(false)) => out.byte(18),
            Object::Environment(names) => {
                out.byte(21);
                self.value(out, names, image);
            }
            Object::Complex(z) => {
                out.byte(19);
                num(out, &z.re);
                num(out, &z.im);
            }
            Object::HashTable(t) => {
                out.byte(20);
                out.byte(t.kind.code());
                out.byte(t.mutable as u8);
                self.value(out, t.equiv, image);
                self.value(out, t.hash, image);
                out.u(t.len() as u64);
                // A custom table's hashes came from the program's hash
                // function; the others are computed again when read.
                let custom = t.kind == TableKind::Custom;
                for i in 0..t.len() {
                    self.value(out, t.key(i), image);
                    self.value(out, t.value(i), image);
                    if custom {
                        out.u(t.hashes()[i]);
                    }
                }
            }
        }
    }
}

/// A real number as a kind byte and its bytes (the parts of a complex).
pub(super) fn num(out: &mut Out, n: &Num) {
    match n {
        Num::Int(i) => {
            out.byte(0);
            out.bytes(&i.to_le_bytes());
        }
        Num::Big(b) => {
            out.byte(1);
            out.bytes(&b.to_signed_bytes_le());
        }
        Num::Rat(q) => {
            out.byte(2);
            out.bytes(&q.numer().to_signed_bytes_le());
            out.bytes(&q.denom().to_signed_bytes_le());
        }
        Num::Float(f) => {
            out.byte(3);
            out.bytes(&f.to_le_bytes());
        }
    }
}

pub(super) fn pos(out: &mut Out, p: Pos) {
    out.u(p.line as u64);
    out.u(p.col as u64);
}

/// Ops whose first operand is a global index (renumbered in a dump).
fn is_global_op(tag: u8) -> bool {
    matches!(tag, 18..=20 | 38)
}

/// An instruction as a tag and its operands.
// Long by design: one arm per instruction.
fn op_parts(op: Op) -> (u8, Vec<i64>) {
    use Op::*;
    let i = |n: u32| n as i64;
    let s = |n: u16| n as i64;
    match op {
        Const(k) => (0, vec![i(k)]),
        Fixnum(n) => (1, vec![n as i64]),
        Nil => (2, vec![]),
        True => (3, vec![]),
        False => (4, vec![]),
        Unspecified => (5, vec![]),
        Local(a) => (6, vec![s(a)]),
        LocalChecked(a, k) => (7, vec![s(a), i(k)]),
        SetLocal(a) => (8, vec![s(a)]),
        LocalBox(a) => (9, vec![s(a)]),
        LocalBoxChecked(a, k) => (10, vec![s(a), i(k)]),
        SetLocalBox(a) => (11, vec![s(a)]),
        BoxLocal(a) => (12, vec![s(a)]),
        Free(a) => (13, vec![s(a)]),
        FreeChecked(a, k) => (14, vec![s(a), i(k)]),
        FreeBox(a) => (15, vec![s(a)]),
        FreeBoxChecked(a, k) => (16, vec![s(a), i(k)]),
        SetFreeBox(a) => (17, vec![s(a)]),
        Global(g) => (18, vec![i(g)]),
        SetGlobal(g) => (19, vec![i(g)]),
        DefineGlobal(g) => (20, vec![i(g)]),
        Push => (21, vec![]),
        PushLocal(a) => (22, vec![s(a)]),
        PushConst(k) => (23, vec![i(k)]),
        Drop(n) => (24, vec![s(n)]),
        Jump(t) => (25, vec![i(t)]),
        JumpIfFalse(t) => (26, vec![i(t)]),
        MakeClosure(c) => (27, vec![i(c)]),
        PatchFree {
            closure,
            free,
            value,
        } => (28, vec![s(closure), s(free), s(value)]),
        MakeCaseLambda(n) => (29, vec![s(n)]),
        Call(n) => (30, vec![s(n)]),
        TailCall(n) => (31, vec![s(n)]),
        Return => (32, vec![]),
        Inline(op) => (33, vec![op as i64]),
        InlineLI { op, slot, imm } => (34, vec![op as i64, s(slot), imm as i64]),
        InlineLL { op, a, b } => (35, vec![op as i64, s(a), s(b)]),
        Inline1L { op, slot } => (36, vec![op as i64, s(slot)]),
        Halt => (37, vec![]),
        PushGlobal(g) => (38, vec![i(g)]),
        RestoreTier => (39, vec![]),
        TestLI { .. }
        | TestLL { .. }
        | Test1L { .. }
        | Test(_)
        | PushLI { .. }
        | ReturnLocal(_) => op_parts(op.unfused()),
    }
}

/// How many operands each instruction tag has.
const OP_ARITY: [u8; 40] = [
    1, 1, 0, 0, 0, 0, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1,
    0, 1, 3, 3, 2, 0, 1, 0,
];

// ---- loading ------------------------------------------------------------------------

pub(super) struct Loader<'a> {
    syms: Vec<Sym>,
    globals: Vec<u32>,
    pub(super) objs: Vec<Value>,
    tmpls: Vec<Option<Rc<Template>>>,
    image: &'a PreludeImage,
    /// In a session snapshot: the objects of every entry, by the global
    /// its binding names.
    externs: Option<&'a BTreeMap<u32, Vec<Value>>>,
    /// Where each template starts, and where the objects start.
    spans: Vec<usize>,
    objects_at: usize,
    /// Reading a prepared image: objects are the heap's slots, free ones
    /// included (`Dumper::whole`).
    pub(super) whole_heap: bool,
}

impl<'a> Loader<'a> {
    /// The symbols of the payload, by number.
    pub(super) fn symbols(&self) -> &[Sym] {
        &self.syms
    }

    /// The globals of the payload, by number.
    pub(super) fn global_indexes(&self) -> &[u32] {
        &self.globals
    }

    /// Template `i` of the payload, once the body is read.
    pub(super) fn template(&self, i: usize) -> Option<Rc<Template>> {
        self.tmpls.get(i).cloned().flatten()
    }

    /// The same decoded tables, resolving objects of other entries in
    /// `externs`.
    pub(super) fn with_externs<'b>(self, externs: &'b BTreeMap<u32, Vec<Value>>) -> Loader<'b>
    where
        'a: 'b,
    {
        Loader {
            externs: Some(externs),
            ..self
        }
    }
}

impl Vm {
    /// Reads a dump made by `dump_parked` and parks it in this engine
    /// under a new number. The calls it waits on are printed within
    /// `limits` (text too long for them refuses the dump). On error
    /// nothing in the session changes (objects made before the error are
    /// garbage).
    pub fn load_parked(
        &mut self,
        bytes: &[u8],
        key: &[u8; 32],
        limits: super::Limits,
    ) -> Result<u64, String> {
        let image = self.image.take().ok_or("the engine has no prelude image")?;
        let r = self.load_parked_with(bytes, key, &image, limits);
        self.image = Some(image);
        r
    }

    fn load_parked_with(
        &mut self,
        bytes: &[u8],
        key: &[u8; 32],
        image: &PreludeImage,
        limits: super::Limits,
    ) -> Result<u64, String> {
        let payload = check_envelope(bytes, key, image, MAGIC, "a suspended evaluation")?;
        let mut inp = In {
            buf: payload,
            pos: 0,
            base: HEADER_LEN,
        };
        let mut l = self.read_graph_head(&mut inp, image)?;
        self.read_graph_body(&mut inp, &mut l)?;
        let ng = inp.len()?;
        let mut sets = Vec::with_capacity(ng);
        for _ in 0..ng {
            let g = inp.index(l.globals.len(), "global")?;
            let v = self.read_value(&mut inp, &l)?;
            sets.push((l.globals[g], v));
        }
        let k = self.read_value(&mut inp, &l)?;
        if !matches!(self.heap.obj(k), Some(Object::Continuation(_))) {
            return inp.err("the suspended continuation is not a continuation");
        }
        let calls = self.read_value(&mut inp, &l)?;
        let queue_text = inp.str()?;
        let budget = match inp.u()? {
            0 => None,
            1 => Some(super::suspend::EvaluationBudget {
                max: inp.u()?,
                used: inp.u()?,
            }),
            _ => return inp.err("the evaluation's budget is neither absent nor present"),
        };
        let buf = inp.bytes()?;
        let mut syntax_in = In {
            base: inp.base + inp.pos - buf.len(),
            buf,
            pos: 0,
        };
        let syntax = self.read_session_syntax(&mut syntax_in)?;
        if syntax_in.pos != syntax_in.buf.len() {
            return syntax_in.err("data after the end of the session's syntax");
        }
        if inp.pos != inp.buf.len() {
            return inp.err("data after the end");
        }
        let forms = reader::read_all(queue_text, &mut self.syms)
            .map_err(|e| format!("the forms still to run do not read: {}", e.message))?;
        // Printed as when it suspended: within the limits. The values
        // read are not rooted yet, so nothing is collected meanwhile.
        self.steps_left = limits.max_steps;
        self.work_unpolled = 0;
        self.heap.cap = limits.max_memory;
        let printed = self.print_calls_within_limits(calls, false).map_err(|f| {
            let why = match f {
                Fault::StepLimit => "step limit exceeded",
                Fault::Interrupted => "interrupted",
                _ => "memory limit exceeded",
            };
            format!("the tool calls the suspended evaluation waits on do not print within the limits ({why})")
        })?;
        for (g, v) in sets {
            self.globals.values[g as usize] = v;
        }
        syntax.apply(self);
        self.refresh_inline();
        Ok(self.parking.park(Parked {
            k,
            calls,
            printed,
            queue: forms.into_iter().map(|f| (f, None)).collect(),
            budget,
        }))
    }

    /// The first part of a payload written by `Dumper::graph`: the names,
    /// the templates skimmed (templates refer to objects and objects to
    /// templates) and the objects counted and allocated. Nothing is
    /// changed but new unbound globals and garbage objects.
    pub(super) fn read_graph_head<'a>(
        &mut self,
        inp: &mut In,
        image: &'a PreludeImage,
    ) -> R<Loader<'a>> {
        let n = inp.len()?;
        let mut syms = Vec::with_capacity(n);
        for _ in 0..n {
            let name = inp.str()?;
            syms.push(self.syms.intern(name));
        }
        let n = inp.len()?;
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            let name = inp.str()?;
            names.push(self.syms.intern(name));
        }
        // Nothing is changed until everything is decoded: globals are
        // created (unbound) now, values set at the end.
        let globals = names.iter().map(|s| self.globals.index(*s)).collect();
        let mut l = Loader {
            syms,
            globals,
            objs: vec![],
            tmpls: vec![],
            image,
            externs: None,
            spans: vec![],
            objects_at: 0,
            whole_heap: false,
        };
        let nt = inp.len()?;
        l.tmpls = vec![None; nt];
        l.spans = Vec::with_capacity(nt);
        for _ in 0..nt {
            let start = inp.pos;
            self.skip_template(inp, &l)?;
            l.spans.push(start);
        }
        let no = inp.len()?;
        l.objs = (0..no)
            .map(|_| self.heap.alloc(Object::Pair(Value::Null, Value::Null)))
            .collect();
        l.objects_at = inp.pos;
        Ok(l)
    }

    /// The templates and objects of a payload whose head `l` read; `inp`
    /// is left after them.
    pub(super) fn read_graph_body(&mut self, inp: &mut In, l: &mut Loader) -> R<()> {
        // Children come before their parents: each template is built from
        // those before it.
        for i in 0..l.spans.len() {
            let start = l.spans[i];
            inp.pos = start;
            let t = self.read_template(inp, l)?;
            verify::depths(&t).map_err(|e| {
                format!(
                    "unsafe code in template {i} (near byte {}): {e}",
                    inp.base + start
                )
            })?;
            l.tmpls[i] = Some(Rc::new(t));
        }
        inp.pos = l.objects_at;
        for i in 0..l.objs.len() {
            let obj = self.read_object(inp, l)?;
            if let Some(place) = self.heap.obj_mut(l.objs[i]) {
                *place = obj;
            }
        }
        // Objects are renumbered: hash tables are indexed anew.
        crate::builtins::rehash_tables(&mut self.heap, &l.objs);
        Ok(())
    }

    pub(super) fn read_value_of(&mut self, inp: &mut In, l: &Loader) -> R<Value> {
        self.read_value(inp, l)
    }

    fn skip_template(&mut self, inp: &mut In, l: &Loader) -> R<()> {
        let n = inp.len()?;
        for _ in 0..n {
            let tag = inp.byte()?;
            let Some(&arity) = OP_ARITY.get(tag as usize) else {
                return inp.err("unknown instruction");
            };
            for _ in 0..arity {
                inp.u()?;
            }
        }
        let n = inp.len()?;
        for _ in 0..n {
            self.skip_value(inp)?;
        }
        let n = inp.len()?;
        for _ in 0..n {
            read_template_ref_kind(inp, l)?;
        }
        inp.u()?;
        inp.byte()?;
        inp.u()?;
        inp.u()?;
        inp.u()?;
        inp.u()?;
        let n = inp.len()?;
        for _ in 0..n {
            inp.u()?;
            inp.u()?;
            inp.u()?;
        }
        Ok(())
    }

    fn skip_value(&mut self, inp: &mut In) -> R<()> {
        match inp.byte()? {
            tag::EXTERN => {
                inp.u()?;
                inp.u()?;
            }
            tag::INT | tag::CHAR | tag::SYM | tag::OBJ | tag::PRELUDE_OBJ => {
                inp.u()?;
            }
            tag::FLOAT => {
                for _ in 0..8 {
                    inp.byte()?;
                }
            }
            tag::PRIM => {
                inp.str()?;
            }
            0..=tag::PRIM => {}
            _ => return inp.err("unknown value tag"),
        }
        Ok(())
    }

    fn read_template(&mut self, inp: &mut In, l: &Loader) -> R<Template> {
        let n = inp.len()?;
        let mut raw = Vec::with_capacity(n);
        for _ in 0..n {
            let tag = inp.byte()?;
            let Some(&arity) = OP_ARITY.get(tag as usize) else {
                return inp.err("unknown instruction");
            };
            let mut args = [0i64; 3];
            for (i, a) in args.iter_mut().enumerate().take(arity as usize) {
                if i == 0 && is_global_op(tag) {
                    let g = inp.index(l.globals.len(), "global")?;
                    *a = l.globals[g] as i64;
                } else {
                    *a = inp.i()?;
                }
            }
            raw.push((tag, args, inp.pos));
        }
        let nc = inp.len()?;
        let mut consts = Vec::with_capacity(nc);
        for _ in 0..nc {
            consts.push(self.read_value(inp, l)?);
        }
        let nch = inp.len()?;
        let mut children = Vec::with_capacity(nch);
        for _ in 0..nch {
            children.push(self.read_template_ref(inp, l)?);
        }
        let code_len = raw.len();
        let mut code = Vec::with_capacity(code_len);
        for (tag, a, at) in raw {
            let op = op_from(tag, a, consts.len(), children.len(), code_len).ok_or_else(|| {
                format!(
                    "instruction with an operand out of range near byte {}",
                    inp.base + at
                )
            })?;
            code.push(op);
        }
        crate::value::code::fuse(&mut code);
        let nparams = inp.u16()?;
        let flags = inp.byte()?;
        let nfree = inp.u16()?;
        let name = match inp.u()? {
            0 => None,
            n => Some(
                *l.syms
                    .get(n as usize - 1)
                    .ok_or("template name out of range")?,
            ),
        };
        let p = read_pos(inp)?;
        let n = inp.len()?;
        let mut positions = Vec::with_capacity(n);
        for _ in 0..n {
            let pc = inp.u32()?;
            positions.push((pc, read_pos(inp)?));
        }
        if code.is_empty() {
            return inp.err("a template with no code");
        }
        Ok(Template {
            code,
            consts,
            children,
            nparams,
            rest: flags & 1 != 0,
            nfree,
            name,
            pos: p,
            positions,
            internal: flags & 2 != 0,
            gc_stamp: std::cell::Cell::new(0),
        })
    }

    fn read_template_ref(&mut self, inp: &mut In, l: &Loader) -> R<Rc<Template>> {
        match read_template_ref_kind(inp, l)? {
            (T_HALT, _) => Ok(self.halt.clone()),
            (T_RESTORE_TIER, _) => Ok(self.restore_tier.clone()),
            (T_ESCAPE_RETURN, _) => Ok(self.escape_return.clone()),
            (T_PRELUDE, i) => Ok(l.image.templates[i].clone()),
            (_, i) => match &l.tmpls[i] {
                Some(t) => Ok(t.clone()),
                None => inp.err("a template used before it is defined"),
            },
        }
    }

    fn read_value(&mut self, inp: &mut In, l: &Loader) -> R<Value> {
        Ok(match inp.byte()? {
            tag::NULL => Value::Null,
            tag::FALSE => Value::Bool(false),
            tag::TRUE => Value::Bool(true),
            tag::INT => Value::Int(inp.i()?),
            tag::FLOAT => {
                let mut b = [0u8; 8];
                for x in b.iter_mut() {
                    *x = inp.byte()?;
                }
                Value::Float(f64::from_bits(u64::from_le_bytes(b)))
            }
            tag::CHAR => {
                let c = inp.u32()?;
                Value::Char(char::from_u32(c).ok_or("a character that is not one")?)
            }
            tag::SYM => Value::Sym(l.syms[inp.index(l.syms.len(), "symbol")?]),
            tag::UNSPECIFIED => Value::Unspecified,
            tag::UNDEFINED => Value::Undefined,
            tag::EOF => Value::Eof,
            tag::PRIM => {
                let name = inp.str()?;
                match self.prims.id(name) {
                    Some(p) => Value::Prim(p),
                    None => return inp.err(&format!("unknown primitive {name:?}")),
                }
            }
            tag::OBJ => l.objs[inp.index(l.objs.len(), "object")?],
            tag::PRELUDE_OBJ => l.image.values[inp.index(l.image.values.len(), "prelude value")?],
            tag::EXTERN => {
                let g = l.globals[inp.index(l.globals.len(), "global")?];
                let Some(objs) = l.externs.and_then(|x| x.get(&g)) else {
                    return inp.err("an object of a binding the snapshot does not hold");
                };
                objs[inp.index(objs.len(), "object of another binding")?]
            }
            _ => return inp.err("unknown value tag"),
        })
    }

    fn read_values(&mut self, inp: &mut In, l: &Loader) -> R<Vec<Value>> {
        let n = inp.len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.read_value(inp, l)?);
        }
        Ok(v)
    }

    fn read_big(&mut self, inp: &mut In) -> R<BigInt> {
        Ok(BigInt::from_signed_bytes_le(inp.bytes()?))
    }

    fn read_num(&mut self, inp: &mut In) -> R<Num> {
        read_real(inp)
    }

    // Long by design: one arm per kind of object.
    fn read_object(&mut self, inp: &mut In, l: &Loader) -> R<Object> {
        Ok(match inp.byte()? {
            // A free slot, of a prepared image only: the heap's free list
            // is checked when its layout is restored.
            0 if l.whole_heap => Object::Free(inp.u32()?),
            1 => Object::Pair(self.read_value(inp, l)?, self.read_value(inp, l)?),
            2 => Object::Str(inp.str()?.chars().collect()),
            3 => Object::Vector(self.read_values(inp, l)?),
            4 => Object::Bytevector(inp.bytes()?.to_vec()),
            5 => Object::Big(self.read_big(inp)?),
            6 => {
                let n = self.read_big(inp)?;
                let d = self.read_big(inp)?;
                if d == BigInt::from(0) {
                    return inp.err("a rational with a zero denominator");
                }
                Object::Rat(Box::new(BigRational::new(n, d)))
            }
            7 => {
                let template = self.read_template_ref(inp, l)?;
                let free = self.read_values(inp, l)?;
                if free.len() != template.nfree as usize {
                    return inp.err("a closure with the wrong number of free values");
                }
                Object::Closure(Closure {
                    template,
                    free: free.into_boxed_slice(),
                })
            }
            8 => Object::CaseLambda(self.read_values(inp, l)?),
            9 => Object::Box(self.read_value(inp, l)?),
            10 => Object::Continuation(Box::new(self.read_continuation(inp, l)?)),
            11 => Object::Values(self.read_values(inp, l)?),
            // Any frame and height are safe: an escape is used only when
            // the frame at its index is its own (`Vm::escape_is_live`).
            22 => Object::Escape(Box::new(Escape {
                frame: inp.u32()?,
                height: inp.u32()?,
                winders: self.read_value(inp, l)?,
                handlers: self.read_value(inp, l)?,
                tier: Tier::from_level(inp.byte()?).ok_or("unknown tier")?,
            })),
            12 => {
                let t = self.read_value(inp, l)?;
                Object::Record(t, self.read_values(inp, l)?.into_boxed_slice())
            }
            13 => {
                let name = l.syms[inp.index(l.syms.len(), "symbol")?];
                let n = inp.len()?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    fields.push(l.syms[inp.index(l.syms.len(), "symbol")?]);
                }
                Object::RecordType(Box::new(RecordType { name, fields }))
            }
            14 => {
                let done = inp.byte()? != 0;
                Object::Promise {
                    done,
                    value: self.read_value(inp, l)?,
                }
            }
            15 => Object::Parameter {
                value: self.read_value(inp, l)?,
                converter: self.read_value(inp, l)?,
            },
            16 => {
                let kind = match inp.byte()? {
                    0 => ErrorObjectKind::Error,
                    1 => ErrorObjectKind::Read,
                    2 => ErrorObjectKind::File,
                    _ => return inp.err("unknown error object kind"),
                };
                Object::Error(Box::new(ErrorObject {
                    kind,
                    message: self.read_value(inp, l)?,
                    irritants: self.read_value(inp, l)?,
                }))
            }
            17 => {
                let f = inp.byte()?;
                let kind = match f >> 3 {
                    0 => PortKind::Memory,
                    1 => PortKind::Output,
                    2 => PortKind::Error,
                    3 => PortKind::Input,
                    4 => PortKind::File(inp.str()?.to_string()),
                    _ => return inp.err("a port of an unknown kind"),
                };
                let chars: Vec<char> = inp.str()?.chars().collect();
                let bytes = inp.bytes()?.to_vec();
                let pos = inp.u()? as usize;
                let textual = f & 2 != 0;
                if pos > if textual { chars.len() } else { bytes.len() } {
                    return inp.err("a port position past its data");
                }
                Object::Port(Box::new(Port {
                    input: f & 1 != 0,
                    textual: f & 2 != 0,
                    chars,
                    bytes,
                    pos,
                    open: f & 4 != 0,
                    kind,
                }))
            }
            18 => Object::Environment(Value::Bool(false)),
            21 => Object::Environment(self.read_value(inp, l)?),
            19 => {
                let re = self.read_num(inp)?;
                let im = self.read_num(inp)?;
                match Number::rect(re, im) {
                    Number::Complex(z) => Object::Complex(z),
                    _ => return inp.err("a complex number with a zero imaginary part"),
                }
            }
            20 => {
                let Some(kind) = TableKind::from_code(inp.byte()?) else {
                    return inp.err("a hash table of an unknown kind");
                };
                let mutable = inp.byte()? != 0;
                let equiv = self.read_value(inp, l)?;
                let hash = self.read_value(inp, l)?;
                let n = inp.len()?;
                let mut entries = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    let k = self.read_value(inp, l)?;
                    let v = self.read_value(inp, l)?;
                    let h = if kind == TableKind::Custom {
                        inp.u()?
                    } else {
                        0
                    };
                    entries.push((k, v, h));
                }
                // Indexed once every object is read (`rehash_tables`).
                Object::HashTable(Box::new(HashTable::from_entries(
                    kind, mutable, equiv, hash, entries,
                )))
            }
            _ => return inp.err("unknown object kind"),
        })
    }

    fn read_continuation(&mut self, inp: &mut In, l: &Loader) -> R<Continuation> {
        let stack = self.read_values(inp, l)?;
        let n = inp.len()?;
        let mut frames = Vec::with_capacity(n);
        for _ in 0..n {
            let template = self.read_template_ref(inp, l)?;
            let pc = inp.u32()?;
            let fp = inp.u32()?;
            let closure = self.read_value(inp, l)?;
            // A frame resumes at `pc` with its slots from `fp`: both must
            // be inside what they index.
            if pc as usize > template.code.len() || fp == 0 || fp as usize > stack.len() + 1 {
                return inp.err("a frame outside its code or stack");
            }
            frames.push(Frame {
                template,
                pc,
                fp,
                closure,
            });
        }
        let winders = self.read_value(inp, l)?;
        let handlers = self.read_value(inp, l)?;
        let tier = Tier::from_level(inp.byte()?).ok_or("unknown tier")?;
        if frames.is_empty() {
            return inp.err("a continuation with no frames");
        }
        if let Err(e) = verify::check_frames(&frames, stack.len(), verify::depths) {
            return inp.err(&format!("a continuation that does not fit its code: {e}"));
        }
        Ok(Continuation {
            stack,
            frames,
            winders,
            handlers,
            tier,
        })
    }
}

/// A real number as `num` writes it.
pub(super) fn read_real(inp: &mut In) -> R<Num> {
    let big = |inp: &mut In| -> R<BigInt> { Ok(BigInt::from_signed_bytes_le(inp.bytes()?)) };
    Ok(match inp.byte()? {
        0 => match <[u8; 8]>::try_from(inp.bytes()?) {
            Ok(b) => Num::Int(i64::from_le_bytes(b)),
            Err(_) => return inp.err("a fixnum that is not 8 bytes"),
        },
        1 => Num::Big(big(inp)?),
        2 => {
            let n = big(inp)?;
            let d = big(inp)?;
            if d == BigInt::from(0) {
                return inp.err("a rational with a zero denominator");
            }
            Num::Rat(BigRational::new(n, d))
        }
        3 => match <[u8; 8]>::try_from(inp.bytes()?) {
            Ok(b) => Num::Float(f64::from_le_bytes(b)),
            Err(_) => return inp.err("a flonum that is not 8 bytes"),
        },
        _ => return inp.err("unknown kind of real number"),
    })
}

fn read_template_ref_kind(inp: &mut In, l: &Loader) -> R<(u64, usize)> {
    match inp.u()? {
        T_HALT => Ok((T_HALT, 0)),
        T_RESTORE_TIER => Ok((T_RESTORE_TIER, 0)),
        T_ESCAPE_RETURN => Ok((T_ESCAPE_RETURN, 0)),
        T_PRELUDE => Ok((
            T_PRELUDE,
            inp.index(l.image.templates.len(), "prelude template")?,
        )),
        T_LOCAL => Ok((T_LOCAL, inp.index(l.tmpls.len(), "template")?)),
        _ => inp.err("unknown template reference"),
    }
}

pub(super) fn read_pos(inp: &mut In) -> R<Pos> {
    Ok(Pos {
        line: inp.u32()?,
        col: inp.u32()?,
    })
}

/// The checks before decoding: magic, format, fingerprint, length, hash.
/// `what` names the kind of bytes expected, for messages.
pub(super) fn check_envelope<'a>(
    bytes: &'a [u8],
    key: &[u8; 32],
    image: &PreludeImage,
    magic: &[u8; 8],
    what: &str,
) -> R<&'a [u8]> {
    if bytes.len() < HEADER_LEN + HASH_LEN || &bytes[..8] != magic {
        let header = String::from_utf8_lossy(&magic[..7]);
        return Err(format!("not {what} of Arbores (no {header} header)"));
    }
    let format = u32::from_le_bytes(bytes[8..12].try_into().unwrap_or_default());
    if format != FORMAT {
        return Err(format!(
            "{what} in format {format}; this engine reads format {FORMAT}"
        ));
    }
    let len = u64::from_le_bytes(bytes[44..52].try_into().unwrap_or_default());
    if len != (bytes.len() - HEADER_LEN - HASH_LEN) as u64 {
        return Err(format!(
            "truncated or extended: the header says {len} bytes of payload, there are {}",
            bytes.len() - HEADER_LEN - HASH_LEN
        ));
    }
    let (body, hash) = bytes.split_at(bytes.len() - HASH_LEN);
    if blake3::keyed_hash(key, body).as_bytes() != hash {
        return Err("the content hash does not match: the bytes are corrupt, or were made with another dump key".into());
    }
    if bytes[12..44] != image.fingerprint {
        return Err("made by another build of the engine (a different prelude or primitives): it cannot be resumed here".into());
    }
    Ok(&body[HEADER_LEN..])
}

/// An instruction from its tag and operands, if every operand is in range.
// Long by design: one arm per instruction.
fn op_from(tag: u8, a: [i64; 3], nconsts: usize, nchildren: usize, ncode: usize) -> Option<Op> {
    use Op::*;
    let s = |n: i64| u16::try_from(n).ok();
    let k = |n: i64| u32::try_from(n).ok().filter(|&k| (k as usize) < nconsts);
    let jump = |n: i64| u32::try_from(n).ok().filter(|&t| (t as usize) < ncode);
    let g = |n: i64| u32::try_from(n).ok();
    let inline = |n: i64| {
        crate::value::code::Inline::ALL
            .get(usize::try_from(n).ok()?)
            .map(|(op, _)| *op)
    };
    Some(match tag {
        0 => Const(k(a[0])?),
        1 => Fixnum(i32::try_from(a[0]).ok()?),
        2 => Nil,
        3 => True,
        4 => False,
        5 => Unspecified,
        6 => Local(s(a[0])?),
        7 => LocalChecked(s(a[0])?, k(a[1])?),
        8 => SetLocal(s(a[0])?),
        9 => LocalBox(s(a[0])?),
        10 => LocalBoxChecked(s(a[0])?, k(a[1])?),
        11 => SetLocalBox(s(a[0])?),
        12 => BoxLocal(s(a[0])?),
        13 => Free(s(a[0])?),
        14 => FreeChecked(s(a[0])?, k(a[1])?),
        15 => FreeBox(s(a[0])?),
        16 => FreeBoxChecked(s(a[0])?, k(a[1])?),
        17 => SetFreeBox(s(a[0])?),
        18 => Global(g(a[0])?),
        19 => SetGlobal(g(a[0])?),
        20 => DefineGlobal(g(a[0])?),
        21 => Push,
        22 => PushLocal(s(a[0])?),
        23 => PushConst(k(a[0])?),
        24 => Drop(s(a[0])?),
        25 => Jump(jump(a[0])?),
        26 => JumpIfFalse(jump(a[0])?),
        27 => MakeClosure(
            u32::try_from(a[0])
                .ok()
                .filter(|&c| (c as usize) < nchildren)?,
        ),
        28 => PatchFree {
            closure: s(a[0])?,
            free: s(a[1])?,
            value: s(a[2])?,
        },
        29 => MakeCaseLambda(s(a[0])?),
        30 => Call(s(a[0])?),
        31 => TailCall(s(a[0])?),
        32 => Return,
        33 => Inline(inline(a[0])?),
        34 => InlineLI {
            op: inline(a[0])?,
            slot: s(a[1])?,
            imm: i32::try_from(a[2]).ok()?,
        },
        35 => InlineLL {
            op: inline(a[0])?,
            a: s(a[1])?,
            b: s(a[2])?,
        },
        36 => Inline1L {
            op: inline(a[0])?,
            slot: s(a[1])?,
        },
        37 => Halt,
        38 => PushGlobal(g(a[0])?),
        39 => RestoreTier,
        _ => return None,
    })
}
