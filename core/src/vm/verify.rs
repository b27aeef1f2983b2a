//! Checks code that did not come from this engine's compiler (a loaded
//! dump) before the VM runs it, so forged code is refused at load instead
//! of indexing outside the stack.
//!
//! The VM trusts its compiler: `Local(s)` reads `stack[fp + s]` unchecked
//! against the frame, `Call(n)` finds its callee `n + 1` slots down, and so
//! on. [`depths`] computes, for each instruction of a template, how many
//! values its frame holds above `fp` when the instruction starts (the
//! *depth*), and refuses code where an operand reaches past it, the code
//! runs off its end, or a jump goes backwards (the compiler only jumps
//! forwards, so every loop is a call and counts against the step budget).
//!
//! **Invariant: while a verified template runs, its frame holds at least
//! the verified depth.** Every instruction changes the frame and the
//! verified depth by the same amount, and where two paths meet the
//! smaller depth is kept, so the invariant holds at every instruction if
//! it holds on entry; on entry it holds because a call checks the arity.
//! [`check_frames`] checks it for each frame of a loaded continuation.

use crate::value::code::{Frame, Op, Template};

/// The depth each instruction starts with (`None`: no path reaches it).
pub(crate) fn depths(t: &Template) -> Result<Vec<Option<u32>>, String> {
    let n = t.code.len();
    let mut at: Vec<Option<u32>> = vec![None; n];
    if n == 0 {
        return Err("a template with no code".into());
    }
    at[0] = Some(u32::from(t.nparams) + u32::from(t.rest));
    for pc in 0..n {
        let Some(d) = at[pc] else { continue };
        let op = t.code[pc];
        let fail = |why: String| Err(format!("instruction {pc} ({op:?}): {why}"));
        let slot = |s: u16| -> Result<(), String> {
            if u32::from(s) < d {
                Ok(())
            } else {
                Err(format!(
                    "instruction {pc} ({op:?}): slot {s} of a frame of {d}"
                ))
            }
        };
        let free = |i: u16| -> Result<(), String> {
            if i < t.nfree {
                Ok(())
            } else {
                Err(format!(
                    "instruction {pc} ({op:?}): free slot {i} of {}",
                    t.nfree
                ))
            }
        };
        let pop = |k: u32| -> Result<u32, String> {
            d.checked_sub(k).ok_or_else(|| {
                format!("instruction {pc} ({op:?}): takes {k} values from a frame of {d}")
            })
        };
        // The depth after the instruction, if control goes on to pc + 1.
        // A fused instruction (`code::fuse`) runs as its first, then the
        // one after it: it is checked as the first.
        let next: Option<u32> = match op {
            Op::Const(_)
            | Op::Fixnum(_)
            | Op::Nil
            | Op::True
            | Op::False
            | Op::Unspecified
            | Op::Global(_)
            | Op::SetGlobal(_)
            | Op::DefineGlobal(_)
            | Op::RestoreTier => Some(d),
            Op::Local(s)
            | Op::ReturnLocal(s)
            | Op::LocalChecked(s, _)
            | Op::SetLocal(s)
            | Op::LocalBox(s)
            | Op::LocalBoxChecked(s, _)
            | Op::SetLocalBox(s)
            | Op::BoxLocal(s) => {
                slot(s)?;
                Some(d)
            }
            Op::Free(i)
            | Op::FreeChecked(i, _)
            | Op::FreeBox(i)
            | Op::FreeBoxChecked(i, _)
            | Op::SetFreeBox(i) => {
                free(i)?;
                Some(d)
            }
            Op::Push | Op::PushConst(_) | Op::PushGlobal(_) => Some(d + 1),
            Op::PushLocal(s) => {
                slot(s)?;
                Some(d + 1)
            }
            Op::Drop(k) => Some(pop(u32::from(k))?),
            Op::MakeCaseLambda(k) => Some(pop(u32::from(k))?),
            Op::MakeClosure(c) => {
                let child = t.children.get(c as usize).ok_or("no such child")?;
                Some(pop(u32::from(child.nfree))?)
            }
            Op::PatchFree { closure, value, .. } => {
                slot(closure)?;
                slot(value)?;
                Some(d)
            }
            Op::Call(k) => Some(pop(u32::from(k) + 1)?),
            Op::TailCall(k) => {
                pop(u32::from(k) + 1)?;
                None
            }
            Op::Return | Op::Halt => None,
            Op::Inline(iop) | Op::Test(iop) => Some(pop(iop.arity() as u32 - 1)?),
            Op::InlineLI {
                op: iop, slot: s, ..
            }
            | Op::TestLI {
                op: iop, slot: s, ..
            }
            | Op::PushLI {
                op: iop, slot: s, ..
            } => {
                if iop.arity() != 2 {
                    return fail("a unary operation with two operands".into());
                }
                slot(s)?;
                Some(d)
            }
            Op::InlineLL { op: iop, a, b } | Op::TestLL { op: iop, a, b } => {
                if iop.arity() != 2 {
                    return fail("a unary operation with two operands".into());
                }
                slot(a)?;
                slot(b)?;
                Some(d)
            }
            Op::Inline1L { op: iop, slot: s } | Op::Test1L { op: iop, slot: s } => {
                if iop.arity() != 1 {
                    return fail("a binary operation with one operand".into());
                }
                slot(s)?;
                Some(d)
            }
            Op::Jump(target) | Op::JumpIfFalse(target) => {
                let target = target as usize;
                if target <= pc || target >= n {
                    return fail("a jump that is not forwards within the code".into());
                }
                meet(&mut at[target], d);
                matches!(op, Op::JumpIfFalse(_)).then_some(d)
            }
        };
        if let Some(after) = next {
            if pc + 1 >= n {
                return fail("the code runs past its end".into());
            }
            meet(&mut at[pc + 1], after);
        }
    }
    Ok(at)
}

