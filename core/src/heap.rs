//! The object heap and its mark-sweep collector.
//!
//! Objects live in one vector, stored in fixed-size chunks so that growing
//! it never copies it ([`Chunked`]), and are named by index. Allocation never runs
//! the collector: only the VM decides when to collect, at points where every
//! live value is in a place it can enumerate (its stacks, registers, globals).
//! Primitives may therefore hold values in Rust locals without rooting them.
//!
//! Memory is counted two ways. The heap's own estimate adds each object's
//! size as it is allocated and recomputes the live total at a collection;
//! it decides when to collect. The cap is checked against what the
//! embedder's allocator counts (a [`MemoryMeter`]), when it gives one: that
//! includes what the estimate misses (the spare capacity of growing
//! vectors, the VM's stacks, strings and output being built, the reader's
//! and compiler's structures), so a cap bounds what the host pays. Without
//! a meter the estimate is checked instead.

use std::rc::Rc;

use crate::chunked::Chunked;
use crate::complex::Number;
use crate::number::Num;
use crate::value::code::Template;
use crate::value::{Object, Ref, Value};

const NO_FREE: u32 = u32::MAX;
/// What `Heap::list_pairs` gives for no items: never a slot (a slot is an
/// index into a `Vec`, at most `isize::MAX`).
const NO_PAIRS: Ref = Ref::MAX;

/// Objects the collector marks between two questions whether to stop
/// (a few milliseconds of marking).
const STOP_CHECK_OBJECTS: u32 = 1 << 16;

/// The last collector stamp handed out (see `Heap::collect`).
static MARK_STAMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[derive(Clone)]
pub struct Heap {
    objects: Chunked<Object>,
    marks: Chunked<bool>,
    free_head: u32,
    /// Slots on the free list.
    free_slots: usize,
    /// Bytes held by live objects as of the last collection plus everything
    /// allocated since.
    pub bytes: usize,
    live_after_gc: usize,
    /// The cap for this evaluation (heap plus VM stacks).
    pub cap: usize,
    /// Set when `bytes` passes the point where the VM should collect.
    pub wants_gc: bool,
    gc_threshold: usize,
    /// Stamp of the current marking, compared with templates' own stamps so a
    /// template shared by many closures is traced once per collection.
    mark_stamp: u64,
    pub collections: u64,
    /// The name and arity (least, most) of each primitive, by index: how a
    /// `Value::Prim` prints (`#<procedure car>`) and what
    /// `%procedure-info` says of it. Set once by the VM.
    pub prims: std::rc::Rc<[PrimInfo]>,
    /// Evaluation stamp of each slot: when it was allocated, or first
    /// mutated and saved, during the current evaluation.
    births: Chunked<u32>,
    epoch: u32,
    /// Objects that existed before the current evaluation, as they were
    /// before it first changed them (see `begin_evaluation`).
    journal: Vec<(Ref, Object)>,
    journaling: bool,
    meter: Option<MemoryMeter>,
    /// What the engine's memory has grown to, when it never shrinks
    /// (`Engine::set_memory_footprint`).
    footprint: Option<MemoryMeter>,
}

/// Bytes the embedder's allocator counts as held by the engine's process
/// (or wasm instance), everything included.
pub type MemoryMeter = fn() -> usize;

/// What reallocating a buffer of `old` bytes to `new` bytes costs at its
/// peak beyond what is held: in wasm32 the allocator copies into a fresh
/// buffer, and the instance's memory keeps that high-water mark, so the
/// whole new buffer; elsewhere the system allocator remaps a large buffer
/// in place, so the growth.
pub fn growth_cost(old: usize, new: usize) -> usize {
    if cfg!(target_arch = "wasm32") {
        new
    } else {
        new.saturating_sub(old)
    }
}

/// What [`Object::size`] says of a pair.
const PAIR_BYTES: usize = std::mem::size_of::<Object>();

/// Bytes a heap slot takes: its object, its mark and its evaluation
/// stamp (what a pair costs).
const SLOT_BYTES: usize = std::mem::size_of::<Object>() + std::mem::size_of::<bool>() + 4;

/// A memory cap would be exceeded.
#[derive(Debug)]
pub struct OutOfMemory;

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

/// A primitive's name and arity, as [`Heap::prims`] holds them.
#[derive(Clone, Copy, Debug)]
pub struct PrimInfo {
    pub name: &'static str,
    pub min: u16,
    pub max: Option<u16>,
}

/// What a prepared image records of a heap just collected, besides its
/// objects (`vm::prepared`): with the objects in their slots, a heap
/// restored from it allocates, collects and numbers objects exactly as the
/// one recorded. Its byte counts are not recorded but computed again where
/// it is restored, as the collection computed them: an object's size
/// depends on the target (32 or 64 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapLayout {
    pub free_head: u32,
    pub free_slots: u64,
    pub collections: u64,
    pub epoch: u32,
    /// The evaluation stamp of each slot.
    pub births: Vec<u32>,
}

impl Heap {
    /// The name of primitive `i`, when known.
    pub fn prim_name(&self, i: u32) -> Option<&'static str> {
        self.prims.get(i as usize).map(|p| p.name)
    }

    pub fn new() -> Heap {
        Heap {
            objects: Chunked::default(),
            marks: Chunked::default(),
            free_head: NO_FREE,
            free_slots: 0,
            bytes: 0,
            live_after_gc: 0,
            cap: usize::MAX,
            wants_gc: false,
            gc_threshold: 4 << 20,
            mark_stamp: 0,
            collections: 0,
            prims: std::rc::Rc::from(Vec::new()),
            births: Chunked::default(),
            epoch: 0,
            journal: Vec::new(),
            journaling: false,
            meter: None,
            footprint: None,
        }
    }

    #[inline]
    pub fn alloc(&mut self, obj: Object) -> Value {
        Value::Obj(self.alloc_ref(obj))
    }

    /// `alloc`, giving the new object's slot: a `Ref` comes back from a
    /// call in a register, a `Value` through memory (its two words written
    /// by the callee and read back as one 16-byte load, a stalled store
    /// forwarding at each call; docs/PERFORMANCE.md, "Pairs by slot").
    #[inline]
    pub fn alloc_ref(&mut self, obj: Object) -> Ref {
        self.bytes += obj.size();
        if self.bytes > self.gc_threshold {
            self.wants_gc = true;
        }
        let r = if self.free_head != NO_FREE {
            let r = self.free_head;
            let slot = &mut self.objects[r as usize];
            self.free_head = match *slot {
                Object::Free(n) => {
                    // A free slot owns nothing: written over without the
                    // call that drops an object.
                    std::mem::forget(std::mem::replace(slot, obj));
                    n
                }
                _ => {
                    *slot = obj;
                    NO_FREE
                }
            };
            self.free_slots -= 1;
            self.births[r as usize] = self.epoch;
            Ref::from(r)
        } else {
            self.objects.push(obj);
            self.marks.push(false);
            self.births.push(self.epoch);
            (self.objects.len() - 1) as Ref
        };
        r
    }

    /// Installs the allocator's count the cap is checked against.
    pub fn set_meter(&mut self, meter: Option<MemoryMeter>) {
        self.meter = meter;
    }

    /// What the allocator counts as held, when the embedder gave a meter.
    /// The embedder's meter, when it gave one.
    pub fn meter(&self) -> Option<MemoryMeter> {
        self.meter
    }

    pub fn metered(&self) -> Option<usize> {
        self.meter.map(|m| m())
    }

    /// Installs the count of what the engine's memory has grown to.
    pub fn set_footprint(&mut self, footprint: Option<MemoryMeter>) {
        self.footprint = footprint;
    }

    /// Whether one more buffer of `n` bytes keeps the memory's footprint
    /// (when the embedder counts it) within the cap. The free room inside
    /// the footprint is scattered in holes (old buffers of the vectors
    /// that doubled, freed objects), so a buffer is taken to fit there
    /// only when it is at most half of that room; otherwise the memory
    /// grows by all of it. Without a footprint, always.
    pub fn footprint_allows(&self, n: usize) -> bool {
        let (Some(footprint), Some(meter)) = (self.footprint, self.meter) else {
            return true;
        };
        let size = footprint();
        let free = size.saturating_sub(meter());
        n <= free / 2 || size.saturating_add(n) <= self.cap
    }

    /// Checks that `n` more bytes fit under the cap before a primitive builds
    /// a large object (a huge `make-vector` must fail cleanly, not abort).
    /// With a meter the garbage not yet collected counts too: the VM
    /// collects and tries the primitive once more when it is refused.
    pub fn check_room(&self, n: usize) -> Result<(), OutOfMemory> {
        let held = self.metered().unwrap_or(self.live_after_gc);
        if held.saturating_add(n) > self.cap
            || n > isize::MAX as usize / 8
            || !self.footprint_allows(n)
        {
            Err(OutOfMemory)
        } else {
            Ok(())
        }
    }

    /// Checks that `n` more objects of the size of a pair fit under the
    /// cap, before a primitive makes that many (`make-list`). Unlike
    /// [`Heap::check_room`] the bytes are not one allocation, so no
    /// single-allocation bound applies.
    pub fn check_slots_room(&self, n: usize) -> Result<(), OutOfMemory> {
        let held = self.metered().unwrap_or(self.live_after_gc);
        if held.saturating_add(n.saturating_mul(SLOT_BYTES)) > self.cap {
            Err(OutOfMemory)
        } else {
            Ok(())
        }
    }

    #[inline]
    /// How many slots the heap has, live and free.
    pub fn slot_count(&self) -> usize {
        self.objects.len()
    }

    /// The free list and counters of an idle heap (no evaluation
    /// running, nothing journaled), for a prepared image.
    pub fn layout(&self) -> Result<HeapLayout, String> {
        if self.journaling
            || !self.journal.is_empty()
            || self.marks.iter().any(|m| *m)
            || self.wants_gc
            || self.cap != usize::MAX
        {
            return Err("the heap is not idle and just collected".into());
        }
        Ok(HeapLayout {
            free_head: self.free_head,
            free_slots: self.free_slots as u64,
            collections: self.collections,
            epoch: self.epoch,
            births: self.births.iter().copied().collect(),
        })
    }

    fn live_bytes(&self) -> usize {
        self.objects
            .iter()
            .filter(|o| !matches!(o, Object::Free(_)))
            .map(Object::size)
            .sum()
    }

    /// Puts back the free list and counters of `layout` on a heap whose
    /// slots hold the recorded objects (free slots as `Object::Free` with
    /// their links), and counts its bytes as a collection would. The free
    /// list is checked: every link names a free slot, each once, and
    /// every free slot is on it.
    pub fn restore_layout(&mut self, layout: HeapLayout) -> Result<(), String> {
        let n = self.objects.len();
        if layout.births.len() != n {
            return Err(format!(
                "the heap layout names {} slots, the heap has {n}",
                layout.births.len()
            ));
        }
        let broken = || Err("the free list of the heap is broken".to_string());
        let mut seen = 0u64;
        let mut at = layout.free_head;
        while at != NO_FREE {
            match self.objects.get(at as usize) {
                Some(Object::Free(next)) if seen < layout.free_slots.min(n as u64) => {
                    seen += 1;
                    at = *next;
                }
                _ => return broken(),
            }
        }
        let free = self
            .objects
            .iter()
            .filter(|o| matches!(o, Object::Free(_)))
            .count() as u64;
        if seen != layout.free_slots || free != seen {
            return broken();
        }
        let live = self.live_bytes();
        self.free_head = layout.free_head;
        self.free_slots = free as usize;
        self.bytes = live;
        self.live_after_gc = live;
        self.gc_threshold = (live * 2).max(4 << 20);
        self.wants_gc = false;
        self.collections = layout.collections;
        self.epoch = layout.epoch;
        self.births = layout.births.into_iter().collect();
        self.marks = Chunked::from_elem(false, n);
        Ok(())
    }

    pub fn get(&self, r: Ref) -> &Object {
        &self.objects[r as usize]
    }

    /// A new pair. The common case, a slot on the free list, is inline in
    /// the caller and writes the pair's two values straight into the slot;
    /// `alloc` takes the object by address, and copying it there cost a
    /// stalled load at every pair (docs/PERFORMANCE.md, "Pairs and
    /// flonums").
    #[inline]
    pub fn cons(&mut self, car: Value, cdr: Value) -> Value {
        Value::Obj(self.cons_ref(car, cdr))
    }

    /// `cons`, giving the new pair's slot. Where the pair is made by a call
    /// (not inline), its `Ref` comes back in a register; a `Value` came
    /// back through memory and was read back whole, a stalled load at
    /// every pair (docs/PERFORMANCE.md, "Pairs by slot").
    #[inline]
    pub fn cons_ref(&mut self, car: Value, cdr: Value) -> Ref {
        self.cons_inline(car, cdr)
    }

    /// `cons_ref` onto the pair (or other object) in slot `cdr`: the `cdr`
    /// is written as a known `Value::Obj`, and given to a call in a
    /// register, not through memory.
    #[inline]
    pub fn cons_onto(&mut self, car: Value, cdr: Ref) -> Ref {
        self.cons_inline(car, Value::Obj(cdr))
    }

    /// `cons_ref`, always inline: where a list is built, so that a `cdr`
    /// made as `Value::Obj` of the pair before is written into the slot as
    /// such. Passed to a call it went through memory, as two words read
    /// back whole (a stalled load at every pair).
    #[inline(always)]
    fn cons_inline(&mut self, car: Value, cdr: Value) -> Ref {
        let r = self.free_head;
        if r != NO_FREE {
            let slot = &mut self.objects[r as usize];
            if let Object::Free(next) = *slot {
                std::mem::forget(std::mem::replace(slot, Object::Pair(car, cdr)));
                self.free_head = next;
                self.free_slots -= 1;
                self.births[r as usize] = self.epoch;
                self.bytes += PAIR_BYTES;
                if self.bytes > self.gc_threshold {
                    self.wants_gc = true;
                }
                return Ref::from(r);
            }
        }
        self.alloc_ref(Object::Pair(car, cdr))
    }

    #[inline]
    pub fn pair(&self, v: Value) -> Option<(Value, Value)> {
        match v {
            Value::Obj(r) => match &self.objects[r as usize] {
                Object::Pair(a, d) => Some((*a, *d)),
                _ => None,
            },
            _ => None,
        }
    }

    #[inline]
    pub fn obj(&self, v: Value) -> Option<&Object> {
        match v {
            Value::Obj(r) => Some(&self.objects[r as usize]),
            _ => None,
        }
    }

    /// Mutable access. The first change during an evaluation to an object
    /// that existed before it saves the object, so a failed evaluation can
    /// be undone (`rollback`).
    #[inline]
    pub fn obj_mut(&mut self, v: Value) -> Option<&mut Object> {
        match v {
            Value::Obj(r) => {
                let i = r as usize;
                if self.journaling && self.births[i] != self.epoch {
                    self.save(r);
                }
                Some(&mut self.objects[i])
            }
            _ => None,
        }
    }

    #[cold]
    fn save(&mut self, r: Ref) {
        let copy = self.objects[r as usize].clone();
        self.bytes += copy.size();
        self.journal.push((r, copy));
        self.births[r as usize] = self.epoch;
    }

    /// Starts an evaluation whose changes to existing objects can be undone.
    pub fn begin_evaluation(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.journal.clear();
        self.journaling = true;
    }

    /// Ends the evaluation, keeping its changes.
    pub fn commit_evaluation(&mut self) {
        self.journal.clear();
        self.journal.shrink_to(64);
        self.journaling = false;
    }

    /// Ends the evaluation, putting back every object it changed. Objects it
    /// created become unreachable (nothing older refers to them any more)
    /// and are reclaimed by the next collection.
    pub fn rollback_evaluation(&mut self) {
        for (r, obj) in self.journal.drain(..).rev() {
            self.objects[r as usize] = obj;
        }
        self.journaling = false;
    }

    pub fn list(&mut self, items: &[Value]) -> Value {
        self.list_with_tail(items, Value::Null)
    }

    #[inline]
    pub fn list_with_tail(&mut self, items: &[Value], tail: Value) -> Value {
        self.list_ref(items, tail).map_or(tail, Value::Obj)
    }

    /// The first pair of a list of `items` ending in `tail`, or `None` when
    /// there are no items. Each pair but the last is made with the slot of
    /// the one after it, so its `cdr` is written as a known `Value::Obj`: a
    /// list kept as a `Value` was kept in memory (the slow path takes the
    /// pair by address), written as two words and read back whole for the
    /// next pair, a stalled load at every pair (docs/PERFORMANCE.md, "Pairs
    /// by slot").
    #[inline(always)]
    pub fn list_ref(&mut self, items: &[Value], tail: Value) -> Option<Ref> {
        let r = self.list_pairs(items, tail);
        (r != NO_PAIRS).then_some(r)
    }

    /// `list_ref`'s work, giving `NO_PAIRS` for no items: a plain `Ref`
    /// comes back in a register, where the guest returned an `Option`
    /// through memory, and with it there are four arguments in the guest
    /// (a fifth goes on the stack, written as four bytes and read back as
    /// eight: a stalled load at every call; docs/PERFORMANCE.md, "A
    /// Value's payload as a word").
    #[inline]
    fn list_pairs(&mut self, items: &[Value], tail: Value) -> Ref {
        // The items and the tail read by words: a primitive's arguments
        // were pushed onto the VM's stack just before (`Value::by_words`).
        let Some((last, rest)) = items.split_last() else {
            return NO_PAIRS;
        };
        let mut r = self.cons_inline(Value::by_words(last), Value::by_words(&tail));
        for v in rest.iter().rev() {
            r = self.cons_inline(Value::by_words(v), Value::Obj(r));
        }
        r
    }

    pub fn string(&mut self, s: &str) -> Value {
        self.alloc(Object::Str(s.chars().collect()))
    }

    pub fn slots(&self) -> usize {
        self.objects.len()
    }

    // ---- collection -------------------------------------------------------

    /// Marks from `roots` and the templates in `templates`, then sweeps.
    /// `stop` is asked before anything is done, every `STOP_CHECK_OBJECTS`
    /// objects marked and every chunk of slots swept (a few milliseconds
    /// each): when it says stop, the collection ends there and `collect`
    /// says `false`. A marking stopped is abandoned (its marks cleared,
    /// nothing freed); a sweep stopped keeps what it freed so far and
    /// clears the marks of the slots it did not reach, whose garbage waits
    /// for the next collection, asked for when the heap next allocates
    /// past its threshold.
    pub fn collect<'a>(
        &mut self,
        roots: impl Iterator<Item = Value>,
        templates: impl Iterator<Item = &'a Rc<Template>>,
        stop: &mut dyn FnMut() -> bool,
    ) -> bool {
        // A host that already said stop (a limit that ended the evaluation)
        // does not wait for a collection at all.
        if stop() {
            return self.stopped();
        }
        // Unique in the process, not per heap: engines made from one
        // prepared image share its templates (`Vm::fresh_copy`), and a
        // stamp another heap left on one must never read as this marking's.
        self.mark_stamp = MARK_STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let mut stack: Vec<Ref> = Vec::new();
        // Templates are stamped when first pushed, so each is on this
        // stack at most once: the frames of ten thousand captured
        // continuations name the same few templates millions of times.
        let stamp = self.mark_stamp;
        let mut tstack: Vec<Rc<Template>> = Vec::new();
        let note = |tstack: &mut Vec<Rc<Template>>, t: &Rc<Template>| {
            if t.gc_stamp.get() != stamp {
                t.gc_stamp.set(stamp);
                tstack.push(t.clone());
            }
        };
        for v in roots {
            self.push_value(v, &mut stack);
        }
        // Saved objects keep what they referred to alive: a rollback may
        // make it reachable again.
        let saved: Vec<Value> = self
            .journal
            .iter()
            .flat_map(|(r, o)| {
                let mut kids = vec![Value::Obj(*r)];
                kids.extend(children(o, &mut |t| note(&mut tstack, t)));
                kids
            })
            .collect();
        for v in saved {
            self.push_value(v, &mut stack);
        }
        for t in templates {
            note(&mut tstack, t);
        }
        let mut until_check = STOP_CHECK_OBJECTS;
        loop {
            if let Some(r) = stack.pop() {
                until_check -= 1;
                if until_check == 0 {
                    until_check = STOP_CHECK_OBJECTS;
                    if stop() {
                        // Templates keep this marking's stamp: the next
                        // marking has another.
                        self.marks.fill(false);
                        return self.stopped();
                    }
                }
                let kids = children(&self.objects[r as usize], &mut |t| note(&mut tstack, t));
                for v in kids {
                    self.push_value(v, &mut stack);
                }
            } else if let Some(t) = tstack.pop() {
                for &c in t.consts.iter() {
                    self.push_value(c, &mut stack);
                }
                for child in t.children.iter() {
                    note(&mut tstack, child);
                }
            } else {
                break;
            }
        }
        if !self.sweep(stop) {
            return false;
        }
        self.collections += 1;
        true
    }

    /// A collection the host stopped is not asked for again until the heap
    /// allocates past its threshold once more: the evaluation it stopped
    /// ends, and the next one collects when it needs room, not at the end
    /// of an evaluation that allocated nothing (the collection after an
    /// evaluation is for its own garbage). Always `false`.
    fn stopped(&mut self) -> bool {
        self.wants_gc = false;
        false
    }

    #[inline]
    fn push_value(&mut self, v: Value, stack: &mut Vec<Ref>) {
        if let Value::Obj(r) = v {
            let m = &mut self.marks[r as usize];
            if !*m {
                *m = true;
                stack.push(r);
            }
        }
    }

    /// Frees the unmarked slots, from the end, a chunk at a time, asking
    /// `stop` before each chunk. `false` when it stopped:
    /// what it swept is freed (slots past the last live one given back),
    /// the marks of the rest are cleared and its garbage stays, and the
    /// byte counts are left as they were (an overestimate, so the next
    /// evaluation collects again).
    fn sweep(&mut self, stop: &mut dyn FnMut() -> bool) -> bool {
        let mut live = 0usize;
        let mut free_head = NO_FREE;
        let mut free_slots = 0;
        // Sweep from the end so the free list hands out low slots first,
        // which keeps the vector's used part compact. Free slots after the
        // last live one are given back (whole chunks freed) so a burst of
        // garbage does not pin memory: `end` is one past the last live
        // slot, and the free list starts again there. Those slots are
        // not linked (their objects are dropped once, by the truncation).
        let mut end = None;
        let mut at = self.objects.len();
        let mut stopped = false;
        let chunks = self
            .objects
            .chunks_mut()
            .rev()
            .zip(self.marks.chunks_mut().rev());
        for (objects, marks) in chunks {
            if stopped {
                marks.fill(false);
                continue;
            }
            if stop() {
                stopped = true;
                // Everything swept so far was garbage: it is given back.
                if end.is_none() {
                    end = Some(at);
                }
                marks.fill(false);
                continue;
            }
            at -= objects.len();
            for (j, (o, m)) in objects.iter_mut().zip(marks.iter_mut()).enumerate().rev() {
                if *m {
                    *m = false;
                    live += o.size();
                    if end.is_none() {
                        end = Some(at + j + 1);
                    }
                } else if end.is_some() {
                    match o {
                        // Nothing to drop: no call to drop them.
                        Object::Pair(..) | Object::Box(_) | Object::Free(_) => {
                            std::mem::forget(std::mem::replace(o, Object::Free(free_head)))
                        }
                        _ => *o = Object::Free(free_head),
                    }
                    free_head = (at + j) as u32;
                    free_slots += 1;
                }
            }
        }
        let end = end.unwrap_or(0);
        self.objects.truncate(end);
        self.marks.truncate(end);
        self.births.truncate(end);
        self.free_head = free_head;
        self.free_slots = free_slots;
        if stopped {
            return self.stopped();
        }
        self.bytes = live;
        self.live_after_gc = live;
        // Twice what lives, but not past the cap (plus a sixty-fourth of it,
        // so a program living near the cap does not collect at every
        // allocation): the VM checks the cap when the heap asks for a
        // collection, and between its periodic polls a program can
        // allocate far more than the cap (4096 captures of a deep stack).
        self.gc_threshold = (live * 2)
            .max(4 << 20)
            .min(self.cap.max(live + self.cap / 64));
        self.wants_gc = false;
        true
    }
}