/// Two paths meet: the smaller depth holds on both.
fn meet(slot: &mut Option<u32>, d: u32) {
    *slot = Some(slot.map_or(d, |e| e.min(d)));
}

/// Checks the frames of a continuation against its stack of `stack_len`
/// values: each frame resumes where its template has a verified depth,
/// and holds at least that depth below the frame above it (the top frame:
/// below the end of the stack). `depths_of` gives a template's depths.
pub(crate) fn check_frames(
    frames: &[Frame],
    stack_len: usize,
    mut depths_of: impl FnMut(&Template) -> Result<Vec<Option<u32>>, String>,
) -> Result<(), String> {
    for (i, f) in frames.iter().enumerate() {
        let depths = depths_of(&f.template)?;
        let Some(Some(d)) = depths.get(f.pc as usize) else {
            return Err(format!(
                "frame {i} resumes at instruction {} of code no path reaches",
                f.pc
            ));
        };
        // `Halt` reads nothing: the bottom frame of every run resumes at
        // it with its callee slot only (the top-level code shares its fp).
        if matches!(f.template.code.get(f.pc as usize), Some(Op::Halt)) {
            continue;
        }
        // The frame's values end where the next frame's callee slot is.
        let end = match frames.get(i + 1) {
            Some(up) => (up.fp as usize).checked_sub(1),
            None => Some(stack_len),
        };
        let needed = f.fp as usize + *d as usize;
        if f.fp == 0 || end.is_none_or(|end| end < needed) {
            return Err(format!(
                "frame {i} holds fewer values than its code uses ({d} from slot {})",
                f.fp
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::code::Inline;

    fn template(nparams: u16, code: Vec<Op>) -> Template {
        let t = Template::internal(code);
        let mut t = std::rc::Rc::try_unwrap(t).ok().unwrap();
        t.nparams = nparams;
        t
    }

    #[test]
    fn compiled_shapes_verify_with_their_depths() {
        // (lambda (x) (let ((y 1)) (if x (f y) y)))
        let t = template(
            1,
            vec![
                Op::Fixnum(1),
                Op::Push,
                Op::Local(0),
                Op::JumpIfFalse(8),
                Op::PushGlobal(0),
                Op::PushLocal(1),
                Op::Call(1),
                Op::Jump(9),
                Op::Local(1),
                Op::Drop(1),
                Op::Return,
            ],
        );
        let d = depths(&t).unwrap();
        assert_eq!(d[0], Some(1));
        assert_eq!(d[2], Some(2));
        assert_eq!(d[6], Some(4));
        assert_eq!(d[7], Some(2));
        assert_eq!(d[9], Some(2));
        assert_eq!(d[10], Some(1));
    }

    #[test]
    fn forged_shapes_are_refused_with_the_instruction() {
        let refuse = |code: Vec<Op>, why: &str| {
            let e = depths(&template(1, code)).unwrap_err();
            assert!(e.contains(why), "{e}");
        };
        refuse(vec![Op::Local(1), Op::Return], "slot 1 of a frame of 1");
        refuse(vec![Op::Drop(2), Op::Return], "takes 2 values");
        refuse(vec![Op::Call(1), Op::Return], "takes 2 values");
        refuse(vec![Op::Nil], "runs past its end");
        refuse(vec![Op::Nil, Op::Jump(0), Op::Return], "not forwards");
        refuse(vec![Op::Free(0), Op::Return], "free slot 0 of 0");
        refuse(
            vec![
                Op::Inline1L {
                    op: Inline::Add,
                    slot: 0,
                },
                Op::Return,
            ],
            "a binary operation",
        );
        refuse(
            vec![Op::Drop(1), Op::Inline(Inline::Cons), Op::Return],
            "takes 1 values from a frame of 0",
        );
    }

    #[test]
    fn paths_that_meet_keep_the_smaller_depth() {
        let t = template(
            0,
            vec![
                Op::True,
                Op::JumpIfFalse(3),
                Op::Push,
                Op::Local(0),
                Op::Return,
            ],
        );
        let e = depths(&t).unwrap_err();
        assert!(e.contains("instruction 3"), "{e}");
    }
}