/// The values an object refers to; templates it holds are given to
/// `template`.
pub(crate) fn children(obj: &Object, template: &mut dyn FnMut(&Rc<Template>)) -> Vec<Value> {
    let mut kids: Vec<Value> = Vec::new();
    match obj {
        Object::Pair(a, d) => {
            kids.push(*a);
            kids.push(*d);
        }
        Object::Vector(v) | Object::Values(v) | Object::CaseLambda(v) => kids.extend_from_slice(v),
        Object::Closure(c) => {
            kids.extend_from_slice(&c.free);
            template(&c.template);
        }
        Object::Box(v) => kids.push(*v),
        Object::Continuation(k) => {
            kids.extend_from_slice(&k.stack);
            kids.push(k.winders);
            kids.push(k.handlers);
            for f in &k.frames {
                kids.push(f.closure);
                template(&f.template);
            }
        }
        Object::Escape(e) => {
            kids.push(e.winders);
            kids.push(e.handlers);
        }
        Object::Record(t, f) => {
            kids.push(*t);
            kids.extend_from_slice(f);
        }
        Object::Promise { value, .. } | Object::Environment(value) => kids.push(*value),
        Object::Parameter { value, converter } => {
            kids.push(*value);
            kids.push(*converter);
        }
        Object::Error(e) => {
            kids.push(e.message);
            kids.push(e.irritants);
        }
        Object::HashTable(t) => {
            kids.push(t.equiv);
            kids.push(t.hash);
            kids.extend_from_slice(t.keys());
            kids.extend_from_slice(t.values());
        }
        Object::Free(_)
        | Object::Str(_)
        | Object::Bytevector(_)
        | Object::Big(_)
        | Object::Rat(_)
        | Object::Complex(_)
        | Object::RecordType(_)
        | Object::Port(_) => {}
    }
    kids
}

/// Numbers as values: small integers and flonums are immediate, bignums and
/// rationals live on the heap. (Here rather than in `number`, which is the
/// numeric tower alone and knows nothing of values.)
impl Num {
    pub fn from_value(heap: &Heap, v: Value) -> Option<Num> {
        match v {
            Value::Int(i) => Some(Num::Int(i)),
            Value::Float(f) => Some(Num::Float(f)),
            Value::Obj(r) => match heap.get(r) {
                Object::Big(b) => Some(Num::Big(b.clone())),
                Object::Rat(q) => Some(Num::Rat((**q).clone())),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn into_value(self, heap: &mut Heap) -> Value {
        match self.normalize() {
            Num::Int(i) => Value::Int(i),
            Num::Float(f) => Value::Float(f),
            Num::Big(b) => heap.alloc(Object::Big(b)),
            Num::Rat(q) => heap.alloc(Object::Rat(Box::new(q))),
        }
    }
}

impl Number {
    /// Any number, real or not.
    pub fn from_value(heap: &Heap, v: Value) -> Option<Number> {
        match heap.obj(v) {
            Some(Object::Complex(z)) => Some(Number::Complex(z.clone())),
            _ => Num::from_value(heap, v).map(Number::Real),
        }
    }

    pub fn into_value(self, heap: &mut Heap) -> Value {
        match self {
            Number::Real(r) => r.into_value(heap),
            Number::Complex(z) => heap.alloc(Object::Complex(z)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair from a new slot and one from the free list: the same bytes
    /// counted as `Object::size` says, the freed slot taken again, and
    /// the pair's values as given.
    #[test]
    fn pairs_from_the_free_list_are_counted_and_hold_their_values() {
        let mut h = Heap::new();
        let garbage = h.cons(Value::Int(1), Value::Null);
        let kept = h.cons(Value::Int(2), Value::Null);
        assert_eq!(h.bytes, 2 * Object::Pair(Value::Null, Value::Null).size());
        assert!(h.collect([kept].into_iter(), std::iter::empty(), &mut || false));
        assert_eq!(h.bytes, PAIR_BYTES);
        let again = h.cons(Value::Int(3), kept);
        assert!(again.eq(garbage), "the freed slot is taken first");
        assert_eq!(h.bytes, 2 * PAIR_BYTES);
        let (a, d) = h.pair(again).expect("a pair");
        assert!(matches!(a, Value::Int(3)) && d.eq(kept));
        let (a, d) = h.pair(kept).expect("a pair");
        assert!(matches!((a, d), (Value::Int(2), Value::Null)));
        // The free list is empty now: the next pair takes a new slot.
        let fresh = h.cons(Value::Null, Value::Null);
        assert!(!fresh.eq(garbage) && !fresh.eq(kept));
        assert_eq!(h.slots(), 3);
    }
}
